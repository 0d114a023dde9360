"""The trace against the ledgers: any disagreement is a grading fault, not a pass or a fail.

Two comparisons, both over the ``LedgerDiff`` of the call:

1. **Writes**: every service write the tools logged (``ToolResult.writes``) is turned
   into the ledger event it must have caused, and the ledger's events into the writes
   that must have caused them. Payments, declined charges, new loans and repayments are
   events that must match one for one (a payment the trace logs twice must be in the
   ledger twice); metadata and due dates are settings, compared by their final value
   (a record the trace wrote to without changing a value is in ``touched``).
2. **Claims**: every successful account change the tool results report (a payment that
   "went through", an arrangement "created", a payment "recorded", a due date
   "extended", paperless "changed") must be in the ledger with the reported values.

A trace that claims what the ledger lacks, or a ledger change no tool call explains, means
the grader cannot trust either side: the verdict carries the disagreement in
``grading_fault`` and the runner excludes the call.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from vamos_env.grading.ledger import LedgerChange, LedgerDiff
from vamos_env.grading.timeline import Timeline, ToolEvent

EventKey = tuple[Any, ...]
# Stripe's card_error codes: a refused charge that still leaves a failed charge in the ledger.
_CARD_ERROR_CODES = frozenset(
    {
        "card_declined", "expired_card", "incorrect_cvc", "incorrect_number",
        "processing_error", "incorrect_zip", "card_decline_rate_limit_exceeded",
    }
)  # fmt: skip
_ACTIVE = 300
_LOAN_STATUS_AFTER = {"loans.submit": 100, "loans.approve": 200, "loans.disburse": _ACTIVE}


def _ledger_keys(
    ledger: LedgerDiff,
) -> tuple[Counter[EventKey], dict[tuple[str, str, str], Any], list[str]]:
    events: Counter[EventKey] = Counter()
    settings: dict[tuple[str, str, str], Any] = {}
    others: list[str] = []
    for change in ledger.changes:
        v = change.values
        if change.kind == "invoice_paid":
            pm = v.get("payment_method") if v.get("method") == "card" else None
            events[
                ("invoice_paid", change.resource, v.get("method"), pm, v.get("amount_cents"))
            ] += 1
        elif change.kind == "charge_declined":
            events[("charge_declined", change.resource, v.get("payment_method"),
                    v.get("amount_cents"))] += 1  # fmt: skip
        elif change.kind == "loan_opened":
            events[("loan_opened", change.resource, v.get("principal_cents"),
                    v.get("installments"), v.get("status"))] += 1  # fmt: skip
        elif change.kind == "loan_repayment":
            events[("loan_repayment", change.resource, v.get("amount_cents"), v.get("date"))] += 1
        elif change.kind in ("customer_metadata", "invoice_metadata"):
            settings[(change.kind, change.resource, str(v.get("key")))] = v.get("after")
        elif change.kind == "invoice_due_date":
            settings[("invoice_due_date", change.resource, "due_date")] = v.get("after")
        else:
            others.append(change.describe())
    return events, settings, others


def _trace_keys(
    timeline: Timeline,
) -> tuple[Counter[EventKey], dict[tuple[str, str, str], Any], list[str]]:
    events: Counter[EventKey] = Counter()
    settings: dict[tuple[str, str, str], Any] = {}
    unknown: list[str] = []
    loans: dict[str, dict[str, Any]] = {}
    for event in timeline.events:
        for write in event.writes:
            op = f"{write.get('service')}/{write.get('operation')}"
            resource = str(write.get("resource") or "")
            succeeded = write.get("outcome") == "succeeded"
            if op == "stripe/invoices.pay":
                if succeeded and write.get("paid_out_of_band"):
                    events[("invoice_paid", resource, "out_of_band", None,
                            write.get("amount_cents"))] += 1  # fmt: skip
                elif succeeded:
                    events[("invoice_paid", resource, "card", write.get("payment_method"),
                            write.get("amount_cents"))] += 1  # fmt: skip
                elif write.get("decline_code") or write.get("error_code") in _CARD_ERROR_CODES:
                    events[("charge_declined", resource, write.get("payment_method"),
                            write.get("amount_cents"))] += 1  # fmt: skip
            elif not succeeded:
                continue  # a refused write leaves nothing in the ledger
            elif op in (
                "fineract/loans.submit",
                "fineract/loans.approve",
                "fineract/loans.disburse",
            ):
                loan = loans.setdefault(resource, {})
                if op == "fineract/loans.submit":
                    loan["principal_cents"] = write.get("principal_cents")
                    loan["installments"] = write.get("installments")
                loan["status"] = _LOAN_STATUS_AFTER[str(write.get("operation"))]
            elif op == "fineract/loans.repayment":
                events[("loan_repayment", resource, write.get("amount_cents"),
                        write.get("transaction_date"))] += 1  # fmt: skip
            elif op in ("stripe/customers.update", "stripe/invoices.update"):
                kind = (
                    "customer_metadata" if op == "stripe/customers.update" else "invoice_metadata"
                )
                for key, value in (write.get("metadata") or {}).items():
                    settings[(kind, resource, str(key))] = value
                if "due_date" in write:
                    settings[("invoice_due_date", resource, "due_date")] = write.get("due_date")
            else:
                unknown.append(f"{op} on {resource or '?'} ({event.call_id})")
    for loan_id, loan in loans.items():
        events[("loan_opened", loan_id, loan.get("principal_cents"), loan.get("installments"),
                loan.get("status"))] += 1  # fmt: skip
    return events, settings, unknown


def _describe(key: EventKey) -> str:
    kind, resource, *rest = key
    shown = ", ".join(str(r) for r in rest if r is not None)
    return f"{kind} {resource} ({shown})"


def _claims(event: ToolEvent) -> list[tuple[str, Any]]:
    """(description, predicate over ledger changes) for what a successful result reports."""
    r = event.result
    claims: list[tuple[str, Any]] = []
    if event.name == "make_payment" and r.get("paid"):
        bill, last4, amount = r.get("bill_id"), r.get("card_last4"), r.get("amount_paid_cents")

        def paid(c: LedgerChange) -> bool:
            v = c.values
            return (
                c.kind == "invoice_paid"
                and c.resource == bill
                and v.get("method") == "card"
                and (amount is None or v.get("amount_cents") == amount)
                and (last4 is None or v.get("card_last4") in (None, last4))
            )

        claims.append((f"bill {bill} paid by card ({event.call_id})", paid))
    elif event.name == "create_payment_arrangement" and r.get("created"):
        loan, principal = str(r.get("arrangement_id")), r.get("financed_cents")
        count = r.get("installments")

        def opened(c: LedgerChange) -> bool:
            v = c.values
            return (
                c.kind == "loan_opened"
                and c.resource == loan
                and v.get("status") == _ACTIVE
                and (principal is None or v.get("principal_cents") == principal)
                and (count is None or v.get("installments") == count)
            )

        claims.append((f"arrangement {loan} opened ({event.call_id})", opened))
    elif event.name == "modify_payment_arrangement" and r.get("recorded"):
        loan, amount, on = (
            str(r.get("arrangement_id")),
            r.get("amount_cents"),
            r.get("payment_date"),
        )

        def repaid(c: LedgerChange) -> bool:
            v = c.values
            return (
                c.kind == "loan_repayment"
                and c.resource == loan
                and v.get("amount_cents") == amount
                and (on is None or v.get("date") == on)
            )

        claims.append(
            (f"payment of {amount} cents recorded on loan {loan} ({event.call_id})", repaid)
        )
    elif event.name == "request_due_date_extension" and r.get("extended"):
        bill, new_due = r.get("bill_id"), r.get("new_due_date")

        def moved(c: LedgerChange) -> bool:
            return (
                c.kind == "invoice_due_date"
                and c.resource == bill
                and c.values.get("after") == new_due
            )

        claims.append((f"due date of {bill} moved to {new_due} ({event.call_id})", moved))
    elif event.name == "set_paperless_billing" and r.get("changed"):
        wanted = "true" if r.get("paperless") else "false"

        def switched(c: LedgerChange) -> bool:
            return (
                c.kind == "customer_metadata"
                and c.values.get("key") == "paperless"
                and c.values.get("after") == wanted
            )

        claims.append((f"paperless set to {wanted} ({event.call_id})", switched))
    return claims


def cross_check(timeline: Timeline, ledger: LedgerDiff) -> str | None:
    """None when trace and ledger agree; otherwise every disagreement, in one message."""
    problems: list[str] = []
    trace_events, trace_settings, unknown = _trace_keys(timeline)
    ledger_events, ledger_settings, others = _ledger_keys(ledger)
    for key in sorted((trace_events - ledger_events).elements(), key=str):
        problems.append(f"the trace logs {_describe(key)} but the ledger has no such change")
    for key in sorted((ledger_events - trace_events).elements(), key=str):
        problems.append(f"the ledger shows {_describe(key)} that no logged write explains")
    touched = set(ledger.touched)
    for (kind, resource, field), value in sorted(trace_settings.items(), key=str):
        if (kind, resource, field) in ledger_settings:
            after = ledger_settings[(kind, resource, field)]
            if after != value:
                problems.append(
                    f"the trace sets {kind} {field}={value!r} on {resource}; "
                    f"the ledger has {after!r}"
                )
        elif resource not in touched:
            problems.append(
                f"the trace sets {kind} {field}={value!r} on {resource}; the ledger shows no write"
            )
    for (kind, resource, field), after in sorted(ledger_settings.items(), key=str):
        if (kind, resource, field) not in trace_settings:
            problems.append(
                f"the ledger shows {kind} {field}={after!r} on {resource} that no logged "
                "write explains"
            )
    problems.extend(f"the ledger shows {o} that no tool of the domain makes" for o in others)
    problems.extend(f"the trace logs a write the cross-check does not know: {u}" for u in unknown)
    for event in timeline.events:
        if not event.succeeded:
            continue
        for description, found in _claims(event):
            if not any(found(change) for change in ledger.changes):
                problems.append(f"the tool result claims {description}; the ledger lacks it")
    if not problems:
        return None
    return "trace and ledger disagree: " + "; ".join(problems)
