"""A whole exam call whose CALLER is a speech-to-speech session: a ``RealtimeAgent`` talking
to ``FakeRealtimeServer`` with the caller stack of the task behind it (the scripted caller
as the cascade's decisions, its ear and its persona's voice), while the AGENT is the local
cascade over the reference solver. Offline; the caller's session hears the call in wall
time, so the call runs at wall-clock pace (``make bridge-calls``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vamos_env.bridges.realtime import RealtimeAgent
from vamos_env.channel.audio.engines import missing_reason
from vamos_env.envs.energy.env import resolve_tasks
from vamos_env.testing.caller_cascade import caller_cascade
from vamos_env.testing.fake_realtime import FakeRealtimeServer

needs_audio = pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))


@pytest.mark.slow
@pytest.mark.bridge_call
@pytest.mark.audio
@needs_audio
def test_a_whole_exam_call_with_a_realtime_session_playing_the_caller() -> None:
    from vamos_env.duplex.cascade import CascadeAgent
    from vamos_env.duplex.env import VamosEnergyDuplexEnv
    from vamos_env.duplex.run import play

    task = resolve_tasks("exam").tasks[0]
    options = {"task_id": task.task_id, "persona": "calm", "background": "clean"}
    sessions: list[RealtimeAgent] = []
    with FakeRealtimeServer(agent_factory=caller_cascade(task, "calm")) as fake:

        def session(for_task: Any, persona: str) -> RealtimeAgent:
            assert for_task.task_id == task.task_id and persona == "calm"
            bridge = RealtimeAgent(
                base_url=fake.base_url,
                api_key="test",
                end_call_tool=True,
                greet=True,  # the caller opens the call, as the scripted caller does
                silence_duration_ms=800,
            )
            sessions.append(bridge)
            return bridge

        env = VamosEnergyDuplexEnv("exam", caller="realtime", caller_session=session)
        played = play(env, CascadeAgent(), seed=0, options=options)
        env.close()
    final = played.final
    turns = final["transcript"]["turns"]
    caller_turns = [t["text"] for t in turns if t["speaker"] == "caller"]
    metrics = final["duplex"]["metrics"]
    print(
        f"\nmodel caller: reward {final['reward']} end {final['end_reason']} "
        f"fault {played.agent_fault} caller turns {len(caller_turns)} call "
        f"{metrics.get('duration_s')} s wall {played.wall_s:.1f} s latency median "
        f"{metrics.get('latency_median_s')} deviations {final['deviations']}"
    )
    for turn in turns:
        print(f"  {turn['speaker']:>6}: {turn['text'] or json.dumps(turn.get('tool_call'))}")
    print("caller usage", sessions[0].usage.as_dict(), "failures", fake.failures)
    assert played.agent_fault is None and fake.failures == []
    assert played.info["caller"] == "realtime"
    kinds = [e["kind"] for e in final["duplex"]["events"]]
    assert "caller_fault" not in kinds
    assert all(d["kind"] != "caller_error" for d in final["deviations"])
    assert isinstance(final["deviations"], list)
    # The caller's turns are what its session said, per the session's transcript.
    said = [e["said"] for e in sessions[0].log if "said" in e]
    assert caller_turns and all(
        any(words.startswith(text) or text == words for words in said) for text in caller_turns
    )
    tools = [t["tool_call"]["name"] for t in turns if t.get("tool_call")]
    assert "verify_caller" in tools
    assert final["verdict"] and "reward" in final


@pytest.mark.slow
@pytest.mark.bridge_call
@pytest.mark.audio
@needs_audio
def test_a_whole_exam_call_with_a_gemini_live_session_playing_the_caller() -> None:
    from vamos_env.bridges.gemini_live import GeminiLiveAgent
    from vamos_env.callers.llm import ANSWERED
    from vamos_env.duplex.cascade import CascadeAgent
    from vamos_env.duplex.env import VamosEnergyDuplexEnv
    from vamos_env.duplex.run import play
    from vamos_env.testing.fake_gemini_live import FakeGeminiLiveServer

    task = resolve_tasks("exam").tasks[0]
    options = {"task_id": task.task_id, "persona": "calm", "background": "clean"}
    sessions: list[GeminiLiveAgent] = []
    with FakeGeminiLiveServer(agent_factory=caller_cascade(task, "calm")) as fake:

        def session(for_task: Any, persona: str) -> GeminiLiveAgent:
            bridge = GeminiLiveAgent(
                "gemini-2.5-flash-native-audio-preview-12-2025",
                api_key=fake.api_key,
                base_url=fake.base_url,
                ssl_context=fake.ssl_context(),
                end_call_tool=True,
                opening=ANSWERED,  # the caller opens the call
            )
            sessions.append(bridge)
            return bridge

        env = VamosEnergyDuplexEnv("exam", caller="gemini-live", caller_session=session)
        played = play(env, CascadeAgent(), seed=0, options=options)
        env.close()
    final = played.final
    turns = final["transcript"]["turns"]
    caller_turns = [t["text"] for t in turns if t["speaker"] == "caller"]
    print(
        f"\ngemini-live caller: reward {final['reward']} end {final['end_reason']} "
        f"caller turns {len(caller_turns)} call {final['duplex']['metrics'].get('duration_s')} s "
        f"wall {played.wall_s:.1f} s deviations {final['deviations']}"
    )
    assert played.agent_fault is None
    assert played.info["caller"] == "gemini-live"
    assert "caller_fault" not in [e["kind"] for e in final["duplex"]["events"]]
    said = [e["said"] for e in sessions[0].log if "said" in e]
    assert caller_turns and all(
        any(words.startswith(text) or text == words for words in said) for text in caller_turns
    )
    tools = [t["tool_call"]["name"] for t in turns if t.get("tool_call")]
    assert "verify_caller" in tools
    assert final["end_reason"] == "hang_up"
