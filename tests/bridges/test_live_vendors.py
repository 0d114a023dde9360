"""One whole exam call to each real speech-to-speech service, through its bridge.

Marked ``live`` and skipped without the vendor's key (and without the audio extra).
Each runs the first exam task, calm caller, quiet room, at wall-clock pace, against the
model the bridge defaults to or the one named in its variable (``OPENAI_REALTIME_MODEL``,
``GEMINI_LIVE_MODEL``). They check the contract, not the model's skill: the session
opened, audio went both ways, the model called tools that the call ran, the vendor
reported usage that the runner can price, and nothing was the agent's fault.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import Any

import pytest

pytestmark = [pytest.mark.live, pytest.mark.slow]


def _first_exam_task() -> str:
    data = resources.files("vamos_env.envs.energy.tasks").joinpath("data/exam.json").read_text()
    return str(json.loads(data)["tasks"][0]["task_id"])


def _play(agent: Any) -> Any:
    from vamos_env.channel.audio.engines import missing_reason

    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    from vamos_env.duplex.env import VamosEnergyDuplexEnv
    from vamos_env.duplex.run import play

    options = {"task_id": _first_exam_task(), "persona": "calm", "background": "clean"}
    try:
        return play(VamosEnergyDuplexEnv("exam"), agent, seed=0, options=options, pace=True)
    finally:
        agent.close()


def _check(played: Any) -> None:
    final = played.final
    assert played.agent_fault is None, played.agent_fault
    metrics = final["duplex"]["metrics"]
    assert metrics["audio_out_s"] > 5 and metrics["audio_in_s"] > 5
    said = [t for t in final["transcript"]["turns"] if t["speaker"] == "agent" and t["text"]]
    assert len(said) >= 2
    tools = [t["tool_call"] for t in final["transcript"]["turns"] if t.get("tool_call")]
    assert tools, "the model called no tool"
    assert "verdict" in final


@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="needs OPENAI_API_KEY")
def test_live_openai_realtime_plays_an_exam_call() -> None:
    from vamos_env.bridges.realtime import RealtimeAgent

    agent = RealtimeAgent()
    played = _play(agent)
    _check(played)
    assert agent.usage.prompt_tokens > 0 and agent.usage.audio_completion_tokens > 0


@pytest.mark.skipif(
    not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")),
    reason="needs GOOGLE_API_KEY or GEMINI_API_KEY",
)
def test_live_gemini_live_plays_an_exam_call() -> None:
    from vamos_env.bridges.gemini_live import GeminiLiveAgent

    agent = GeminiLiveAgent()
    played = _play(agent)
    _check(played)
    assert agent.usage.prompt_tokens > 0 and agent.usage.audio_completion_tokens > 0
