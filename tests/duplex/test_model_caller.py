"""A caller played by a model session (``ModelCaller``), with a stub frame session: its
transcript becomes caller turns at their times, its hang-up and its faults are the
caller's, the monitor holds it to its brief, and the engine runs the rest of the call as
for the scripted caller. No audio models speak here (a tone is the voice); the engine's
detector is the audio extra's, so those tests carry the ``audio`` mark."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from vamos_env.actions import EndCall, ToolCallAction
from vamos_env.channel.audio import engines
from vamos_env.duplex.cascade import agent_voice_synthesizer
from vamos_env.duplex.engine import FRAME, DuplexCall, _NoSpeechChannel, caller_voice_synthesizer
from vamos_env.duplex.line import line_condition
from vamos_env.duplex.model_caller import ModelCaller, spoken_caller_prompt
from vamos_env.duplex.turntaking import turn_taking
from vamos_env.envs.energy.env import resolve_tasks
from vamos_env.episode import Episode

RATE = 16_000


def tone(seconds: float, hz: float = 220.0, level: float = 0.1) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return level * np.sin(2 * np.pi * hz * t)


@pytest.fixture(scope="module")
def task() -> Any:
    return resolve_tasks("exam").tasks[0]


class StubSession:
    """A frame session with the bridges' shape that plays a fixed script on its own clock:
    ``speak`` windows of tone, ``said`` log entries, an end (EndCall) or a fault."""

    pace = True  # tells ModelCaller not to hold the call to the wall clock

    def __init__(
        self,
        *,
        speak: tuple[tuple[float, float], ...] = (),
        said: tuple[tuple[float, str], ...] = (),
        cuts: tuple[tuple[float, str], ...] = (),
        end_at: float | None = None,
        fail_at: float | None = None,
        fail_reset: bool = False,
        tool_at: float | None = None,
    ) -> None:
        self.speak, self.end_at, self.fail_at = speak, end_at, fail_at
        self.fail_reset, self.tool_at = fail_reset, tool_at
        self.script = sorted([(t, "said", s) for t, s in said] + [(t, "cut", s) for t, s in cuts])
        self.info: dict[str, Any] = {}
        self.heard: list[np.ndarray] = []
        self.results: list[Any] = []
        self.log: list[dict[str, Any]] = []
        self.sample = 0
        self.closed = False

    def reset(self, info: Any) -> None:
        if self.fail_reset:
            raise ConnectionError("could not open the session")
        self.info = dict(info)

    def step(self, audio: np.ndarray, results: Any = None) -> tuple[np.ndarray, list[Any]]:
        self.heard.append(np.asarray(audio))
        self.results.extend(results or [])
        start = self.sample
        self.sample += len(audio)
        now = self.sample / RATE
        if self.fail_at is not None and now >= self.fail_at:
            raise RuntimeError("the server closed the session (code 1011)")
        while self.script and self.script[0][0] <= now:
            _, kind, text = self.script.pop(0)
            self.log.append({"time_s": round(now, 3), kind: text})
        actions: list[Any] = []
        if self.tool_at is not None and now >= self.tool_at:
            self.tool_at = None
            actions.append(ToolCallAction("lookup_account", {}, "c1"))
        if self.end_at is not None and now >= self.end_at:
            self.end_at = None
            actions.append(EndCall())
        t = (start + np.arange(len(audio))) / RATE
        voiced = np.zeros(len(audio), dtype=bool)
        for a, b in self.speak:
            voiced |= (t >= a) & (t < b)
        return np.where(voiced, 0.1 * np.sin(2 * np.pi * 220.0 * t), 0.0), actions

    def close(self) -> None:
        self.closed = True


def run_alone(caller: ModelCaller, seconds: float) -> list[np.ndarray]:
    return [caller.frame(np.zeros(FRAME)) for _ in range(round(seconds * RATE / FRAME))]


# -- the model caller alone ------------------------------------------------------------------
def test_the_session_is_opened_with_the_brief_spoken_and_no_tools(task: Any) -> None:
    session = StubSession()
    caller = ModelCaller(session, task, "calm", name="realtime")
    caller.start()
    prompt = session.info["system_prompt"]
    assert prompt == spoken_caller_prompt(task, caller.persona)
    assert task.caller.account_number in prompt and task.caller.opening_line in prompt
    assert "JSON" not in prompt.replace("Never\nsay JSON", "")  # no reply format
    assert "end_call" in prompt and session.info["tools"] == []
    assert caller.fault is None and not caller.pace  # the stub paces itself
    with pytest.raises(RuntimeError, match="audio"):
        caller.open()


def test_what_the_session_said_becomes_caller_words_at_their_times(task: Any) -> None:
    session = StubSession(
        speak=((0.2, 0.8),), said=((0.3, "Hello, I'm calling about my bill."),), end_at=1.0
    )
    caller = ModelCaller(session, task, "calm")
    caller.start()
    frames = run_alone(caller, 0.5)
    said = caller.take_said()
    assert [(s.time_s, s.text) for s in said] == [(0.3, "Hello, I'm calling about my bill.")]
    assert caller.take_said() == []  # each once
    voice = np.concatenate(frames)
    assert np.abs(voice[: round(0.19 * RATE)]).max() == 0 and np.abs(voice[4000:]).max() > 0.05
    run_alone(caller, 0.6)
    assert caller.hung_up and caller.ended and caller.fault is None


def test_a_session_fault_is_the_callers_error_not_the_agents(task: Any) -> None:
    session = StubSession(speak=((0.0, 1.0),), fail_at=0.4)
    caller = ModelCaller(session, task, "calm", name="realtime")
    caller.start()
    frames = run_alone(caller, 1.0)  # never raises
    assert caller.fault is not None and "realtime caller session failed" in caller.fault
    assert "RuntimeError" in caller.fault
    assert [d.kind for d in caller.deviations] == ["caller_error"]
    assert np.abs(np.concatenate(frames)[round(0.42 * RATE) :]).max() == 0  # silent after it

    broken = ModelCaller(StubSession(fail_reset=True), task, "calm")
    broken.start()
    assert broken.ended and "failed to start" in str(broken.fault)


def test_a_tool_call_other_than_end_call_is_answered_with_an_error(task: Any) -> None:
    session = StubSession(tool_at=0.1)
    caller = ModelCaller(session, task, "calm")
    caller.start()
    run_alone(caller, 0.2)
    assert session.results and "no tool 'lookup_account'" in session.results[0]["error"]
    assert session.results[0]["tool_call_id"] == "c1" and not caller.hung_up


# -- in the duplex call ------------------------------------------------------------------------
def make_call(task: Any, session: StubSession, *, background: str = "clean") -> DuplexCall:
    caller = ModelCaller(session, task, "calm", name="stub")
    twins = SimpleNamespace(trace=[], call=lambda name, arguments: {"ok": True})
    episode = Episode(task.task_id, twins, caller, _NoSpeechChannel(), 10**6)
    call = DuplexCall(
        episode,
        background=background,
        rng=np.random.default_rng(0),
        level_db=15.0,
        line=line_condition("wideband"),
        taking=turn_taking("calm"),
        synthesize=caller_voice_synthesizer(engines.CALLER),  # never called: the session speaks
        recognise=lambda audio: "agent words" if len(audio) else "",
        max_call_s=20.0,
        keep_line_audio=True,
        caller_stream=caller,
    )
    caller.start()
    return call


def play(call: DuplexCall, agent: Any, seconds: float) -> None:
    while not call.ended and call.now_s < seconds:
        audio, actions = agent(call.sample)
        call.step(audio, actions)
    call.finish()


def agent_clip(start_s: float, clip: np.ndarray, tool_at: float | None = None) -> Any:
    """An agent that plays ``clip`` from ``start_s`` and calls a tool at ``tool_at``."""
    track = np.zeros(30 * RATE)
    track[round(start_s * RATE) : round(start_s * RATE) + len(clip)] = clip
    done: list[bool] = []

    def step(sample: int) -> tuple[np.ndarray, list[Any]]:
        actions: list[Any] = []
        if tool_at is not None and sample / RATE >= tool_at and not done:
            done.append(True)
            actions.append({"type": "tool_call", "name": "verify_caller", "arguments": {}})
        return track[sample : sample + 10 * FRAME], actions

    return step


@pytest.mark.audio
def test_the_engine_plays_the_sessions_voice_over_the_room_and_runs_the_agent(task: Any) -> None:
    session = StubSession(
        speak=((1.0, 2.5), (5.0, 5.6)),
        said=((1.2, "Hi, I'm calling about my bill."), (5.1, "Thanks, bye.")),
        end_at=5.8,
    )
    call = make_call(task, session, background="street")
    # The agent's speech is real (Piper): the call's detector finds speech, not tones.
    words = agent_voice_synthesizer()("Thank you. Let me check that.")
    play(call, agent_clip(3.0, words, tool_at=3.3 + len(words) / RATE), 15.0)
    assert call.end_reason == "hang_up" and call.episode.end_reason == "hang_up"
    assert 6.2 <= call.now_s <= 6.5  # the hang-up's half-second tail
    kinds = [e.kind for e in call.events]
    assert ("caller_hang_up", "caller_ended") in [(e.kind, e.detail) for e in call.events]
    assert "tool_call" in kinds and "caller_fault" not in kinds
    # The room is mixed in under the caller's voice, on the line to the agent.
    assert call.line_tape is not None
    line = call.line_tape.array()
    assert np.sqrt(np.mean(line[: RATE // 2] ** 2)) > 0.003  # street noise before it speaks
    assert np.sqrt(np.mean(line[round(1.2 * RATE) : 2 * RATE] ** 2)) > 0.05  # its voice
    # The session heard the agent through the line (a frame late).
    heard = np.concatenate(session.heard)
    assert np.abs(heard[: 3 * RATE]).max() == 0 and np.abs(heard[round(3.2 * RATE) :]).max() > 0.05
    turns = [(t.speaker, t.text) for t in call.episode.transcript.turns]
    assert turns == [
        ("caller", "Hi, I'm calling about my bill."),
        ("agent", "agent words"),
        ("tool", ""),
        ("caller", "Thanks, bye."),
    ]
    assert [round(r["start_s"], 2) for r in call.timeline()][::3] == [1.2, 5.1]
    # Metrics find the caller's speech in its voice: the agent answered 0.5 s after it.
    segments = call.caller_segments
    assert len(segments) == 2 and segments[0][0] == pytest.approx(1.0, abs=0.03)
    metrics = call.metrics().as_dict()
    assert metrics["latency_median_s"] == pytest.approx(0.5, abs=0.2)
    assert session.closed
    # The monitor heard the call: the caller hung up without raising its requests.
    assert {d.kind for d in call.episode.caller.deviations} == {"skipped_request"}


@pytest.mark.audio
def test_a_session_fault_ends_the_call_as_a_caller_error(task: Any) -> None:
    session = StubSession(speak=((1.0, 2.0),), said=((1.1, "Hello."),), fail_at=2.0)
    call = make_call(task, session)
    play(call, agent_clip(10.0, tone(1.0)), 15.0)
    assert call.end_reason == "hang_up" and call.now_s == pytest.approx(2.0, abs=0.03)
    details = [(e.kind, e.detail) for e in call.events]
    assert ("caller_hang_up", "caller_error") in details
    assert any(kind == "caller_fault" and "RuntimeError" in d for kind, d in details)
    assert [d.kind for d in call.episode.caller.deviations] == ["caller_error"]  # excluded


@pytest.mark.audio
def test_a_cut_keeps_the_words_played(task: Any) -> None:
    session = StubSession(
        speak=((0.5, 1.5),),
        said=((0.6, "I would like to check my balance please."),),
        cuts=((1.0, "I would like"),),
        end_at=2.0,
    )
    call = make_call(task, session)
    play(call, agent_clip(10.0, tone(1.0)), 5.0)
    caller_turns = [t for t in call.episode.transcript.turns if t.speaker == "caller"]
    assert [(t.text, t.cut) for t in caller_turns] == [("I would like", True)]
    assert "caller_yielded" in [e.kind for e in call.events]


# -- choosing the caller in the environment ----------------------------------------------------
@pytest.mark.audio
def test_the_env_names_its_caller_and_refuses_a_bad_one() -> None:
    from vamos_env.duplex.env import VamosEnergyDuplexEnv

    with pytest.raises(
        ValueError, match=r"caller: expected one of scripted, realtime, gemini-live"
    ):
        VamosEnergyDuplexEnv("exam", caller="gpt-caller")
    with pytest.raises(ValueError, match="caller_session: expected it only with a model caller"):
        VamosEnergyDuplexEnv("exam", caller_session=lambda task, persona: StubSession())

    sessions: list[StubSession] = []

    def session(task: Any, persona: str) -> StubSession:
        sessions.append(StubSession(speak=((0.5, 1.5),), said=((0.6, "Hello."),), end_at=1.6))
        return sessions[-1]

    env = VamosEnergyDuplexEnv(
        "exam", caller="realtime", caller_session=session, background="clean", max_call_s=10.0
    )
    observation, info = env.reset(seed=0, options={"persona": "calm"})
    assert info["caller"] == "realtime" and info["caller_voice"] == "realtime"
    assert sessions[0].info["system_prompt"].startswith("You are role-playing a customer")
    silence = np.zeros(env.frames_per_step * FRAME, dtype=np.int16)
    heard = [observation["audio"]]
    done = False
    final: dict[str, Any] = {}
    while not done:
        observation, _, terminated, truncated, final = env.step(
            {"audio": silence, "tool_calls": ""}
        )
        heard.append(observation["audio"])
        done = terminated or truncated
    audio = np.concatenate(heard).astype(np.float64) / 32768
    assert np.sqrt(np.mean(audio[round(0.6 * RATE) : round(1.4 * RATE)] ** 2)) > 0.05
    assert final["end_reason"] == "hang_up" and final["caller_goal_met"] is False
    caller_turns = [t for t in final["transcript"]["turns"] if t["speaker"] == "caller"]
    assert [t["text"] for t in caller_turns] == ["Hello."]
    assert {d["kind"] for d in final["deviations"]} == {"skipped_request"}
    assert sessions[0].closed
    env.close()
