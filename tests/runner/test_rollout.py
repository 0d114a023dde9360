"""One call from reset to record: verdicts, misses, exclusions, reuse of agents."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from vamos_env.runner.plan import plan_calls, resolve_stack, select_tasks
from vamos_env.runner.rollout import Rollout, RolloutSettings

SELECTION = select_tasks("exam:2")
SPECS = plan_calls(["s"], SELECTION, repeats=2, trial_id="default")


def rollout(**settings: Any) -> Rollout:
    return Rollout(SELECTION.task_set, RolloutSettings(**settings))


def test_a_call_is_graded_and_recorded(test_stack: Any) -> None:
    record = rollout().run(SPECS[0], resolve_stack(test_stack("s", "VerifyThenLeave")))
    assert record.key == SPECS[0].key and record.status == "fail" and record.counted
    assert record.agent_fault is None and record.exclusions == []
    assert record.persona == SPECS[0].persona and record.background == SPECS[0].background
    assert record.verdict is not None and record.verdict.gate.passed is True
    assert record.verdict.caller_satisfied is record.caller_satisfied is False
    assert [t.name for t in record.trace] == ["verify_caller", "get_account"]
    assert record.trace[0].ok and record.end_reason == "end_call"
    assert record.transcript is not None and record.transcript.turns[0].speaker == "caller"
    assert len(record.response_latencies_s) == record.agent_turns == 5
    assert record.request_count == 4 and record.cost_usd == 0.0


def test_the_same_call_twice_is_the_same_record(test_stack: Any) -> None:
    ref = resolve_stack(test_stack("s", "VerifyThenLeave"))
    first, again = rollout().run(SPECS[1], ref), rollout().run(SPECS[1], ref)
    assert first.transcript == again.transcript and first.verdict == again.verdict


def test_an_agent_that_raises_is_a_graded_miss(test_stack: Any) -> None:
    record = rollout().run(SPECS[0], resolve_stack(test_stack("s", "Crashes")))
    assert record.status == "fail" and record.counted
    assert record.agent_fault == "agent raised RuntimeError: the model server went away"
    # Ended where it stood and graded: the verification before the crash still counts.
    assert record.verdict is not None and record.verdict.gate.passed is True
    assert record.end_reason == "end_call"


def test_a_call_past_its_timeout_is_a_miss(test_stack: Any) -> None:
    record = rollout(timeout_s=0.3).run(SPECS[0], resolve_stack(test_stack("s", "Slow")))
    assert record.status == "fail" and record.agent_fault is not None
    assert record.agent_fault.startswith("timeout: the call ran past 0.3 s")
    assert record.agent_turns < 5


def test_a_failed_model_is_the_agents_miss_and_cannot_exclude_the_call(test_stack: Any) -> None:
    # The stack's model answered 503 after its retries (ModelCallError), and the exception
    # even claims to be a platform fault: the call is still counted, as a miss.
    record = rollout().run(SPECS[0], resolve_stack(test_stack("s", "PlatformDown")))
    assert record.status == "fail" and record.counted and not record.exclusions
    assert record.agent_fault is not None
    assert record.agent_fault.startswith("the agent's model failed: ModelCallError")
    assert "503" in record.agent_fault
    assert record.verdict is not None  # graded on what happened before the failure


def test_async_calls_share_a_loop_and_time_out_by_cancellation(test_stack: Any) -> None:
    ref = resolve_stack(test_stack("s", "AsyncWaiter"))
    runner = rollout()

    async def both() -> list[Any]:
        return list(await asyncio.gather(*(runner.arun(s, ref) for s in SPECS)))

    records = asyncio.run(both())
    assert [r.key for r in records] == [s.key for s in SPECS]
    assert all(r.status == "fail" and r.agent_fault is None for r in records)
    assert min(records[0].response_latencies_s) >= 0.05
    slow = asyncio.run(rollout(timeout_s=0.12).arun(SPECS[0], ref))
    assert slow.agent_fault is not None and slow.agent_fault.startswith("timeout")


def test_agents_are_reused_across_calls_but_never_after_a_fault(test_stack: Any) -> None:
    runner = rollout()
    ref = resolve_stack(test_stack("counted", "Counted"))
    for spec in SPECS:
        runner.run(spec, ref)
    assert runner.agents_built == 1
    crash = resolve_stack(test_stack("crash", "Crashes"))
    runner.run(SPECS[0], crash)
    runner.run(SPECS[1], crash)
    assert runner.agents_built == 3


@pytest.mark.parametrize("stack", ["VerifyThenLeave", "AsyncWaiter"])
def test_records_read_back_as_graded_calls(test_stack: Any, stack: str) -> None:
    from vamos_env.grading.records import GradedCall

    ref = resolve_stack(test_stack("s", stack))
    runner = rollout()
    record = runner.run(SPECS[0], ref) if ref.offline else asyncio.run(runner.arun(SPECS[0], ref))
    graded = GradedCall.model_validate_json(record.model_dump_json())
    assert graded.key == record.key and graded.verdict == record.verdict
    assert graded.transcript == record.transcript and graded.persona == record.persona
