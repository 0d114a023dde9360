"""The ledger diff and the trace cross-check, on real twins and real tool calls.

Every test clones the seeded world, makes real calls through ``CallSession`` (the official
Stripe SDK and the Fineract client against the twins), and reads the ledgers back. The
cross-check must turn a trace that claims what the ledger lacks, and a ledger change no
tool call explains, into a grading fault, never into a pass.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from vamos_env.clock import TODAY
from vamos_env.envs.energy.seed import SeedReport, default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.schema import Task
from vamos_env.grading import grade, read_ledger
from vamos_env.grading.crosscheck import cross_check
from vamos_env.grading.timeline import Timeline
from vamos_env.twins.snapshot import Twins
from vamos_env.types import ToolCall, ToolResult, Transcript, Turn

SAMUEL = "8731-71970"  # bill 3 $219.86 past due, bill 4 $224.97; card 8210 pays, 0002 declines
JEROME = "2487-78209"  # active arrangement (loan 2)
GREGORY = "2269-26927"  # $220.94 past due


@dataclass
class Call:
    report: SeedReport
    before: Twins
    after: Twins
    session: CallSession
    number: str

    def pm(self, last4: str) -> str:
        account = self.report.manifest.account(self.number)
        token = next(c.stripe_test_token for c in account.cards if c.last4 == last4)
        return self.report.accounts[self.number].payment_methods[token]

    def bill(self, suffix: int) -> str:
        return self.report.accounts[self.number].invoices[suffix]

    def transcript(self) -> Transcript:
        turns = [
            Turn(
                index=i,
                speaker="tool",
                tool_call=ToolCall(call_id=e.call_id, name=e.tool, arguments=e.arguments or {}),
                tool_result=ToolResult(
                    call_id=e.call_id,
                    name=e.tool,
                    ok=e.ok,
                    result=e.result,
                    writes=[w.as_dict() for w in e.writes],
                    verified=e.verified,
                ),
            )
            for i, e in enumerate(self.session.trace)
        ]
        return Transcript(task_id="t", turns=turns)

    def ledger(self) -> Any:
        return read_ledger(self.before, self.after, self.number)


@pytest.fixture
def call() -> Iterator[Any]:
    opened = []

    def start(number: str) -> Call:
        snapshot = default_snapshot()
        before = snapshot.clone()
        after = before.clone()
        clients = after.clients()
        opened.append(clients)
        session = CallSession(clients)
        account = snapshot.report.manifest.account(number)
        verified = session.call(
            "verify_caller",
            {
                "account_number": number,
                "name_on_account": account.full_name,
                "second_factor": account.mailing_address.postal_code,
            },
        )
        assert verified == {"status": "verified"}
        return Call(snapshot.report, before, after, session, number)

    yield start
    for clients in opened:
        clients.close()


def test_a_call_without_writes_has_an_empty_diff(call: Any) -> None:
    c = call(SAMUEL)
    c.session.call("get_account")
    c.session.call("list_bills")
    ledger = c.ledger()
    assert ledger.changes == []
    assert cross_check(Timeline.of(c.transcript()), ledger) is None


def test_card_payment_and_decline_are_ledger_events(call: Any) -> None:
    c = call(SAMUEL)
    declined = c.session.call(
        "make_payment",
        {"bill_id": c.bill(3), "payment_method_id": c.pm("0002"), "amount_cents": 21986},
    )
    assert "error" in declined
    paid = c.session.call(
        "make_payment",
        {"bill_id": c.bill(3), "payment_method_id": c.pm("8210"), "amount_cents": 21986},
    )
    assert paid["paid"] is True
    changes = {(ch.kind, ch.resource): ch.values for ch in c.ledger().changes}
    assert changes[("charge_declined", c.bill(3))]["card_last4"] == "0002"
    assert changes[("charge_declined", c.bill(3))]["amount_cents"] == 21986
    assert changes[("invoice_paid", c.bill(3))] == {
        "amount_cents": 21986,
        "method": "card",
        "payment_method": c.pm("8210"),
        "card_last4": "8210",
    }
    assert len(changes) == 2
    assert cross_check(Timeline.of(c.transcript()), c.ledger()) is None


def test_arrangement_repayment_and_paperless_are_ledger_events(call: Any) -> None:
    c = call(GREGORY)
    created = c.session.call("create_payment_arrangement", {"installments": 6})
    assert created["created"] is True
    c.session.call("set_paperless_billing", {"enabled": True})
    kinds = sorted(ch.kind for ch in c.ledger().changes)
    assert kinds == [
        "customer_metadata",  # arrangement_id
        "customer_metadata",  # paperless
        "invoice_metadata",  # the moved bill's arrangement_id
        "invoice_paid",  # out of band, into the arrangement
        "loan_opened",
    ]
    opened = c.ledger().of_kind("loan_opened")[0]
    assert opened.resource == created["arrangement_id"]
    assert opened.values["principal_cents"] == 22094
    assert opened.values["status"] == 300
    assert c.ledger().of_kind("invoice_paid")[0].values["method"] == "out_of_band"
    assert cross_check(Timeline.of(c.transcript()), c.ledger()) is None

    j = call(JEROME)
    j.session.call(
        "modify_payment_arrangement", {"amount_cents": 15000, "payment_date": "2026-09-08"}
    )
    assert [(ch.kind, ch.values) for ch in j.ledger().changes] == [
        ("loan_repayment", {"amount_cents": 15000, "date": "2026-09-08"})
    ]
    assert cross_check(Timeline.of(j.transcript()), j.ledger()) is None


def test_account_data_comes_from_the_ledger_at_reset(call: Any) -> None:
    c = call(SAMUEL)
    data = c.ledger().account
    assert data is not None
    assert data.name == "Samuel Walsh-Obi"
    assert data.postal_code == "18360"
    assert data.card_last4s == ["0002", "8210"]
    assert {21986, 22497, 44483} <= set(data.amounts_cents)  # bills, and the open balance
    assert read_ledger(c.before, c.after, "0000-00000").account is None


def _task() -> Task:
    return Task.model_validate(
        {
            "task_id": "t",
            "caller": {
                "account_number": SAMUEL,
                "full_name": "Samuel Walsh-Obi",
                "second_factor": {"kind": "postal_code", "value": "18360"},
                "opening_line": "Hi.",
            },
            "requests": [
                {
                    "kind": "pay_bill",
                    "says": "Pay my bill.",
                    "rephrase": "Pay it.",
                    "expected_outcome": "resolved",
                }
            ],
            "expected_changes": [
                {"request_index": 0, "tool": "make_payment", "values": {"amount_cents": 21986}}
            ],
            "meta": {"request_kinds": ["pay_bill"], "request_count": 1},
        }
    )


def test_trace_claiming_a_payment_the_ledger_lacks_is_a_grading_fault(call: Any) -> None:
    c = call(SAMUEL)
    c.session.call(
        "make_payment",
        {"bill_id": c.bill(3), "payment_method_id": c.pm("0002"), "amount_cents": 21986},
    )
    transcript = c.transcript()
    # Tamper with the trace: the declined payment now claims success, write and all.
    turn = transcript.turns[-1]
    assert turn.tool_result is not None
    turn.tool_result.ok = True
    turn.tool_result.result = {
        "paid": True,
        "bill_id": c.bill(3),
        "amount_paid_cents": 21986,
        "card_last4": "0002",
    }
    turn.tool_result.writes = [
        {
            "service": "stripe",
            "operation": "invoices.pay",
            "resource": c.bill(3),
            "outcome": "succeeded",
            "payment_method": c.pm("0002"),
            "amount_cents": 21986,
        }
    ]
    verdict = grade(_task(), transcript, c.ledger())
    assert verdict.outcome == "fault"
    assert verdict.passed is False and verdict.reward == 0.0
    assert verdict.actions.passed is True  # the trace alone would have passed the call
    assert verdict.grading_fault is not None
    assert "the ledger has no such change" in verdict.grading_fault
    assert "the ledger lacks it" in verdict.grading_fault


def test_a_payment_in_the_ledger_the_trace_lacks_is_a_grading_fault(call: Any) -> None:
    c = call(SAMUEL)
    c.session.call("list_bills")
    # A write behind the session's back, through the same official client.
    c.session.clients.stripe.v1.invoices.pay(c.bill(3), params={"payment_method": c.pm("8210")})
    verdict = grade(_task(), c.transcript(), c.ledger())
    assert verdict.outcome == "fault"
    assert verdict.grading_fault is not None
    assert "no logged write explains" in verdict.grading_fault
    assert c.bill(3) in verdict.grading_fault


def test_an_honest_payment_grades_without_fault(call: Any) -> None:
    c = call(SAMUEL)
    c.session.call(
        "make_payment",
        {"bill_id": c.bill(3), "payment_method_id": c.pm("8210"), "amount_cents": 21986},
    )
    verdict = grade(_task(), c.transcript(), c.ledger())
    assert verdict.grading_fault is None
    assert verdict.actions.passed is True


def test_a_repayment_behind_the_back_and_an_edited_email_are_faults(call: Any) -> None:
    j = call(JEROME)
    j.session.clients.fineract.make_repayment(2, amount_cents=5000, on=TODAY)
    fault = cross_check(Timeline.of(j.transcript()), j.ledger())
    assert fault is not None and "loan_repayment 2" in fault

    c = call(SAMUEL)
    customer = c.report.accounts[SAMUEL].customer_id
    c.session.clients.stripe.v1.customers.update(customer, params={"email": "x@example.com"})
    fault = cross_check(Timeline.of(c.transcript()), c.ledger())
    assert fault is not None and "customer fields changed: email" in fault


def test_the_diff_is_cheap(call: Any) -> None:
    c = call(GREGORY)
    c.session.call("create_payment_arrangement", {"installments": 6})
    c.session.call("set_paperless_billing", {"enabled": True})
    times = []
    for _ in range(20):
        started = time.perf_counter()
        c.ledger()
        times.append(time.perf_counter() - started)
    # Identity comparison over a few thousand records: far below a millisecond typically.
    assert statistics.median(times) < 0.005
