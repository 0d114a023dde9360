"""Assertion 2, the actions: exactly the expected account changes, in order, with their values.

The changes the agent made are its successful calls of the write tools (``WRITE_TOOLS``
of the task schema) that changed something: a ``set_paperless_billing`` that found the
setting already as asked (``changed: false``) changed nothing and is not counted. Each
expected change is compared with the change at the same position: same tool, and every
value the task names equal to what the call used or reported. A value is looked up in
the call's arguments, then its result, then under the names the tools report it by
(``principal_cents`` is the arrangement's ``financed_cents``, a payment's ``amount_cents``
is its ``amount_paid_cents``, ``enabled`` is the result's ``paperless``, ...).

One check per expected change (``change_1_make_payment``, ...) and one
``no_extra_changes``. That the changes really happened in the services is the
cross-check's job (``crosscheck.py``), which turns any disagreement into a grading fault.
"""

from __future__ import annotations

from typing import Any

from vamos_env.envs.energy.tasks.schema import WRITE_TOOLS, ExpectedChange, Task
from vamos_env.grading.models import Assertion, CheckResult, Evidence
from vamos_env.grading.timeline import Timeline, ToolEvent

# Other names a tool reports a value under: expected key -> keys to try, in order.
_ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "make_payment": {
        "amount_cents": ("amount_cents", "amount_paid_cents"),
        "card_last4": ("card_last4",),
        "payment_method": ("payment_method_id",),
    },
    "create_payment_arrangement": {
        "principal_cents": ("financed_cents", "principal_cents"),
        "arrangement_id": ("arrangement_id",),
    },
    "modify_payment_arrangement": {
        "payment_date": ("payment_date", "payment_day"),
        "paid_on": ("payment_date", "payment_day"),
        "amount_cents": ("amount_cents",),
    },
    "request_due_date_extension": {"new_due_date": ("new_due_date",)},
    "set_paperless_billing": {"enabled": ("enabled", "paperless")},
}


def account_changes(timeline: Timeline) -> list[ToolEvent]:
    """The agent's successful account changes, in call order."""
    return [
        e
        for e in timeline.events
        if e.name in WRITE_TOOLS and e.succeeded and e.result.get("changed") is not False
    ]


def observed_value(event: ToolEvent, key: str) -> tuple[bool, Any]:
    for name in _ALIASES.get(event.name, {}).get(key, (key,)):
        for source in (event.arguments, event.result):
            if name in source:
                return True, source[name]
    for source in (event.arguments, event.result):
        if key in source:
            return True, source[key]
    return False, None


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got or str(expected).lower() == str(got).lower()
    if isinstance(expected, int) and isinstance(got, int):
        return expected == got
    return str(expected) == str(got)


def value_mismatches(expected: ExpectedChange, event: ToolEvent) -> list[str]:
    problems = []
    for key, want in expected.values.items():
        present, got = observed_value(event, key)
        if not present:
            problems.append(f"{key}: expected {want!r}, the call did not use or report it")
        elif not _same(want, got):
            problems.append(f"{key}: expected {want!r}, got {got!r}")
    return problems


def grade_actions(task: Task, timeline: Timeline) -> Assertion:
    made = account_changes(timeline)
    checks: list[CheckResult] = []
    for position, expected in enumerate(task.expected_changes):
        check_id = f"change_{position + 1}_{expected.tool}"
        actual = made[position] if position < len(made) else None
        problems: list[str] = []
        if actual is None:
            problems.append(f"no account change #{position + 1}; the agent made {len(made)}")
        elif actual.name != expected.tool:
            problems.append(f"change #{position + 1} is {actual.name}, expected {expected.tool}")
        else:
            problems.extend(value_mismatches(expected, actual))
        if problems:
            elsewhere = [
                e
                for k, e in enumerate(made)
                if k != position and e.name == expected.tool and not value_mismatches(expected, e)
            ]
            if elsewhere:
                problems.append(
                    f"a matching {expected.tool} was made as change "
                    f"#{made.index(elsewhere[0]) + 1} (out of order)"
                )
        evidence = [] if actual is None else [Evidence(turn=actual.turn, call_id=actual.call_id)]
        checks.append(
            CheckResult(
                id=check_id,
                kind="change",
                passed=not problems,
                evidence=evidence,
                reason="; ".join(problems)
                or f"{expected.tool} with the expected values ({actual.call_id if actual else ''})",
            )
        )
    extra = made[len(task.expected_changes) :]
    checks.append(
        CheckResult(
            id="no_extra_changes",
            kind="no_extra_changes",
            passed=not extra,
            evidence=[Evidence(turn=e.turn, call_id=e.call_id) for e in extra],
            reason=(
                "changes beyond the expected ones: "
                + ", ".join(f"{e.name} ({e.call_id})" for e in extra)
                if extra
                else f"{len(made)} account change(s), as expected"
            ),
        )
    )
    return Assertion(name="actions", checks=checks)
