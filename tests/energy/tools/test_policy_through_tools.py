"""Policy boundaries reached through the tools, on the seeded accounts that sit at them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest

from vamos_env.clients.billing import in_process_stripe_client
from vamos_env.clients.fineract import FineractClient
from vamos_env.clients.services import ServiceClients
from vamos_env.clock import TODAY
from vamos_env.envs.energy.policy import down_payment_cents, quote_arrangement
from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.world import Account, Manifest
from vamos_env.twins.snapshot import Twins


@pytest.fixture
def on_slot(
    verified: Callable[[str], CallSession], manifest: Manifest
) -> Callable[[str], tuple[CallSession, Account]]:
    def open_call(slot: str) -> tuple[CallSession, Account]:
        account = manifest.by_slot(slot)
        return verified(account.account_number), account

    return open_call


def _open_bill_id(report: SeedReport, account: Account) -> str:
    bill = next(b for b in reversed(account.bills) if b.status == "open")
    return report.accounts[account.account_number].invoices[bill.number_suffix]


@pytest.mark.parametrize(
    ("slot", "installments", "kind", "reason"),
    [
        ("A04", 1, "refused", "too_few_installments"),
        ("A04", 2, "quote", "eligible"),
        ("A04", 36, "quote", "eligible"),  # 220% FPL: up to 36
        ("A04", 37, "refused", "too_many_installments"),
        ("A10", 6, "quote", "eligible"),  # income unknown: up to 6
        ("A10", 7, "refused", "too_many_installments"),
        ("A23", 60, "quote", "eligible"),  # exactly 150% FPL: up to 60
        ("A20", 12, "quote", "eligible"),  # exactly 300% FPL: up to 12
        ("A20", 13, "refused", "too_many_installments"),
        ("A03", 3, "refused", "below_minimum"),  # $47.59 past due
        ("A07", 3, "transfer", "shutoff_process"),
        ("A17", 3, "refused", "arrangement_active"),
        ("A11", 3, "quote_then_transfer", "down_payment_required"),  # default within 12 months
        ("A12", 3, "quote", "eligible"),  # default more than 12 months ago
    ],
)
def test_quote_boundaries(
    on_slot: Callable[[str], tuple[CallSession, Account]],
    facts_of: Callable[..., Any],
    slot: str,
    installments: int,
    kind: str,
    reason: str,
) -> None:
    session, account = on_slot(slot)
    quote = session.call("quote_payment_arrangement", {"installments": installments})
    assert (quote["kind"], quote["reason"]) == (kind, reason)
    assert quote == {**quote, **_expected_quote_fields(facts_of(account), installments)}
    if kind == "quote_then_transfer":
        assert quote["down_payment_cents"] == down_payment_cents(account.past_due_cents())
        assert quote["financed_cents"] == account.past_due_cents() - quote["down_payment_cents"]
    assert session.writes() == []


def _expected_quote_fields(facts: Any, installments: int) -> dict[str, Any]:
    expected = quote_arrangement(facts, installments)
    return {
        "allowed": expected.allowed,
        "first_installment_cents": expected.first_installment_cents,
        "monthly_installment_cents": expected.monthly_installment_cents,
        "max_installments": expected.max_installments,
    }


@pytest.mark.parametrize(
    ("slot", "words"),
    [
        ("A03", "needs at least $50.00 past due"),
        ("A07", "transfer"),
        ("A17", "already have an active payment arrangement"),
        ("A11", "cannot collect a down payment"),
        ("A01", "needs at least $50.00 past due"),
    ],
)
def test_create_is_refused_unless_the_quote_is_plain(
    on_slot: Callable[[str], tuple[CallSession, Account]], slot: str, words: str
) -> None:
    session, _ = on_slot(slot)
    result = session.call("create_payment_arrangement", {"installments": 3})
    assert result["created"] is False
    assert words in result["error"]
    assert session.writes() == []


def test_create_moves_the_arrears_and_the_loan_engine_schedule_applies(
    on_slot: Callable[[str], tuple[CallSession, Account]], twins: Twins
) -> None:
    session, account = on_slot("A04")  # $219.86 past due: 3 does not divide it
    result = session.call("create_payment_arrangement", {"installments": 3})
    assert result["created"] is True
    schedule = [row["amount_due_cents"] for row in result["schedule"]]
    assert sum(schedule) == account.past_due_cents() == 21986
    assert result["first_installment_cents"] == 7330  # the policy's quote: remainder first
    due = [row["due_date"] for row in result["schedule"]]
    assert due == ["2026-10-10", "2026-11-10", "2026-12-10"]
    # The billing ledger: the past-due bills are paid out of band and tagged.
    loan_id = result["arrangement_id"]
    for bill_id in result["bills_moved"]:
        invoice = twins.billing.state.invoices[bill_id]
        assert invoice["status"] == "paid"
        assert invoice["metadata"]["arrangement_id"] == loan_id
    # The loan ledger agrees with the trace's writes.
    loan = twins.loans.state.to_dict()["loans"][loan_id]
    assert loan is not None
    submitted = session.writes()[0]
    assert submitted["operation"] == "loans.submit"
    assert submitted["principal_cents"] == 21986
    # Read back: the bill balance is current, the arrangement carries the arrears.
    account_now = session.call("get_account")
    assert account_now["past_due_cents"] == 0
    assert account_now["arrangement_active"] is True


def test_extension_boundaries(
    on_slot: Callable[[str], tuple[CallSession, Account]], report: SeedReport
) -> None:
    session, account = on_slot("A14")  # last extension more than 12 months ago
    bill_id = _open_bill_id(report, account)
    for days, reason in ((0, "too_few_days"), (16, "too_many_days")):
        result = session.call("request_due_date_extension", {"bill_id": bill_id, "days": days})
        assert (result["extended"], result["policy_allowed"], result["reason"]) == (
            False,
            False,
            reason,
        )
    result = session.call("request_due_date_extension", {"bill_id": bill_id, "days": 15})
    # Policy allows 15 days, and the billing service refuses to move a finalized invoice.
    assert result["extended"] is False and result["policy_allowed"] is True
    assert "NOT changed" in result["error"]
    assert [w["outcome"] for w in session.writes()] == ["failed"]
    meta = session.clients.stripe.v1.customers.retrieve(
        report.accounts[account.account_number].customer_id
    ).metadata
    assert meta.to_dict().get("last_extension_on") == account.last_extension_on.isoformat()  # type: ignore[union-attr]


def test_recent_extension_refused_with_the_next_eligible_date(
    on_slot: Callable[[str], tuple[CallSession, Account]], report: SeedReport
) -> None:
    session, account = on_slot("A13")
    assert account.last_extension_on is not None
    bill_id = _open_bill_id(report, account)
    result = session.call("request_due_date_extension", {"bill_id": bill_id, "days": 5})
    assert result["reason"] == "recent_extension"
    assert (
        result["next_eligible_on"] == (account.last_extension_on + timedelta(days=366)).isoformat()
    )
    assert session.writes() == []


def test_paid_bills_cannot_be_paid_or_extended(
    on_slot: Callable[[str], tuple[CallSession, Account]], report: SeedReport
) -> None:
    session, account = on_slot("A01")
    seeded = report.accounts[account.account_number]
    bill_id = seeded.invoices[account.bills[-1].number_suffix]
    pm = next(iter(seeded.payment_methods.values()))
    paid = session.call(
        "make_payment",
        {
            "bill_id": bill_id,
            "payment_method_id": pm,
            "amount_cents": account.bills[-1].total_cents,
        },
    )
    assert "already paid" in paid["error"]
    extension = session.call("request_due_date_extension", {"bill_id": bill_id, "days": 5})
    assert "already paid" in extension["error"]
    assert session.writes() == []


def test_compare_needs_two_different_bills(
    on_slot: Callable[[str], tuple[CallSession, Account]], report: SeedReport
) -> None:
    session, account = on_slot("A04")
    bill_id = _open_bill_id(report, account)
    result = session.call("compare_bills", {"bill_id": bill_id, "compare_to_bill_id": bill_id})
    assert result == {"error": "Choose two different bills to compare."}


def test_recording_a_future_payment_is_refused_by_the_loan_engine(
    on_slot: Callable[[str], tuple[CallSession, Account]],
) -> None:
    session, _ = on_slot("A16")
    before = session.call("get_payment_arrangement")
    future = (TODAY + timedelta(days=3)).isoformat()
    result = session.call(
        "modify_payment_arrangement", {"amount_cents": 5000, "payment_date": future}
    )
    assert result["recorded"] is False
    assert "only payments already made can be recorded" in result["error"]
    assert result["engine_code"] == "error.msg.loan.transaction.cannot.be.a.future.date"
    [write] = session.writes()
    assert (write["operation"], write["outcome"]) == ("loans.repayment", "failed")
    assert session.call("get_payment_arrangement") == before


def test_recording_today_by_default_and_overpaying_follows_the_engine(
    on_slot: Callable[[str], tuple[CallSession, Account]],
) -> None:
    session, account = on_slot("A16")
    plan = account.existing_arrangement
    assert plan is not None
    overdue = session.call("get_payment_arrangement")
    assert overdue["overdue_count"] >= 1  # the bill balance is current, the plan is not
    assert session.call("get_account")["past_due_cents"] == 0
    result = session.call("modify_payment_arrangement", {"amount_cents": 100})
    assert result["payment_date"] == TODAY.isoformat()
    outstanding = result["outstanding_cents"]
    over = session.call("modify_payment_arrangement", {"amount_cents": outstanding + 500})
    assert over["recorded"] is True
    assert over["status"].lower().startswith("overpaid")
    assert session.call("get_account")["arrangement_active"] is False


def test_no_arrangement_nothing_to_record(
    on_slot: Callable[[str], tuple[CallSession, Account]],
) -> None:
    session, _ = on_slot("A01")
    assert session.call("get_payment_arrangement")["arrangement_active"] is False
    result = session.call("modify_payment_arrangement", {"amount_cents": 500})
    assert "no active payment arrangement" in result["error"]
    assert session.writes() == []


def test_transfer_ends_tool_use(on_slot: Callable[[str], tuple[CallSession, Account]]) -> None:
    session, _ = on_slot("A07")
    assert session.call("transfer_to_human", {"reason": "shutoff process"}) == {
        "status": "transferring",
        "say": "I'm transferring you to a colleague now; please stay on the line.",
    }
    assert session.transfer_reason == "shutoff process"
    assert "transferred" in session.call("get_account")["error"]


def test_a_service_failure_is_a_result_not_an_exception(twins: Twins) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("loan engine unreachable", request=request)

    broken = ServiceClients(
        stripe=in_process_stripe_client(twins.billing, "sk_test_wrong"),
        fineract=FineractClient(
            "http://loans.twin", "mifos", "password", transport=httpx.MockTransport(refuse)
        ),
    )
    session = CallSession(broken)
    result = session.call(
        "verify_caller",
        {"account_number": "4944-29875", "name_on_account": "Kwame Novak", "second_factor": "4242"},
    )
    assert set(result) == {"error"}
    assert "4944" not in result["error"]
    assert session.failed_attempts == 0  # a failure to check is not a failed attempt
