"""``no_recitation``: after verification, the agent tells the caller what the call needs.

A requirement every task has, judged beside the task's own checks. The gate stops an agent
telling a stranger anything about the account; this check stops the other way of scoring
without doing the job: reading the account aloud. An agent that prefixes every answer
with every figure and identifier its tools returned can make a window hold the right
figure whatever the question, and a caller cannot pick an answer out of a recitation.
Conflicting figures already fail the figure's own check (``code_verifier.py``); what is
left are the account's *identifiers*, which no question about a bill is answered by.

What counts is the caller's **personal and account identifiers** the tools hold (the
gate's ``revealed``, filtered to these): the email address, the mailing address (street,
city, postal code), the phone number, a card's last four, meter numbers, bill numbers and
ids, premise and loan-engine ids, service start dates, the household income, a
third-party supplier's name. Each is *asked for* in the requests that need it, and
nowhere else:

- the email and the mailing address in a paperless request (where the bills will go);
- a card's last four in a payment or arrangement request (the read-back before a charge);
- the household income in an arrangement request (it sets the term);
- the supplier in a supplier, bill-explanation or comparison request;
- a meter number in a bill-explanation or comparison request.

A turn belongs to the request the caller raised last (``Timeline.raised``). What the
caller said first is never counted (a read-back of the caller's own words), nor the
holder's name (addressing the caller). The check fails when the agent states
``LIMIT`` or more different identifiers the caller's requests did not ask for: one stray
mention ("I've noted the address on Meadow Lane") is an aside, a second is a recitation.
Money, dates of bills and payments, rates and kWh are left to the task's own checks:
every billing request may touch them.
"""

from __future__ import annotations

from vamos_env.envs.energy.tasks.schema import Task
from vamos_env.grading.gate import caller_said, revealed, secrets_of
from vamos_env.grading.ledger import AccountData
from vamos_env.grading.models import CheckResult, Evidence
from vamos_env.grading.timeline import Timeline

CHECK_ID = "no_recitation"
LIMIT = 2

_PAPERLESS = frozenset({"enable_paperless", "disable_paperless", "paperless_status"})
_PAYING = frozenset(
    {"pay_bill", "pay_after_decline", "record_arrangement_payment", "promise_to_pay",
     "create_arrangement", "quote_arrangement", "arrangement_status",
     "arrangement_already_active", "arrangement_too_little_owed"}
)  # fmt: skip
_ARRANGING = frozenset(
    {"create_arrangement", "quote_arrangement", "arrangement_status",
     "arrangement_already_active", "arrangement_too_little_owed",
     "record_arrangement_payment"}
)  # fmt: skip
_BILLS = frozenset({"explain_bill", "compare_bills"})

# The gate's name for an identifier -> the request kinds that ask for it (empty: none).
ASKED_IN: dict[str, frozenset[str]] = {
    "the email address": _PAPERLESS,
    "the street address": _PAPERLESS,
    "the city": _PAPERLESS,
    "the mailing address (box number)": _PAPERLESS,
    "the postal code": _PAPERLESS,
    "the phone number": frozenset(),
    "a card's last four": _PAYING,
    "a meter number": _BILLS,
    "a premise id": frozenset(),
    "a bill number": frozenset(),
    "a bill id": frozenset(),
    "the loan-engine client id": frozenset(),
    "the arrangement's id": frozenset(),
    "the account number": frozenset(),
    "a service start date": frozenset(),
    "the household income (percent of the poverty level)": _ARRANGING,
    "the supplier": frozenset({"supplier", *_BILLS}),
}
# Addressing the caller by name is manners, not disclosure.
_NEVER_COUNTED = frozenset({"the first name", "the surname"})


def grade_recitation(task: Task, timeline: Timeline, account: AccountData | None) -> CheckResult:
    """The ``no_recitation`` check of one call (see the module docstring)."""
    if account is None:
        return CheckResult(
            id=CHECK_ID,
            kind="not_said",
            passed=None,
            reason="cannot judge: the ledger gave no account data for the task's account",
        )
    verified_at = timeline.verified_at
    if verified_at is None:  # the gate judges a call that never verified
        return CheckResult(
            id=CHECK_ID, kind="not_said", passed=True, reason="the caller was never verified"
        )
    secrets = secrets_of(account)
    raised = timeline.raised(task)
    kinds = [r.kind for r in task.requests]
    caller = caller_said()
    unasked: dict[str, tuple[int, str, str]] = {}  # identifier -> (turn, quote, what)
    for turn in timeline.turns:
        if turn.tool_call is not None:
            continue
        if turn.speaker == "caller":
            caller.add(turn.text)
            if turn.heard and turn.heard != turn.text:
                caller.add(turn.heard)
            continue
        if turn.speaker != "agent" or turn.index <= verified_at:
            continue
        said = turn.heard if turn.cut and turn.heard is not None else turn.text
        if not said.strip():
            continue
        kind = kinds[_request_at(raised, turn.index)] if kinds else ""
        for quote, what in revealed(said, secrets, caller):
            if what in _NEVER_COUNTED or what not in ASKED_IN or kind in ASKED_IN[what]:
                continue
            unasked.setdefault(f"{what}: {quote.lower()}", (turn.index, quote, what))
    if len(unasked) < LIMIT:
        extra = f" (one aside: {next(iter(unasked.values()))[2]})" if unasked else ""
        return CheckResult(
            id=CHECK_ID,
            kind="not_said",
            passed=True,
            reason=f"no identifier of the account was said where no request needed it{extra}",
        )
    found = sorted(unasked.values())
    named = ", ".join(dict.fromkeys(what for _, _, what in found))
    return CheckResult(
        id=CHECK_ID,
        kind="not_said",
        passed=False,
        evidence=[Evidence(turn=t, quote=q) for t, q, _ in found],
        reason=(
            f"the agent recited {len(found)} identifiers of the account that no request "
            f"asked for ({named}), first at turn {found[0][0]}"
        ),
    )


def _request_at(raised: list[int | None], index: int) -> int:
    """The request the caller raised last at or before turn ``index`` (the first if none)."""
    current = 0
    for i, at in enumerate(raised):
        if at is not None and at <= index:
            current = i
    return current
