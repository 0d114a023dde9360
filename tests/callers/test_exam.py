"""The scripted caller on every task of the shipped exam, against a correct answer-key agent.

This holds the caller to the real catalogue's wording (requests, consent values,
refusals, private facts) for every persona. The issue's acceptance run with the
reference agent goes through the episode loop once that agent exists; this is its
offline stand-in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vamos_env.callers.scripted import ScriptedCaller
from vamos_env.envs.energy.tasks.schema import load_task_set

EXAM = Path(__file__).resolve().parents[2] / "envs" / "energy" / "tasks" / "data" / "exam.json"


@pytest.fixture(scope="module")
def exam():
    if not EXAM.exists():
        pytest.skip(f"{EXAM} has not been built yet")
    return load_task_set(EXAM).tasks


@pytest.mark.parametrize(
    ("persona", "money_style"),
    [("calm", "words"), ("angry", "words"), ("sceptic", "words"), ("sceptic-nl", "digits")],
)
def test_every_exam_task_completes_with_a_correct_agent(
    exam, answer_key_agent, converse, persona, money_style
) -> None:
    failures = []
    for task in exam:
        caller = ScriptedCaller(task, persona, rng=7)
        agent = answer_key_agent(task, money_style=money_style)
        call = converse(caller, agent.reply)
        expected = [r.expected_outcome for r in task.requests]
        changes = [(c.request_index, c.tool) for c in task.expected_changes]
        made = [a for a in agent.actions if a[1] != "transfer_to_human"]
        if not (caller.outcomes == expected and caller.goal_met() and made == changes):
            failures.append((task.task_id, call.ending, caller.outcomes, expected))
        assert caller.deviations == []
    assert failures == []


def test_the_exam_is_the_published_size(exam) -> None:
    assert len(exam) == 100


def test_the_deviation_check_finds_nothing_in_a_faithful_caller(
    exam, answer_key_agent, converse
) -> None:
    from vamos_env.callers.deviation import BriefMonitor
    from vamos_env.callers.persona import load_persona

    for task in exam:
        call = converse(ScriptedCaller(task, "calm", rng=1), answer_key_agent(task).reply)
        monitor = BriefMonitor(task, load_persona("calm"))
        for turn, (speaker, text) in enumerate(call.turns):
            if speaker == "agent":
                monitor.agent_said(text)
            else:
                monitor.caller_said(text, turn)
        monitor.call_ended("caller_ended", len(call.turns))  # as if it had ended the call itself
        assert monitor.deviations == [], task.task_id
        assert all(monitor.raised)
