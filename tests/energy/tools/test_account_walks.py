"""For each of the 24 accounts, a walk through its main path, checked against the policy model.

Expected values come from the world manifest and the policy functions, never from the
tools' own reading of the services, so a mapping mistake in the tools shows up here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest

from vamos_env.clock import TODAY
from vamos_env.envs.energy import policy
from vamos_env.envs.energy.policy import AccountFacts, quote_arrangement
from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.world import Account, Manifest, default_manifest

ACCOUNT_NUMBERS = [a.account_number for a in default_manifest().accounts]
FACTOR_KINDS = ("card", "postal", "bill", "bill_dollar")


class Walk:
    """One verified call on one account, checking every result on the way."""

    def __init__(self, session: CallSession, displays_ok: Callable[[Any], bool]) -> None:
        self.session = session
        self.displays_ok = displays_ok

    def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.session.call(tool, arguments)
        json.dumps(result)  # JSON-serialisable
        assert result, tool
        assert self.displays_ok(result), (tool, result)
        assert "unexpectedly" not in result.get("error", ""), (tool, result)
        return result


@pytest.mark.parametrize("number", ACCOUNT_NUMBERS)
def test_account_main_path(
    number: str,
    session: CallSession,
    manifest: Manifest,
    report: SeedReport,
    factor_of: Callable[[Account, str], str],
    facts_of: Callable[..., AccountFacts],
    displays_ok: Callable[[Any], bool],
) -> None:
    account = manifest.account(number)
    seeded = report.accounts[number]
    index = ACCOUNT_NUMBERS.index(number)
    call = Walk(session, displays_ok)

    # 1. verify, rotating the kind of second factor across accounts
    kind = FACTOR_KINDS[index % len(FACTOR_KINDS)]
    verify_args = {
        "account_number": number,
        "name_on_account": account.full_name,
        "second_factor": factor_of(account, kind),
    }
    assert call("verify_caller", **verify_args) == {"status": "verified"}

    # 2. the account
    facts = facts_of(account)
    got = call("get_account")
    assert got["account_number"] == number
    assert got["name"] == account.full_name
    assert got["email"] == account.email
    assert got["mailing_address"]["postal_code"] == account.mailing_address.postal_code
    assert got["paperless"] is account.paperless
    assert got["supplier"] == account.supplier
    assert got["supplier_type"] == account.supplier_type
    assert sorted(c["last4"] for c in got["cards"]) == sorted(c.last4 for c in account.cards)
    assert sorted(p["meter_number"] for p in got["premises"]) == sorted(
        p.meter_number for p in account.premises
    )
    assert got["past_due_cents"] == account.past_due_cents()
    assert got["days_past_due"] == account.days_past_due()
    assert got["open_balance_cents"] == account.open_balance_cents()
    assert got["shutoff_process"] is account.in_shutoff_process()
    assert got["arrangement_active"] is (account.existing_arrangement is not None)
    tier = policy.income_tier(account.income_fpl_pct)
    assert got["max_installments"] == tier.max_installments
    if account.income_fpl_pct is None:
        assert got["income_tier"] == "unknown"
        assert got["max_installments"] == 6
    expected_protections = policy.protections(facts).model_dump(mode="json")
    assert got["protections"] == expected_protections

    # 3. bills: newest first, ids as seeded, amounts as the manifest says
    listed = call("list_bills")
    newest_first = list(reversed(account.bills))
    assert [b["bill_id"] for b in listed["bills"]] == [
        seeded.invoices[b.number_suffix] for b in newest_first
    ]
    for row, bill in zip(listed["bills"], newest_first, strict=True):
        assert row["total_cents"] == bill.total_cents
        assert row["status"] == bill.status
        assert row["due_date"] == bill.due_date.isoformat()
        assert row["service_period_start"] == min(li.period_start for li in bill.lines).isoformat()
        assert row["past_due"] is bill.is_past_due()
        assert row["number"] == account.bill_number(bill)
    latest = newest_first[0]
    latest_id = seeded.invoices[latest.number_suffix]
    detail = call("get_bill", bill_id=latest_id)
    assert len(detail["lines"]) == len(latest.lines)
    assert sum(line["amount_cents"] for line in detail["lines"]) == latest.total_cents
    assert {line["charge_type"] for line in detail["lines"]} == {
        line.charge_type for line in latest.lines
    }
    explained = call("explain_bill", bill_id=latest_id)
    assert explained["total_kwh"] == latest.total_kwh
    assert explained["lines_match_total"] is True
    assert explained["total_cents"] == latest.total_cents
    if len(newest_first) >= 2:
        previous_id = seeded.invoices[newest_first[1].number_suffix]
        variance = call("compare_bills", bill_id=previous_id, compare_to_bill_id=latest_id)
        assert variance["newer_bill_id"] == latest_id  # order found from the bills, not args
        assert variance["difference_cents"] == latest.total_cents - newest_first[1].total_cents
        assert sum(p["cents"] for p in variance["parts"]) == variance["difference_cents"]

    history = call("get_payment_history")
    assert len(history["paid_bills"]) == sum(b.status == "paid" for b in account.bills)
    assert len(history["open_bills"]) == sum(b.status == "open" for b in account.bills)
    supplier = call("get_supplier_info")
    assert supplier["supplier"] == account.supplier
    assert supplier["default_service"] is (account.supplier_type == "default")

    # 4. an existing arrangement, read from the loan engine, then a payment recorded
    plan = account.existing_arrangement
    arrangement = call("get_payment_arrangement")
    if plan is None:
        assert arrangement["arrangement_active"] is False
    else:
        assert arrangement["arrangement_active"] is True
        assert arrangement["original_amount_cents"] == plan.principal_cents
        assert arrangement["outstanding_cents"] == plan.outstanding_cents()
        assert arrangement["overdue_count"] == len(plan.overdue_installments())
        expected_next = plan.next_installment()
        assert expected_next is not None
        assert arrangement["next_installment"]["due_date"] == expected_next.due_on.isoformat()
        paid = call(
            "modify_payment_arrangement",
            amount_cents=plan.installment_cents,
            payment_date=(TODAY - timedelta(days=1)).isoformat(),
        )
        assert paid["recorded"] is True
        assert paid["outstanding_cents"] == plan.outstanding_cents() - plan.installment_cents
        writes = session.trace[-1].writes
        assert [(w.service, w.operation, w.outcome) for w in writes] == [
            ("fineract", "loans.repayment", "succeeded")
        ]

    # 5. quote, and create where the quote is a plain quote
    installments = min(3, tier.max_installments)
    expected = quote_arrangement(facts, installments)
    quoted = call("quote_payment_arrangement", installments=installments)
    assert quoted["kind"] == expected.kind
    assert quoted["reason"] == expected.reason
    assert quoted["enrolled"] is False
    assert quoted["first_installment_cents"] == expected.first_installment_cents
    assert quoted["monthly_installment_cents"] == expected.monthly_installment_cents
    assert quoted["down_payment_cents"] == expected.down_payment_cents
    assert not session.trace[-1].writes
    created = call("create_payment_arrangement", installments=installments)
    if expected.kind == "quote":
        assert created["created"] is True, created
        assert created["financed_cents"] == account.past_due_cents()
        moved = {seeded.invoices[b.number_suffix] for b in account.past_due_bills()}
        assert set(created["bills_moved"]) == moved
        assert sum(row["amount_due_cents"] for row in created["schedule"]) == (
            account.past_due_cents()
        )
        assert created["schedule"][0]["due_date"] == (TODAY + timedelta(days=30)).isoformat()
        operations = [(w.service, w.operation) for w in session.trace[-1].writes]
        assert operations[:4] == [
            ("fineract", "loans.submit"),
            ("fineract", "loans.approve"),
            ("fineract", "loans.disburse"),
            ("stripe", "customers.update"),
        ]
        assert operations[4:] == [("stripe", "invoices.update"), ("stripe", "invoices.pay")] * len(
            moved
        )
        after = call("get_account")
        assert after["arrangement_active"] is True
        assert after["past_due_cents"] == 0
        now = call("get_payment_arrangement")
        assert now["original_amount_cents"] == account.past_due_cents()
        assert now["installment_count"] == installments
        assert now["overdue_count"] == 0
        again = call("create_payment_arrangement", installments=installments)
        assert "error" in again  # one active arrangement at a time
    else:
        assert created["created"] is False
        assert "error" in created
        assert not session.trace[-1].writes
        if expected.kind == "quote_then_transfer":
            assert "cannot collect a down payment" in created["error"]
        if expected.kind == "transfer":
            assert "transfer" in created["error"].lower()

    # 6. payments: a declining card first (the bill stays open), then a good card
    open_rows = [b for b in call("list_bills")["bills"] if b["amount_remaining_cents"] > 0]
    cards = {c["last4"]: c["payment_method_id"] for c in call("get_account")["cards"]}
    if open_rows:
        target = open_rows[0]
        owed = target["amount_remaining_cents"]
        for card in (c for c in account.cards if c.declines):
            declined = call(
                "make_payment",
                bill_id=target["bill_id"],
                payment_method_id=cards[card.last4],
                amount_cents=owed,
            )
            assert declined["paid"] is False
            assert "NOT paid" in declined["error"]
            assert declined["decline_code"] == card.decline_code
            assert call("get_bill", bill_id=target["bill_id"])["amount_remaining_cents"] == owed
        good = next((c for c in account.cards if not c.declines), None)
        if good is not None:
            partial = call(
                "make_payment",
                bill_id=target["bill_id"],
                payment_method_id=cards[good.last4],
                amount_cents=owed - 1,
            )
            assert partial["expected_amount_cents"] == owed
            paid = call(
                "make_payment",
                bill_id=target["bill_id"],
                payment_method_id=cards[good.last4],
                amount_cents=owed,
            )
            assert paid["paid"] is True
            assert paid["amount_paid_cents"] == owed
            assert paid["card_last4"] == good.last4
            assert paid["confirmation_id"]
            bill_now = call("get_bill", bill_id=target["bill_id"])
            assert bill_now["status"] == "paid"
            assert bill_now["amount_remaining_cents"] == 0

    # 7. a due-date extension: policy first, then the billing service's refusal
    still_open = [b for b in call("list_bills")["bills"] if b["amount_remaining_cents"] > 0]
    if still_open:
        bill_row = still_open[0]
        extension = call("request_due_date_extension", bill_id=bill_row["bill_id"], days=10)
        assert extension["extended"] is False
        decision = policy.extension_decision(facts, 10, date.fromisoformat(bill_row["due_date"]))
        assert extension["policy_allowed"] is decision.allowed
        if not decision.allowed:
            assert extension["reason"] == decision.reason
            assert not session.trace[-1].writes
        else:
            assert "refused" in extension["error"]
            writes = session.trace[-1].writes
            assert [(w.operation, w.outcome) for w in writes] == [("invoices.update", "failed")]
        customer = session.clients.stripe.v1.customers.retrieve(seeded.customer_id).to_dict()
        recorded = customer["metadata"].get("last_extension_on")
        expected_ext = account.last_extension_on
        assert recorded == (None if expected_ext is None else expected_ext.isoformat())
        assert call("get_bill", bill_id=bill_row["bill_id"])["due_date"] == bill_row["due_date"]

    # 8. paperless: switch to the other state, then the same state again changes nothing
    flipped = call("set_paperless_billing", enabled=not account.paperless)
    assert flipped["changed"] is True
    assert flipped["email"] == account.email
    assert call("get_account")["paperless"] is (not account.paperless)
    same = call("set_paperless_billing", enabled=not account.paperless)
    assert same["changed"] is False
    assert not session.trace[-1].writes

    # Every write in the trace was accepted or refused by a service, and all are tagged.
    for write in session.writes():
        assert write["call_id"].startswith("call_")
        assert write["service"] in ("stripe", "fineract")
