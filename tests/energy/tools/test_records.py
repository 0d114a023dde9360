"""Reading the services' records: bill and arrangement views at their boundaries."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from vamos_env.clock import TODAY
from vamos_env.envs.energy.policy import BillFacts
from vamos_env.envs.energy.tools.records import Arrangement, Bill, dollars_to_cents


def _bill(due: date, status: str = "open", remaining: int = 1000) -> Bill:
    facts = BillFacts(
        bill_id="in_x",
        total_cents=1000,
        lines=(),
        due_date=due,
        status=status,  # type: ignore[arg-type]
        bill_date=due - timedelta(days=21),
        amount_remaining_cents=remaining,
    )
    return Bill({"id": "in_x", "number": "X-0001"}, (), facts)


def test_a_bill_due_today_is_not_past_due() -> None:
    assert not _bill(TODAY).is_past_due(TODAY)
    assert _bill(TODAY - timedelta(days=1)).is_past_due(TODAY)
    assert not _bill(TODAY - timedelta(days=1), status="paid", remaining=0).is_past_due(TODAY)
    assert not _bill(TODAY - timedelta(days=1), remaining=0).is_past_due(TODAY)


@pytest.mark.parametrize(
    ("value", "cents"),
    [(658.41, 65841), (0.1, 10), (100, 10000), ("73.29", 7329), (None, 0), (0.005, 1)],
)
def test_dollars_to_cents_is_exact(value: object, cents: int) -> None:
    assert dollars_to_cents(value) == cents


def _period(n: int, due: date, amount: float, paid: float) -> dict[str, object]:
    return {
        "period": n,
        "dueDate": [due.year, due.month, due.day],
        "totalDueForPeriod": amount,
        "totalPaidForPeriod": paid,
        "totalOutstandingForPeriod": round(amount - paid, 2),
    }


def test_arrangement_view_from_a_loan() -> None:
    loan = {
        "id": 7,
        "status": {"id": 300, "value": "Active", "active": True},
        "summary": {"principalDisbursed": 300.0, "totalOutstanding": 250.0, "totalRepayment": 50.0},
        "repaymentSchedule": {
            "periods": [
                {"dueDate": [2026, 7, 10], "principalDisbursed": 300.0},  # disbursement row
                _period(1, date(2026, 8, 10), 100.0, 50.0),
                _period(2, TODAY, 100.0, 0.0),  # due today: not overdue
                _period(3, date(2026, 10, 10), 100.0, 0.0),
            ]
        },
        "transactions": [
            {"id": 1, "type": {"disbursement": True}, "date": [2026, 7, 10], "amount": 300.0},
            {"id": 2, "type": {"repayment": True}, "date": [2026, 8, 1], "amount": 50.0},
            {
                "id": 3,
                "type": {"repayment": True},
                "date": [2026, 8, 2],
                "amount": 9.0,
                "manuallyReversed": True,
            },
        ],
    }
    view = Arrangement.from_loan(loan).as_result(TODAY)
    assert view["active"] is True
    assert view["original_amount_cents"] == 30000
    assert view["outstanding_cents"] == 25000
    assert [i["number"] for i in view["installments"]] == [1, 2, 3]
    assert view["overdue_count"] == 1
    assert view["overdue_cents"] == 5000
    assert view["unsettled_count"] == 3
    assert view["next_installment"]["number"] == 1  # the oldest unsettled, overdue
    assert view["repayments"] == [
        {"transaction_id": "2", "date": "2026-08-01", "amount_cents": 5000}
    ]
    assert "1 instalment is overdue" in view["say"]
    closed = Arrangement.from_loan({**loan, "status": {"id": 600, "value": "Closed"}})
    assert closed.active is False
