"""The scripted caller on every task of the shipped exam, against a correct answer-key agent.

This holds the caller to the real catalogue's wording (requests, consent values,
refusals, private facts) for every persona. The issue's acceptance run with the
reference agent goes through the episode loop once that agent exists; this is its
offline stand-in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vamos_env.callers.persona import load_persona
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


# --- an agent that puts filler before each question, on the real payment tasks -----------

FILLERS = ("One second.", "Sure thing!", "Thanks for waiting.", "Let me pull that up.")


class FillerAgent:
    """The reference solver, with filler before every turn that asks the caller something.

    It keeps under a caller's interruption limit (the sceptic cuts in after 20 words),
    so that what changes is only the words around the question.
    """

    def __init__(self, limit: int | None) -> None:
        from vamos_env.agents.reference import ReferenceAgent

        self.agent = ReferenceAgent()
        self.limit = limit
        self.said = 0

    def reset(self, info) -> None:
        self.agent.reset(info)

    def act(self, observation, info=None):
        action = self.agent.act(observation, info)
        text = action.get("text", "") if action.get("type") == "say" else ""
        if "?" in text:
            self.said += 1
            padded = f"{FILLERS[self.said % len(FILLERS)]} {text}"
            if self.limit is None or len(padded.split()) <= self.limit:
                action = {**action, "text": padded}
        return action


def play_exam_task(env, agent, task_id: str, persona: str) -> dict:
    observation, info = env.reset(
        seed=0, options={"task_id": task_id, "persona": persona, "background": "clean"}
    )
    agent.reset(info)
    while True:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return info


def _tools(info: dict) -> list[tuple[str, str]]:
    return [
        (t["tool_call"]["name"], str(t["tool_result"]["result"].get("error", "ok"))[:40])
        for t in info["transcript"]["turns"]
        if t["speaker"] == "tool"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("persona", ["calm", "angry", "sceptic"])
def test_filler_before_each_question_changes_no_payment_call(persona) -> None:
    """On every exam payment task the caller does what it does for the reference: names the
    first card, agrees, hears the decline, names the other one (the same tool calls, the
    same verdict, no deviation)."""
    from vamos_env.agents.reference import ReferenceAgent
    from vamos_env.envs.energy.env import VamosEnergyEnv

    # No recogniser in the loop: what is compared is the caller's understanding, and the
    # filler's extra words would otherwise draw different recognition errors.
    try:
        env = VamosEnergyEnv(recogniser="ideal")  # type: ignore[call-arg]
    except TypeError:  # a build whose text channel has no recogniser profiles
        env = VamosEnergyEnv()
    tasks = [
        t
        for t in env.task_set.tasks
        if any(r.kind in ("pay_bill", "pay_after_decline") for r in t.requests)
    ]
    assert len(tasks) >= 20
    limit = load_persona(persona).behaviours.interrupt_after_words
    declines = 0
    for task in tasks:
        bare = play_exam_task(env, ReferenceAgent(), task.task_id, persona)
        padded = play_exam_task(env, FillerAgent(limit), task.task_id, persona)
        assert bare["deviations"] == [] and padded["deviations"] == [], task.task_id
        assert _tools(padded) == _tools(bare), task.task_id
        assert padded["verdict"]["passed"] == bare["verdict"]["passed"], task.task_id
        if any(name == "make_payment" and "declin" in error for name, error in _tools(padded)):
            declines += 1
    assert declines >= 10
