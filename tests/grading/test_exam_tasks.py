"""The grader on the real exam: every task's checks, played by a scripted agent on real twins.

For each exam task the task builder's own replay (``envs/energy/tasks/replay.py``) makes
the tool calls a correct agent makes, on a fresh clone. The caller raises each request
before its tool calls; a scripted speaker then says each ``say`` check's value (rendered
in words by ``vamos_env.speech.render``) with its first topic phrase, or the claim a
value-less or text check needs, at the start of its window, and the caller says "Yes,
go ahead." after each read-back a ``confirm`` check waits for. Graded with the code
verifier, every task must pass; taking the caller's agreement away, silencing the agent,
or getting every amount wrong must fail exactly the checks that depend on them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.schema import Check, Task, load_task_set
from vamos_env.grading import LedgerDiff, grade, read_ledger
from vamos_env.speech import render
from vamos_env.types import ToolCall, ToolResult, Transcript, Turn

EXAM = Path(__file__).parents[2] / "envs" / "energy" / "tasks" / "data" / "exam.json"
replay = pytest.importorskip("vamos_env.envs.energy.tasks.replay")
if not EXAM.exists() or not hasattr(replay, "REPLAYERS"):
    pytest.skip("the exam or its replay is not available", allow_module_level=True)

Speech = tuple[str, str, Check | None]  # (speaker, text, the check it serves)


# How a correct agent states each proposition (value-less checks and text values): the
# verifier needs the claim, never a bare topic word.
CLAIMS = {
    "nothing owed on the bills": "You have no balance: every bill is paid in full.",
    "nothing past due": "Nothing on your account is past due.",
    "estimated meter reading": "The meter reading was estimated.",
    "payment declined, bill not paid": "I'm sorry, the card was declined, so the bill is not paid.",
    "arrangement already active": "You already have an active payment arrangement.",
    "shutoff process": "Your account is in the shutoff process.",
    "a promise is not recorded": "I can only record a payment once you've made it.",
    "paper bills by post": "Your bills will come by mail from now on.",
    "no income on file": "We have no income on file for you.",
}
TEXT_CLAIMS = {
    "paperless billing status": lambda v: {
        "on": "Paperless billing is on: your bills come by email.",
        "off": "Paperless billing is off: your bills come by mail.",
    }[v],
    "electricity supplier": lambda v: f"Your electricity supply comes from {v}.",
    "main reason for the increase": lambda v: f"The bill went up mainly because of the {v}.",
}


def statement(check: Check, shift_cents: int = 0) -> str:
    """The agent's sentence that meets a ``say`` check."""
    if check.value is None:
        return CLAIMS[check.topic]
    if check.value_type == "text":
        return TEXT_CLAIMS[check.topic](str(check.value))
    phrase = check.topic_phrases[0] if check.topic_phrases else check.topic
    return f"About the {phrase}: {spoken_value(check, shift_cents)}."


def spoken_value(check: Check, shift_cents: int = 0) -> str:
    value, kind = check.value, check.value_type
    if kind == "rate":
        return f"{value} cents per kilowatt-hour"
    if kind == "money":
        return render.money(int(str(value)) + shift_cents)
    if kind == "date":
        return render.date_spoken(date.fromisoformat(str(value)), with_year=True)
    if kind == "digits":
        return render.characters(str(value))
    if kind == "email":
        return render.email_spoken(str(value))
    if kind == "count":
        words = " ".join(check.topic_phrases)
        if "kwh" in words or "kilowatt" in words:
            return f"{render.number(int(str(value)))} kilowatt-hours"
        unit = "payment" if ("payment" in words or "instal" in words) else "month"
        return render.count(int(str(value)), unit)
    return str(value)


# The trace position where each request's tool calls begin, by task (set by ``play``).
REQUEST_STARTS: dict[str, list[int]] = {}


def play(task: Task) -> tuple[list[Any], LedgerDiff]:
    """The replay's tool calls on a fresh clone, and the ledger diff they leave."""
    before = default_snapshot().clone()
    after = before.clone()
    clients = after.clients()
    try:
        runner = replay._Replay(CallSession(clients), replay.TaskReport(task.task_id))
        caller = task.caller
        runner.call(
            "verify_caller",
            {
                "account_number": caller.account_number,
                "name_on_account": caller.full_name,
                "second_factor": caller.second_factor.value,
            },
        )
        starts: list[int] = []
        for index, request in enumerate(task.requests):
            starts.append(len(runner.session.trace))
            prefix = f"r{index}_"
            current = replay._Request(
                index,
                request,
                [c for c in task.expected_changes if c.request_index == index],
                {c.id.removeprefix(prefix): c for c in task.checks if c.request_index == index},
            )
            replay.REPLAYERS[request.kind](runner, current)
        assert not runner.report.problems, runner.report.problems
        trace = list(runner.session.trace)
        REQUEST_STARTS[task.task_id] = starts
    finally:
        clients.close()
    return trace, read_ledger(before, after, task.caller.account_number)


def _position(trace: list[Any], tool: str, outcome: str) -> int | None:
    for k, entry in enumerate(trace):
        ok = entry.ok and entry.result.get("changed") is not False
        if entry.tool == "verify_caller":
            ok = entry.result.get("status") == "verified"
        if entry.tool == tool and (outcome == "any" or (outcome == "success") == ok):
            return k
    return None


def speech_plan(task: Task, trace: list[Any], shift_cents: int = 0) -> dict[int, list[Speech]]:
    """What is said after each tool call (by its position in the trace): each request is
    raised by the caller before its first tool call, and its checks are met after that."""
    plan: dict[int, list[Speech]] = defaultdict(list)
    placed: dict[str, int] = {}
    starts = REQUEST_STARTS[task.task_id]
    raised = [max(0, start - 1) for start in starts]
    for index, request in enumerate(task.requests):
        if index:
            plan[raised[index]].append(("caller", request.says, None))
    for check in [c for c in task.checks if c.kind == "say"]:
        w = check.window
        opened = _position(trace, w.after_tool, w.after_outcome) if w.after_tool else 0
        closed = _position(trace, w.before_tool, w.before_outcome) if w.before_tool else None
        if opened is None:
            continue
        at = opened if w.after_tool else (closed - 1 if closed is not None else 0)
        at = max(at, raised[check.request_index])
        plan[at].append(("agent", statement(check, shift_cents), check))
        placed[check.id] = at
    for check in [c for c in task.checks if c.kind == "confirm"]:
        at = placed.get(check.window.after_check or "", 0)
        plan[at].append(("caller", "Yes, go ahead.", check))

    def order(speech: Speech) -> tuple[int, int]:
        speaker, text, check = speech
        if check is None:  # a request raised: after what the earlier requests say there
            return next(i for i, r in enumerate(task.requests) if r.says == text), 0
        return check.request_index, 1 if speaker == "agent" else 2

    return {at: sorted(said, key=order) for at, said in plan.items()}


def transcript(
    task: Task, trace: list[Any], plan: dict[int, list[Speech]], keep: Callable[[Speech], bool]
) -> Transcript:
    turns: list[Turn] = [Turn(index=0, speaker="caller", text=task.caller.opening_line)]
    for k, entry in enumerate(trace):
        turns.append(
            Turn(
                index=len(turns),
                speaker="tool",
                tool_call=ToolCall(
                    call_id=entry.call_id, name=entry.tool, arguments=entry.arguments or {}
                ),
                tool_result=ToolResult(
                    call_id=entry.call_id,
                    name=entry.tool,
                    ok=entry.ok,
                    result=entry.result,
                    writes=[w.as_dict() for w in entry.writes],
                    verified=entry.verified,
                ),
            )
        )
        for speech in plan.get(k, []):
            if keep(speech):
                speaker, text, _ = speech
                turns.append(Turn(index=len(turns), speaker=speaker, text=text))  # type: ignore[arg-type]
    return Transcript(task_id=task.task_id, turns=turns)


TASKS = list(load_task_set(EXAM).tasks)


@pytest.fixture(scope="module")
def played() -> dict[str, tuple[Task, list[Any], LedgerDiff]]:
    return {t.task_id: (t, *play(t)) for t in TASKS}


def _failing(verdict: Any) -> set[str]:
    return {c.id for c in verdict.all_checks() if c.passed is not True}


def test_every_exam_task_passes_when_every_check_is_met(played: dict[str, Any]) -> None:
    assert len(played) == len(TASKS) >= 50
    for task, trace, ledger in played.values():
        verdict = grade(
            task, transcript(task, trace, speech_plan(task, trace), lambda s: True), ledger
        )
        assert verdict.grading_fault is None, (task.task_id, verdict.grading_fault)
        assert verdict.passed, (task.task_id, [(c.id, c.reason) for c in verdict.all_checks()
                                               if c.passed is not True])  # fmt: skip


def test_without_the_callers_agreement_exactly_the_confirm_checks_fail(
    played: dict[str, Any],
) -> None:
    tested = 0
    for task, trace, ledger in played.values():
        confirms = {c.id for c in task.checks if c.kind == "confirm"}
        if not confirms:
            continue
        tested += 1
        plan = speech_plan(task, trace)
        no_yes = transcript(task, trace, plan, lambda s: s[0] != "caller" or s[2] is None)
        verdict = grade(task, no_yes, ledger)
        assert _failing(verdict) == confirms, task.task_id
    assert tested >= 20


def test_a_silent_agent_fails_every_say_check(played: dict[str, Any]) -> None:
    for task, trace, ledger in list(played.values())[::5]:
        plan = speech_plan(task, trace)
        verdict = grade(task, transcript(task, trace, plan, lambda s: s[0] != "agent"), ledger)
        says = {c.id for c in task.checks if c.kind in ("say", "confirm")}
        assert says <= _failing(verdict), task.task_id
        assert verdict.grading_fault is None


def test_every_amount_a_dollar_off_fails_the_money_checks(played: dict[str, Any]) -> None:
    tested = 0
    for task, trace, ledger in played.values():
        money = {c.id for c in task.checks if c.value_type == "money" and c.tolerance < 100}
        if not money:
            continue
        tested += 1
        plan = speech_plan(task, trace, shift_cents=100)
        verdict = grade(task, transcript(task, trace, plan, lambda s: True), ledger)
        assert money <= _failing(verdict), task.task_id
    assert tested >= 20
