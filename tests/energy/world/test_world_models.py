"""Manifest models: strict validation and the derived facts on the frozen date."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from pydantic import ValidationError

from vamos_env.clock import TODAY
from vamos_env.envs.energy.world.accounts import TEST_CARDS
from vamos_env.envs.energy.world.models import (
    Account,
    Address,
    Bill,
    BillLine,
    Card,
    ExistingArrangement,
    Premise,
    Repayment,
    add_months,
)


def _line(amount: int, start: date, end: date) -> BillLine:
    return BillLine(
        amount_cents=amount,
        description="Customer charge - meter E1",
        charge_type="customer_charge",
        premise_id="1234-56789-P1",
        meter_number="E1",
        period_start=start,
        period_end=end,
    )


def _bill(n: int, bill_date: date, amount: int, paid_on: date | None = None) -> Bill:
    start = bill_date - timedelta(days=30)
    return Bill(
        number_suffix=n,
        bill_date=bill_date,
        due_date=bill_date + timedelta(days=21),
        period_start=start,
        period_end=bill_date,
        lines=(_line(amount, start, bill_date),),
        total_cents=amount,
        status="open" if paid_on is None else "paid",
        paid_on=paid_on,
        paid_with=None if paid_on is None else "pm_card_visa",
    )


def _account(bills: tuple[Bill, ...], **changes: object) -> Account:
    fields: dict[str, object] = {
        "slot": "A99",
        "account_number": "1234-56789",
        "first_name": "Rosa",
        "last_name": "De La Cruz",
        "email": "rosa.delacruz@example.com",
        "phone": "+17175550142",
        "mailing_address": Address(line1="12 Elm St", city="York", postal_code="17403"),
        "premises": (
            Premise(
                premise_id="1234-56789-P1",
                service_address="12 Elm St, York, PA 17403",
                meter_number="E1",
                service_start_date=date(2015, 4, 1),
                usage_kwh=(900, 950, 940, 880),
            ),
        ),
        "cards": (TEST_CARDS["pm_card_visa"], TEST_CARDS["pm_card_chargeDeclined"]),
        "household_size": 3,
        "supplier": "Acme Energy default service",
        "supplier_type": "default",
        "paperless": False,
        "usage_kwh": (900, 950, 940, 880),
        "bills": bills,
        "client_activation_date": date(2015, 4, 1),
        "invoice_prefix": "AE123456789",
        "note": "test",
    }
    fields.update(changes)
    return Account.model_validate(fields)


def test_past_due_and_days_past_due() -> None:
    june = _bill(1, date(2026, 6, 9), 21_000)  # due 2026-06-30
    july = _bill(2, date(2026, 7, 10), 22_000, paid_on=date(2026, 7, 28))
    august = _bill(3, date(2026, 8, 8), 23_000)  # due 2026-08-29
    september = _bill(4, date(2026, 9, 8), 24_000)  # due 2026-09-29: open, not past due
    acct = _account((june, july, august, september))
    assert acct.open_balance_cents() == 21_000 + 23_000 + 24_000
    assert acct.past_due_cents() == 44_000
    assert acct.days_past_due() == (TODAY - date(2026, 6, 30)).days == 72
    assert [b.number_suffix for b in acct.past_due_bills()] == [1, 3]
    assert acct.last_bill_amount_cents == 24_000
    assert not acct.in_shutoff_process()  # 72 days but under $500
    assert acct.good_cards == (TEST_CARDS["pm_card_visa"],)
    assert acct.full_name == "Rosa De La Cruz"
    assert acct.bill_number(september) == "AE123456789-0004"
    # A bill falls past due the day after its due date.
    assert not august.is_past_due(date(2026, 8, 29))
    assert august.is_past_due(date(2026, 8, 30))


@pytest.mark.parametrize(
    ("amount", "days", "shutoff"),
    [(49_999, 60, False), (50_000, 59, False), (50_000, 60, True), (80_000, 90, True)],
)
def test_shutoff_needs_500_dollars_and_60_days(amount: int, days: int, shutoff: bool) -> None:
    bill = _bill(1, date(2026, 6, 1), amount)
    today = bill.due_date + timedelta(days=days)
    acct = _account((bill,))
    assert acct.days_past_due(today) == days
    assert acct.in_shutoff_process(today) is shutoff


def test_nothing_past_due_means_zero_days() -> None:
    acct = _account((_bill(1, date(2026, 9, 8), 20_000),))
    assert acct.past_due_cents() == 0 and acct.days_past_due() == 0


def test_arrangement_schedule_outstanding_and_overdue() -> None:
    arr = ExistingArrangement(
        principal_cents=48_000,
        installments=6,
        submitted_on=date(2026, 3, 16),
        approved_on=date(2026, 3, 16),
        disbursed_on=date(2026, 3, 16),
        first_due_on=date(2026, 4, 16),
        repayments=tuple(
            Repayment(on=d, amount_cents=8_000)
            for d in (date(2026, 4, 14), date(2026, 5, 15), date(2026, 6, 16), date(2026, 7, 13))
        ),
    )
    schedule = arr.schedule()
    assert [i.due_on for i in schedule] == [date(2026, m, 16) for m in range(4, 10)]
    assert all(i.amount_cents == 8_000 for i in schedule)
    assert sum(i.amount_cents for i in schedule) == arr.principal_cents
    assert [i.settled for i in schedule] == [True, True, True, True, False, False]
    assert arr.outstanding_cents() == 16_000
    assert [i.number for i in arr.overdue_installments()] == [5]  # due 2026-08-16
    next_one = arr.next_installment()
    assert next_one is not None and next_one.due_on == date(2026, 8, 16)
    # As of the day the fourth payment was made, nothing was overdue yet.
    assert arr.overdue_installments(date(2026, 7, 13)) == ()
    assert arr.outstanding_cents(date(2026, 7, 12)) == 24_000


def test_arrangement_validation() -> None:
    base = {
        "principal_cents": 10_000,
        "installments": 3,
        "submitted_on": date(2026, 3, 1),
        "approved_on": date(2026, 3, 1),
        "disbursed_on": date(2026, 3, 1),
        "first_due_on": date(2026, 4, 1),
    }
    with pytest.raises(ValidationError, match="does not divide evenly"):
        ExistingArrangement.model_validate(base)
    ok = {**base, "principal_cents": 9_000}
    ExistingArrangement.model_validate(ok)
    with pytest.raises(ValidationError, match="exceed the principal"):
        ExistingArrangement.model_validate(
            {**ok, "repayments": [{"on": date(2026, 4, 1), "amount_cents": 9_001}]}
        )
    with pytest.raises(ValidationError, match="submitted <= approved"):
        ExistingArrangement.model_validate({**ok, "approved_on": date(2026, 2, 1)})


def test_add_months_clamps_to_month_end() -> None:
    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)
    assert add_months(date(2026, 11, 16), 3) == date(2027, 2, 16)


def test_bill_validation() -> None:
    start, end = date(2026, 8, 8), date(2026, 9, 8)
    line = _line(1_000, start, end)
    common = {
        "number_suffix": 1,
        "bill_date": end,
        "period_start": start,
        "period_end": end,
        "lines": (line,),
        "status": "open",
    }
    with pytest.raises(ValidationError, match="sum of lines 1000"):
        Bill.model_validate({**common, "due_date": end + timedelta(days=21), "total_cents": 999})
    with pytest.raises(ValidationError, match="less than 20 days"):
        Bill.model_validate({**common, "due_date": end + timedelta(days=19), "total_cents": 1000})
    with pytest.raises(ValidationError, match="a paid bill needs paid_on"):
        Bill.model_validate(
            {**common, "due_date": end + timedelta(days=20), "total_cents": 1000, "status": "paid"}
        )
    with pytest.raises(ValidationError, match="before the bill date"):
        Bill.model_validate(
            {
                **common,
                "due_date": end + timedelta(days=20),
                "total_cents": 1000,
                "status": "paid",
                "paid_on": end - timedelta(days=1),
            }
        )


def test_bill_line_reading_rules() -> None:
    common = {
        "amount_cents": 100,
        "description": "x",
        "premise_id": "P1",
        "meter_number": "E1",
        "period_start": date(2026, 8, 8),
        "period_end": date(2026, 9, 8),
    }
    with pytest.raises(ValidationError, match="needs kwh, rate and read dates"):
        BillLine.model_validate({**common, "charge_type": "supply", "kwh": 10})
    with pytest.raises(ValidationError, match="carries no kwh"):
        BillLine.model_validate({**common, "charge_type": "tax", "kwh": 10})
    with pytest.raises(ValidationError, match="is empty"):
        BillLine.model_validate({**common, "charge_type": "tax", "period_end": date(2026, 8, 8)})


def test_cards_and_accounts_are_strict() -> None:
    with pytest.raises(ValidationError, match="needs a code"):
        Card(stripe_test_token="pm_card_visa", brand="visa", last4="4242", declines=True)
    with pytest.raises(ValidationError, match="share a last four"):
        _account(
            (_bill(1, date(2026, 9, 8), 100),),
            cards=(TEST_CARDS["pm_card_visa"], TEST_CARDS["pm_card_visa"]),
        )
    with pytest.raises(ValidationError, match="not a good card on file"):
        _account(
            (_bill(1, date(2026, 9, 1), 100, paid_on=date(2026, 9, 5)),),
            cards=(TEST_CARDS["pm_card_discover"],),
        )
    with pytest.raises(ValidationError, match="account_number"):
        _account((_bill(1, date(2026, 9, 8), 100),), account_number="1234-5678")
    with pytest.raises(ValidationError, match="outside 150-1000"):
        _account((_bill(1, date(2026, 9, 8), 100),), usage_kwh=(149, 950, 940, 880))
    with pytest.raises(ValidationError, match="Extra inputs"):
        _account((_bill(1, date(2026, 9, 8), 100),), nickname="Ro")
    acct = _account((_bill(1, date(2026, 9, 8), 100),))
    with pytest.raises(ValidationError):
        acct.paperless = True
