"""``VamosEnergyDuplex-v0``: Gymnasium's checker, and a short call through its step API."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import vamos_env  # noqa: F401  (registers the environments)

pytestmark = pytest.mark.audio


@pytest.fixture(scope="module")
def env() -> gym.Env:
    # One quiet room keeps the checker's resets from synthesizing a cafe each time.
    return gym.make("VamosEnergyDuplex-v0", max_call_s=30.0, background="clean").unwrapped


def test_check_env_passes(env: gym.Env) -> None:
    check_env(env, skip_render_check=True)


def test_the_line_carries_the_callers_voice_and_tools_answer_in_the_same_step(
    env: gym.Env,
) -> None:
    observation, info = env.reset(seed=5, options={"background": "clean", "line": "g711"})
    assert info["line"] == "g711" and info["channel"] == "duplex"
    assert "system_prompt" in info and info["tools"]
    silence = np.zeros(env.frames_per_step * 320, dtype=np.int16)
    heard = [observation["audio"]]
    for _ in range(20):  # 4 s: the caller opens after 1 s
        observation, reward, terminated, truncated, _ = env.step(
            {"audio": silence, "tool_calls": ""}
        )
        heard.append(observation["audio"])
    audio = np.concatenate(heard).astype(np.float64) / 32768
    assert np.sqrt(np.mean(audio[:8000] ** 2)) < 0.003  # the room before the caller speaks
    assert np.sqrt(np.mean(audio[24_000:] ** 2)) > 0.02  # the caller's voice
    call = json.dumps([{"type": "tool_call", "name": "get_account", "arguments": {}}])
    observation, reward, terminated, truncated, info = env.step(
        {"audio": silence, "tool_calls": call}
    )
    results = json.loads(observation["tool_results"])
    assert len(results) == 1 and results[0]["name"] == "get_account"
    assert "error" in results[0]["result"]  # nobody is verified yet
    assert any(e["kind"] == "tool_call" for e in json.loads(observation["events"]))
    observation, reward, terminated, truncated, info = env.step(
        {"audio": silence, "tool_calls": json.dumps({"type": "end_call"})}
    )
    assert terminated and not truncated
    assert reward == 0.0 and info["end_reason"] == "end_call"
    assert info["verdict"]["gate"]["passed"]
    metrics = info["duplex"]["metrics"]
    assert metrics["caller_speech_s"] > 1.0 and metrics["audio_out_s"] == 0.0
    turns = info["transcript"]["turns"]
    assert [t["speaker"] for t in turns] == ["caller", "tool"]


class _HangsUpAt:
    """A frame-level agent that stays silent and ends the call at a given second."""

    duplex = True

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def reset(self, info: object) -> None:
        self.samples = 0

    def step(self, line_audio: np.ndarray, tool_results: object) -> tuple[np.ndarray, list]:
        self.samples += len(line_audio)
        done = self.samples >= self.seconds * 16_000
        return np.zeros(len(line_audio)), [{"type": "end_call"}] if done else []


def test_pacing_holds_the_call_to_the_wall_clock(
    env: gym.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unpaced, the call never waits for the wall clock (however long its first reset takes
    # on a loaded machine: the caller's ear hears its name once per name); paced, it does.
    from vamos_env.duplex import run
    from vamos_env.duplex.run import play

    waits: list[float] = []
    clock = SimpleNamespace(
        perf_counter=time.perf_counter, sleep=lambda s: (waits.append(s), time.sleep(s))
    )
    monkeypatch.setattr(run, "time", clock)  # run.py's clock only
    options = {"background": "clean"}
    fast = play(env, _HangsUpAt(1.5), seed=1, options=options)
    assert waits == []
    paced = play(env, _HangsUpAt(1.5), seed=1, options=options, pace=True)
    assert waits and paced.wall_s >= 1.5
    assert fast.final["end_reason"] == paced.final["end_reason"] == "end_call"
    assert fast.final["transcript"] == paced.final["transcript"]


def test_the_agents_line_is_named_in_the_info_and_a_bad_one_fails_fast(env: gym.Env) -> None:
    _, info = env.reset(seed=5, options={"agent_line": "g711"})
    assert info["line"] == "wideband" and info["agent_line"] == "g711"
    assert env.call.hearing.settings.model == "silero-release"  # tuned to the narrow wire
    with pytest.raises(ValueError, match=r"expected one of .* got 'telegraph'"):
        env.reset(seed=5, options={"agent_line": "telegraph"})
