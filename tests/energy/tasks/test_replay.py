"""Replaying tasks through the real tools: the shipped files pass, a wrong answer key fails."""

from __future__ import annotations

from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.tasks.exam import shipped_exam_path, shipped_singles_path
from vamos_env.envs.energy.tasks.replay import replay_task, validate_task_set
from vamos_env.envs.energy.tasks.schema import Task, load_task_set
from vamos_env.twins.snapshot import Snapshot


def test_the_shipped_exam_and_singles_replay_cleanly(snapshot: Snapshot[SeedReport]) -> None:
    for path in (shipped_exam_path(), shipped_singles_path()):
        validation = validate_task_set(load_task_set(path), snapshot)
        assert [r.problems for r in validation.failed] == []
        assert validation.seconds < 20


def exam_task(task_id: str) -> Task:
    exam = load_task_set(shipped_exam_path())
    return next(t for t in exam.tasks if t.task_id == task_id)


def any_exam_task(kind: str) -> Task:
    exam = load_task_set(shipped_exam_path())
    return next(t for t in exam.tasks if kind in t.meta.request_kinds)


def test_a_wrong_check_value_is_named(snapshot: Snapshot[SeedReport]) -> None:
    task = any_exam_task("arrangement_status")
    index = task.meta.request_kinds.index("arrangement_status")
    check = next(c for c in task.checks if c.id == f"r{index}_outstanding")
    assert isinstance(check.value, int)
    wrong = check.model_copy(update={"value": check.value + 1})
    broken = task.model_copy(
        update={"checks": tuple(wrong if c is check else c for c in task.checks)}
    )
    problems = replay_task(broken, snapshot).problems
    assert problems == [
        f"request {index} (arrangement_status): check {check.id}: expected {check.value + 1}, "
        f"the tools gave {check.value}"
    ]


def test_a_wrong_payment_amount_is_refused_by_the_tools(snapshot: Snapshot[SeedReport]) -> None:
    task = any_exam_task("pay_bill")
    change = next(c for c in task.expected_changes if c.tool == "make_payment")
    values = {**change.values, "amount_cents": int(change.values["amount_cents"]) - 100}
    broken = task.model_copy(
        update={
            "expected_changes": tuple(
                c.model_copy(update={"values": values}) if c is change else c
                for c in task.expected_changes
            )
        }
    )
    problems = replay_task(broken, snapshot).problems
    assert any(
        "make_payment should succeed but was refused: Only the full remaining" in p
        for p in problems
    )
    assert any("successful account changes" in p for p in problems)


def test_a_wrong_second_factor_stops_the_replay(snapshot: Snapshot[SeedReport]) -> None:
    task = any_exam_task("balance")
    factor = task.caller.second_factor.model_copy(update={"value": "99999", "kind": "postal_code"})
    broken = task.model_copy(
        update={"caller": task.caller.model_copy(update={"second_factor": factor})}
    )
    assert replay_task(broken, snapshot).problems == [
        "verify_caller: verification: expected 'verified', the tools gave 'not_verified'"
    ]


def test_a_promise_dated_in_the_past_would_be_recorded(snapshot: Snapshot[SeedReport]) -> None:
    task = any_exam_task("promise_to_pay")
    index = task.meta.request_kinds.index("promise_to_pay")
    request = task.requests[index]
    past = request.model_copy(update={"details": {**request.details, "promised_on": "2026-09-09"}})
    requests = tuple(past if r is request else r for r in task.requests)
    problems = replay_task(task.model_copy(update={"requests": requests}), snapshot).problems
    assert (
        f"request {index} (promise_to_pay): "
        "modify_payment_arrangement should be refused but succeeded" in problems
    )
