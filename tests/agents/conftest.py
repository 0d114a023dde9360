"""Playing an agent through whole exam calls: the episode loop, the scripted caller, the grader.

``play(task, agent, persona, seed)`` does what the environment does for one call, with
no Gymnasium in between: two clones of the seeded services (the pristine baseline for
the ledger and the call's own), a ``CallSession``, the scripted caller, the clean text
channel, the ``Episode`` turn loop, and at the end ``grade`` on the transcript and the
ledger diff. The agent receives the reset info the environment gives (system prompt,
tool schemas, task id, persona, background) and nothing of the task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vamos_env.callers.scripted import ScriptedCaller
from vamos_env.channel.text import TextChannel
from vamos_env.envs.energy.prompt import system_prompt
from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.schema import Task, load_task_set
from vamos_env.envs.energy.tools.catalog import tool_schemas
from vamos_env.episode import Episode
from vamos_env.grading import Verdict, grade, read_ledger

EXAM = Path(__file__).resolve().parents[2] / "envs" / "energy" / "tasks" / "data" / "exam.json"


@dataclass
class Played:
    task: Task
    episode: Episode
    verdict: Verdict

    def failing(self) -> dict[str, list[str]]:
        """Assertion name -> the ids of its checks that did not pass."""
        out: dict[str, list[str]] = {}
        for assertion in (self.verdict.gate, self.verdict.actions, self.verdict.requirements):
            bad = [c.id for c in assertion.checks if c.passed is not True]
            if bad:
                out[assertion.name] = bad
        return out

    def failed_assertions(self) -> set[str]:
        return set(self.failing())

    def describe(self) -> str:
        """The transcript and the failing checks, for an assertion message."""
        lines = [f"task {self.task.task_id}, ended by {self.episode.end_reason}"]
        for turn in self.episode.transcript.turns:
            if turn.tool_call is not None:
                result = turn.tool_result.result if turn.tool_result is not None else {}
                brief = str(result)[:160]
                lines.append(f"  [tool] {turn.tool_call.name}({turn.tool_call.arguments}) {brief}")
            else:
                lines.append(f"  {turn.speaker}: {turn.text}")
        for assertion in (self.verdict.gate, self.verdict.actions, self.verdict.requirements):
            for check in assertion.checks:
                if check.passed is not True:
                    lines.append(f"  FAIL {assertion.name}/{check.id}: {check.reason}")
        if self.verdict.grading_fault:
            lines.append(f"  GRADING FAULT: {self.verdict.grading_fault}")
        return "\n".join(lines)


def reset_info(task: Task, persona: str) -> dict[str, Any]:
    """What the environment's reset hands an agent (never the task's answers)."""
    return {
        "system_prompt": system_prompt(),
        "tools": tool_schemas(),
        "task_id": task.task_id,
        "request_count": len(task.requests),
        "persona": persona,
        "background": "clean",
    }


def play(
    task: Task,
    agent: Any,
    persona: str = "calm",
    seed: int = 0,
    info: dict[str, Any] | None = None,
    session: type[CallSession] = CallSession,
    channel: TextChannel | None = None,
    caller_class: type[ScriptedCaller] = ScriptedCaller,
) -> Played:
    """One call of ``agent`` on ``task``; ``info`` overrides entries of the reset info,
    ``session`` replaces the tool session (a fake that injects service failures),
    ``channel`` the line (a fake that mishears given words), ``caller_class`` the caller
    (a fake that mishears the agent)."""
    snapshot = default_snapshot()
    baseline = snapshot.clone()
    twins = snapshot.clone()
    clients = twins.clients()
    try:
        caller = caller_class(task, persona, rng=seed)
        # The agents' logic, not the recogniser: no recogniser ("ideal"), the clean room.
        if channel is None:
            channel = TextChannel("clean", np.random.default_rng(seed), recogniser="ideal")
        episode = Episode(task.task_id, session(clients), caller, channel, max_agent_turns=80)
        info = {**reset_info(task, persona), **(info or {})}
        agent.reset(info)
        observation = episode.start()
        while not episode.ended:
            observation = episode.step(agent.act(observation, info)).observation
    finally:
        clients.close()
    ledger = read_ledger(baseline, twins, task.caller.account_number)
    return Played(task, episode, grade(task, episode.transcript, ledger))


@pytest.fixture(scope="session")
def exam() -> tuple[Task, ...]:
    return load_task_set(EXAM).tasks


@pytest.fixture(scope="session")
def play_call() -> Callable[..., Played]:
    return play
