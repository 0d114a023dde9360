"""Single cases, the composer's validity rule, and task ids."""

from __future__ import annotations

from collections import Counter

import pytest

from vamos_env.envs.energy.tasks.catalogue import KIND_ORDER, BuiltRequest, RequestSpec
from vamos_env.envs.energy.tasks.compose import (
    Builder,
    Path,
    Pool,
    Rejection,
    parse_task_id,
    select_singles,
)
from vamos_env.envs.energy.tasks.state import AccountState


def grow(
    builder: Builder, states: dict[str, AccountState], slot: str, *steps: str
) -> Path | Rejection:
    return builder.path(slot, states[slot], [RequestSpec.parse(s) for s in steps])


def rejection(
    builder: Builder, states: dict[str, AccountState], slot: str, *steps: str
) -> Rejection:
    result = grow(builder, states, slot, *steps)
    assert isinstance(result, Rejection), f"{steps} was kept"
    return result


def test_singles_cover_every_kind_and_spread_over_accounts(states: dict[str, AccountState]) -> None:
    singles = select_singles(states)
    assert len(singles) == 112 == len({s.id for s in singles})
    per_kind = Counter(s.spec.kind for s in singles)
    assert set(per_kind) == set(KIND_ORDER)
    assert min(per_kind.values()) >= 2
    per_account = Counter(s.slot for s in singles)
    assert len(per_account) == 24
    assert max(per_account.values()) - min(per_account.values()) <= 1
    assert select_singles(states) == singles


# The acceptance: at least one rejected extension of each kind.


def test_rejected_invalid_after_a_preceding_write(
    builder: Builder, states: dict[str, AccountState]
) -> None:
    # Paying the August bill leaves nothing past due, so no arrangement is possible.
    paid = rejection(builder, states, "A04", "pay_bill-aug", "create_arrangement-6")
    assert paid.reason == "invalid" and "below_minimum" in paid.detail
    # The August bill moved into the new arrangement: it can no longer be paid.
    moved = rejection(builder, states, "A04", "create_arrangement-6", "pay_bill-aug")
    assert moved.reason == "invalid" and "not open" in moved.detail
    # Nothing can have been paid on an arrangement opened in this call.
    fresh = rejection(builder, states, "A04", "create_arrangement-6", "record_arrangement_payment")
    assert fresh.reason == "invalid" and "opened in this call" in fresh.detail
    # Without the write, the same requests are valid.
    assert isinstance(grow(builder, states, "A04", "create_arrangement-6"), Path)
    assert isinstance(grow(builder, states, "A04", "pay_bill-aug"), Path)


def test_rejected_duplicate_requirement(builder: Builder, states: dict[str, AccountState]) -> None:
    assert rejection(builder, states, "A04", "balance", "balance").reason == "duplicate_requirement"
    again = rejection(builder, states, "A04", "create_arrangement-6", "arrangement_already_active")
    assert again.reason == "duplicate_requirement"
    promise = rejection(builder, states, "A16", "record_arrangement_payment", "promise_to_pay")
    assert promise.reason == "duplicate_requirement"
    # The same kind on another object is a different requirement.
    assert isinstance(grow(builder, states, "A09", "explain_bill-sep", "explain_bill-jun"), Path)


def test_rejected_after_a_transfer(builder: Builder, states: dict[str, AccountState]) -> None:
    after = rejection(builder, states, "A04", "supervisor", "balance")
    assert after.reason == "after_transfer" and "supervisor" in after.detail
    assert (
        rejection(builder, states, "A07", "arrangement_shutoff", "supplier").reason
        == "after_transfer"
    )
    assert isinstance(grow(builder, states, "A07", "supplier", "arrangement_shutoff"), Path)


def test_rejected_second_use_of_a_write_tool(
    builder: Builder, states: dict[str, AccountState]
) -> None:
    reused = rejection(builder, states, "A12", "pay_bill-jul", "pay_after_decline-aug")
    assert reused.reason == "write_tool_reused" and "make_payment" in reused.detail


def test_kept_extension_sees_the_earlier_write(
    builder: Builder, states: dict[str, AccountState]
) -> None:
    path = grow(builder, states, "A16", "record_arrangement_payment", "arrangement_status")
    assert isinstance(path, Path)
    status = path.steps[1]
    values = {c.id: c.value for c in status.checks}
    # The recorded payment settles the overdue August instalment; the last one, due
    # September 16, is next and nothing is overdue any more.
    assert values == {
        "r1_outstanding": 8000,
        "r1_next_amount": 8000,
        "r1_next_due_date": "2026-09-16",
    }
    assert all(c.window.after_tool == "modify_payment_arrangement" for c in status.checks)


def test_pool_paths_are_valid_and_ids_round_trip(
    pool: Pool, builder: Builder, states: dict[str, AccountState]
) -> None:
    ids = [p.id for p in pool.combinations]
    assert len(ids) == len(set(ids))
    assert {len(p) for p in pool.combinations} == {2, 3, 4}
    for path in pool.combinations[::25]:
        slot, specs = parse_task_id(path.id)
        rebuilt = builder.path(slot, states[slot], specs)
        assert isinstance(rebuilt, Path) and rebuilt.id == path.id
        assert not any(step.ends_call for step in path.steps[:-1])
        tools = [t for step in path.steps for t in step.write_tools]
        assert len(tools) == len(set(tools))
        requirements = [step.requirement for step in path.steps]
        assert len(requirements) == len(set(requirements))
    assert parse_task_id("s-pay_bill-a04-aug") == ("A04", (RequestSpec("pay_bill", "aug"),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x-a04-balance", "starting 's-' or 'c-'"),
        ("c-q4-balance", "expected an account slot"),
        ("c-a04-balance.shout", "got 'shout'"),
    ],
)
def test_bad_task_ids_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_task_id(text)


def test_built_requests_are_remembered(builder: Builder, states: dict[str, AccountState]) -> None:
    spec = RequestSpec("balance")
    first = builder.build(states["A04"], spec, 0)
    assert isinstance(first, BuiltRequest)
    assert builder.build(states["A04"], spec, 0) is first
