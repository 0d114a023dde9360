"""Replaying a task through the real tools: the proof that its answer key is right.

``replay_task`` runs one task against a fresh clone of the seeded services through
``CallSession``, as a minimal, perfectly informed agent would: it verifies with the
caller's own answers, then for each request in order

- makes every expected account change with its values; each must succeed;
- makes the calls a correct agent must see refused (a declining card, a promise to
  pay dated in the future, an arrangement the policy refuses, a due-date extension);
  each must be refused;
- transfers where the request ends in a transfer;
- reads what the agent would read and compares it with the values of the request's
  checks (the past-due amount, the quote, the arrangement's overdue instalment...).

Because every request runs after the writes of the earlier ones, this also checks the
task builder's simulation of those writes against the services. A problem is a sentence
naming the request, what was expected and what the tools answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vamos_env.envs.energy.seed import SeedReport, default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.catalogue import REASON_WORDS
from vamos_env.envs.energy.tasks.schema import (
    WRITE_TOOLS,
    CallerRequest,
    Check,
    ExpectedChange,
    Task,
    TaskSet,
)
from vamos_env.envs.energy.tasks.state import MONTH_NAMES
from vamos_env.twins.snapshot import Snapshot


@dataclass(slots=True)
class TaskReport:
    task_id: str
    problems: list[str] = field(default_factory=list)
    calls: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(slots=True)
class _Request:
    """One request being replayed, with its checks keyed by name (``r1_amount`` -> ``amount``)."""

    index: int
    request: CallerRequest
    changes: list[ExpectedChange]
    checks: dict[str, Check]


class _Replay:
    def __init__(self, session: CallSession, report: TaskReport) -> None:
        self.session = session
        self.report = report
        self.where = ""

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self.report.calls += 1
        return self.session.call(tool, dict(arguments or {}))

    def problem(self, message: str) -> None:
        self.report.problems.append(f"{self.where}: {message}")

    def expect(self, what: str, expected: Any, actual: Any) -> None:
        if expected != actual:
            self.problem(f"{what}: expected {expected!r}, the tools gave {actual!r}")

    def succeeds(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(tool, arguments)
        if "error" in result:
            self.problem(f"{tool} should succeed but was refused: {result['error']}")
        return result

    def refused(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(tool, arguments)
        if "error" not in result:
            self.problem(f"{tool} should be refused but succeeded")
        return result

    def check_value(self, request: _Request, name: str, actual: Any) -> None:
        check = request.checks.get(name)
        if check is None:
            self.problem(f"expected a check named {name!r}")
            return
        self.expect(f"check {check.id}", check.value, actual)

    def change(self, request: _Request, tool: str) -> ExpectedChange | None:
        found = [c for c in request.changes if c.tool == tool]
        if len(found) != 1:
            self.problem(f"expected one {tool} change, found {len(found)}")
            return None
        return found[0]

    # shared reads -------------------------------------------------------------------------

    def bill_id(self, month: Any) -> str | None:
        listing = self.call("list_bills").get("bills") or []
        wanted = str(month)
        for bill in listing:
            month_number = str(bill.get("bill_date", ""))[5:7]
            if month_number.isdigit() and MONTH_NAMES[int(month_number) - 1] == wanted:
                return str(bill["bill_id"])
        self.problem(f"no {wanted} bill in list_bills")
        return None

    def card_id(self, last4: Any) -> str | None:
        for card in self.call("get_account").get("cards") or []:
            if card.get("last4") == str(last4):
                return str(card["payment_method_id"])
        self.problem(f"no card ending {last4} in get_account")
        return None


# --- per kind ---------------------------------------------------------------------------------


def _balance(r: _Replay, q: _Request) -> None:
    account = r.call("get_account")
    if "past_due" in q.checks:
        r.check_value(q, "past_due", account.get("past_due_cents"))
    else:
        r.expect("past_due_cents", 0, account.get("past_due_cents"))
    if "open_balance" in q.checks:
        r.check_value(q, "open_balance", account.get("open_balance_cents"))
    if "nothing_owed" in q.checks:
        r.expect("open_balance_cents", 0, account.get("open_balance_cents"))
    if account.get("arrangement_active"):
        plan = r.call("get_payment_arrangement")
        overdue = [i for i in plan.get("installments") or [] if i.get("overdue")]
        if "overdue_installment" in q.checks:
            r.check_value(
                q, "overdue_installment", overdue[0]["outstanding_cents"] if overdue else None
            )
        else:
            r.expect("overdue instalments", 0, len(overdue))


def _explain_bill(r: _Replay, q: _Request) -> None:
    bill_id = r.bill_id(q.request.details.get("bill_month"))
    if bill_id is None:
        return
    explanation = r.succeeds("explain_bill", {"bill_id": bill_id})
    r.check_value(q, "bill_total", explanation.get("total_cents"))
    r.check_value(q, "total_kwh", explanation.get("total_kwh"))
    lines = r.succeeds("get_bill", {"bill_id": bill_id}).get("lines") or []
    estimated = any(line.get("read_type") == "estimated" for line in lines)
    r.expect("estimated read", "estimated_read" in q.checks, estimated)


def _compare_bills(r: _Replay, q: _Request) -> None:
    newer = r.bill_id(q.request.details.get("bill_month"))
    older = r.bill_id(q.request.details.get("compare_to_month"))
    if newer is None or older is None:
        return
    variance = r.succeeds("compare_bills", {"bill_id": newer, "compare_to_bill_id": older})
    r.check_value(q, "difference", variance.get("difference_cents"))
    parts = variance.get("parts") or []
    if parts:
        main = max(parts, key=lambda p: p.get("cents", 0))
        r.check_value(q, "main_reason", REASON_WORDS[main["component"]][0])


def _payment_history(r: _Replay, q: _Request) -> None:
    history = r.succeeds("get_payment_history")
    paid = [
        b
        for b in history.get("paid_bills") or []
        if not b.get("moved_to_arrangement") and b.get("paid_on")
    ]
    if not paid:
        r.problem("get_payment_history shows no bill payment")
        return
    last = max(paid, key=lambda b: (b["paid_on"], b.get("number") or ""))
    r.check_value(q, "last_payment_amount", last.get("amount_paid_cents"))
    r.check_value(q, "last_payment_date", last.get("paid_on"))


def _pay(r: _Replay, q: _Request, *, decline_first: bool) -> None:
    change = r.change(q, "make_payment")
    if change is None:
        return
    values = change.values
    details = q.request.details
    if decline_first:
        declining = r.card_id(details.get("first_card_last4"))
        if declining is not None:
            result = r.refused(
                "make_payment",
                {
                    "bill_id": values["bill_id"],
                    "payment_method_id": declining,
                    "amount_cents": values["amount_cents"],
                },
            )
            if "declined" not in str(result.get("error", "")):
                r.problem(f"the first card should be declined, got {result}")
            r.check_value(q, "first_card_last4", details.get("first_card_last4"))
    r.expect(
        "card_last4 of the payment method",
        r.card_id(values["card_last4"]),
        values["payment_method_id"],
    )
    paid = r.succeeds(
        "make_payment",
        {
            "bill_id": values["bill_id"],
            "payment_method_id": values["payment_method_id"],
            "amount_cents": values["amount_cents"],
        },
    )
    if "error" not in paid:
        r.expect("paid", True, paid.get("paid"))
        r.expect("amount paid", values["amount_cents"], paid.get("amount_paid_cents"))
        r.expect("card_last4", values["card_last4"], paid.get("card_last4"))
    r.check_value(q, "card_last4", values["card_last4"])
    r.check_value(q, "amount", values["amount_cents"])


def _quote_matches(r: _Replay, q: _Request, quote: Mapping[str, Any]) -> None:
    r.check_value(q, "monthly_installment", quote.get("monthly_installment_cents"))
    first = quote.get("first_installment_cents")
    if "first_installment" in q.checks:
        r.check_value(q, "first_installment", first)
    else:
        r.expect("first instalment", quote.get("monthly_installment_cents"), first)
    if "down_payment" in q.checks:
        r.check_value(q, "down_payment", quote.get("down_payment_cents"))


def _installments(q: _Request) -> dict[str, Any]:
    return {"installments": q.request.details.get("installments", 6)}


def _quote_arrangement(r: _Replay, q: _Request) -> None:
    quote = r.succeeds("quote_payment_arrangement", _installments(q))
    r.expect("quote kind", "quote", quote.get("kind"))
    _quote_matches(r, q, quote)
    r.check_value(q, "first_due_date", quote.get("first_due_date"))


def _create_arrangement(r: _Replay, q: _Request) -> None:
    change = r.change(q, "create_payment_arrangement")
    if change is None:
        return
    quote = r.succeeds("quote_payment_arrangement", _installments(q))
    r.expect("quote kind", "quote", quote.get("kind"))
    _quote_matches(r, q, quote)
    created = r.succeeds(
        "create_payment_arrangement", {"installments": change.values["installments"]}
    )
    if "error" not in created:
        r.expect("financed amount", change.values["principal_cents"], created.get("financed_cents"))


def _refused_arrangement(
    r: _Replay, q: _Request, kind: str, reason: str, *, transfer: bool = False
) -> dict[str, Any]:
    quote = r.succeeds("quote_payment_arrangement", _installments(q))
    r.expect("quote kind", kind, quote.get("kind"))
    r.expect("quote reason", reason, quote.get("reason"))
    r.refused("create_payment_arrangement", _installments(q))
    if transfer:
        _transfer(r)
    return quote


def _too_little_owed(r: _Replay, q: _Request) -> None:
    quote = _refused_arrangement(r, q, "refused", "below_minimum")
    if "past_due" in q.checks:
        r.check_value(q, "past_due", quote.get("past_due_cents"))
    else:
        r.expect("past due", 0, quote.get("past_due_cents"))


def _already_active(r: _Replay, q: _Request) -> None:
    _refused_arrangement(r, q, "refused", "arrangement_active")


def _down_payment(r: _Replay, q: _Request) -> None:
    quote = _refused_arrangement(
        r, q, "quote_then_transfer", "down_payment_required", transfer=True
    )
    _quote_matches(r, q, quote)


def _shutoff(r: _Replay, q: _Request) -> None:
    _refused_arrangement(r, q, "transfer", "shutoff_process", transfer=True)


def _arrangement_status(r: _Replay, q: _Request) -> None:
    plan = r.succeeds("get_payment_arrangement")
    r.check_value(q, "outstanding", plan.get("outstanding_cents"))
    rows = plan.get("installments") or []
    overdue = [i for i in rows if i.get("overdue")]
    if "overdue_amount" in q.checks:
        if not overdue:
            r.problem("expected an overdue instalment, the arrangement has none")
            return
        r.check_value(q, "overdue_amount", overdue[0].get("outstanding_cents"))
        r.check_value(q, "overdue_due_date", overdue[0].get("due_date"))
    else:
        r.expect("overdue instalments", 0, len(overdue))
        upcoming = plan.get("next_installment") or {}
        r.check_value(q, "next_amount", upcoming.get("outstanding_cents"))
        r.check_value(q, "next_due_date", upcoming.get("due_date"))


def _record_payment(r: _Replay, q: _Request) -> None:
    change = r.change(q, "modify_payment_arrangement")
    if change is None:
        return
    recorded = r.succeeds("modify_payment_arrangement", change.values)
    if "error" not in recorded:
        r.expect("recorded", True, recorded.get("recorded"))
        r.check_value(q, "outstanding_after", recorded.get("outstanding_cents"))


def _promise_to_pay(r: _Replay, q: _Request) -> None:
    details = q.request.details
    r.refused(
        "modify_payment_arrangement",
        {"amount_cents": details.get("amount_cents"), "payment_date": details.get("promised_on")},
    )


def _due_date_extension(r: _Replay, q: _Request) -> None:
    bill_id = r.bill_id(q.request.details.get("bill_month"))
    if bill_id is None:
        return
    result = r.refused(
        "request_due_date_extension", {"bill_id": bill_id, "days": q.request.details.get("days")}
    )
    r.expect("extended", False, result.get("extended"))
    policy_allowed = "due_date_unchanged" in q.checks
    r.expect("policy allowed", policy_allowed, result.get("policy_allowed"))
    if policy_allowed:
        r.check_value(q, "due_date_unchanged", result.get("due_date"))
    else:
        r.check_value(q, "next_eligible", result.get("next_eligible_on"))
    r.check_value(q, "still_owed", result.get("amount_remaining_cents"))


def _paperless_status(r: _Replay, q: _Request) -> None:
    account = r.call("get_account")
    r.check_value(q, "paperless_state", "on" if account.get("paperless") else "off")


def _set_paperless(r: _Replay, q: _Request, enabled: bool) -> None:
    change = r.change(q, "set_paperless_billing")
    if change is None:
        return
    r.expect("change value", enabled, change.values.get("enabled"))
    if enabled:
        r.check_value(q, "email", r.call("get_account").get("email"))
    result = r.succeeds("set_paperless_billing", {"enabled": enabled})
    r.expect("changed", True, result.get("changed"))
    r.expect("paperless", enabled, result.get("paperless"))


def _supplier(r: _Replay, q: _Request) -> None:
    info = r.succeeds("get_supplier_info")
    r.check_value(q, "supplier_name", info.get("supplier"))
    if "supply_rate" in q.checks:
        r.check_value(q, "supply_rate", info.get("latest_supply_rate_cents_per_kwh"))


def _protections(r: _Replay, q: _Request) -> None:
    shield = r.call("get_account").get("protections") or {}
    medical, winter = shield.get("medical") or {}, shield.get("winter") or {}
    if "medical_until" in q.checks:
        r.expect("medical status", "active", medical.get("status"))
        r.check_value(q, "medical_until", medical.get("until"))
    if "medical_expired" in q.checks:
        r.expect("medical status", "expired", medical.get("status"))
        r.check_value(q, "medical_expired", medical.get("until"))
    if "winter_season" in q.checks:
        r.expect("winter eligibility", "eligible", winter.get("eligibility"))
        r.check_value(q, "winter_season", winter.get("season_start"))
    if "income_unknown" in q.checks:
        r.expect("winter eligibility", "unknown", winter.get("eligibility"))
    _transfer(r)


def _transfer(r: _Replay, *_: Any) -> None:
    result = r.succeeds("transfer_to_human", {"reason": "replaying the task's expected transfer"})
    r.expect("transfer status", "transferring", result.get("status"))


REPLAYERS: Mapping[str, Callable[[_Replay, _Request], None]] = {
    "balance": _balance,
    "explain_bill": _explain_bill,
    "compare_bills": _compare_bills,
    "payment_history": _payment_history,
    "pay_bill": lambda r, q: _pay(r, q, decline_first=False),
    "pay_after_decline": lambda r, q: _pay(r, q, decline_first=True),
    "quote_arrangement": _quote_arrangement,
    "create_arrangement": _create_arrangement,
    "arrangement_too_little_owed": _too_little_owed,
    "arrangement_already_active": _already_active,
    "arrangement_down_payment": _down_payment,
    "arrangement_shutoff": _shutoff,
    "arrangement_status": _arrangement_status,
    "record_arrangement_payment": _record_payment,
    "promise_to_pay": _promise_to_pay,
    "due_date_extension": _due_date_extension,
    "paperless_status": _paperless_status,
    "enable_paperless": lambda r, q: _set_paperless(r, q, True),
    "disable_paperless": lambda r, q: _set_paperless(r, q, False),
    "supplier": _supplier,
    "protections": _protections,
    "supervisor": _transfer,
}


def replay_task(task: Task, snapshot: Snapshot[SeedReport] | None = None) -> TaskReport:
    """Replay one task on a fresh clone (module docstring); the report lists any problems."""
    snapshot = snapshot or default_snapshot()
    report = TaskReport(task.task_id)
    clients = snapshot.clone().clients()
    try:
        replay = _Replay(CallSession(clients), report)
        replay.where = "verify_caller"
        caller = task.caller
        verified = replay.call(
            "verify_caller",
            {
                "account_number": caller.account_number,
                "name_on_account": caller.full_name,
                "second_factor": caller.second_factor.value,
            },
        )
        replay.expect("verification", "verified", verified.get("status"))
        if report.problems:
            return report
        for index, request in enumerate(task.requests):
            replay.where = f"request {index} ({request.kind})"
            prefix = f"r{index}_"
            current = _Request(
                index,
                request,
                [c for c in task.expected_changes if c.request_index == index],
                {c.id.removeprefix(prefix): c for c in task.checks if c.request_index == index},
            )
            REPLAYERS[request.kind](replay, current)
        replay.where = "whole call"
        made = [
            entry.tool for entry in replay.session.trace if entry.ok and entry.tool in WRITE_TOOLS
        ]
        replay.expect("successful account changes", [c.tool for c in task.expected_changes], made)
    finally:
        clients.close()
    return report


@dataclass(slots=True)
class Validation:
    reports: list[TaskReport]
    seconds: float

    @property
    def failed(self) -> list[TaskReport]:
        return [r for r in self.reports if not r.ok]


def validate_tasks(
    tasks: Iterable[Task], snapshot: Snapshot[SeedReport] | None = None
) -> Validation:
    """Replay every task; the caller decides how to report failures."""
    snapshot = snapshot or default_snapshot()
    started = time.perf_counter()
    reports = [replay_task(task, snapshot) for task in tasks]
    return Validation(reports, time.perf_counter() - started)


def validate_task_set(
    task_set: TaskSet, snapshot: Snapshot[SeedReport] | None = None
) -> Validation:
    return validate_tasks(task_set.tasks, snapshot)
