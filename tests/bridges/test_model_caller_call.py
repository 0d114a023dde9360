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


def _session(kind: str, fake: Any) -> Any:
    """The caller's session on the local server: it opens the call, as the scripted caller
    does 1 s in, and hangs up with ``end_call``."""
    if kind == "realtime":
        return RealtimeAgent(
            base_url=fake.base_url,
            api_key="test",
            end_call_tool=True,
            greet=True,
            silence_duration_ms=800,
        )
    from vamos_env.bridges.gemini_live import GeminiLiveAgent
    from vamos_env.callers.llm import ANSWERED

    return GeminiLiveAgent(
        "gemini-2.5-flash-native-audio-preview-12-2025",
        api_key=fake.api_key,
        base_url=fake.base_url,
        ssl_context=fake.ssl_context(),
        end_call_tool=True,
        opening=ANSWERED,
    )


@pytest.mark.slow
@pytest.mark.bridge_call
@pytest.mark.audio
@needs_audio
@pytest.mark.parametrize("kind", ["realtime", "gemini-live"])
def test_a_whole_exam_call_with_a_model_session_playing_the_caller(kind: str) -> None:
    from vamos_env.duplex.cascade import CascadeAgent
    from vamos_env.duplex.env import VamosEnergyDuplexEnv
    from vamos_env.duplex.run import play
    from vamos_env.testing.fake_gemini_live import FakeGeminiLiveServer

    task = resolve_tasks("exam").tasks[0]
    options = {"task_id": task.task_id, "persona": "calm", "background": "clean"}
    sessions: list[Any] = []
    server_type = FakeRealtimeServer if kind == "realtime" else FakeGeminiLiveServer
    with server_type(agent_factory=caller_cascade(task, "calm")) as fake:

        def session(for_task: Any, persona: str) -> Any:
            assert for_task.task_id == task.task_id and persona == "calm"
            sessions.append(_session(kind, fake))
            return sessions[-1]

        env = VamosEnergyDuplexEnv("exam", caller=kind, caller_session=session)
        played = play(env, CascadeAgent(), seed=0, options=options)
        env.close()
        failures = list(getattr(fake, "failures", []))
    final = played.final
    turns = final["transcript"]["turns"]
    caller_turns = [t["text"] for t in turns if t["speaker"] == "caller"]
    metrics = final["duplex"]["metrics"]
    print(
        f"\n{kind} caller: reward {final['reward']} end {final['end_reason']} "
        f"fault {played.agent_fault} caller turns {len(caller_turns)} call "
        f"{metrics.get('duration_s')} s wall {played.wall_s:.1f} s latency median "
        f"{metrics.get('latency_median_s')} deviations {final['deviations']}"
    )
    for turn in turns:
        print(f"  {turn['speaker']:>6}: {turn['text'] or json.dumps(turn.get('tool_call'))}")
    print("caller usage", sessions[0].usage.as_dict(), "server failures", failures)
    assert played.agent_fault is None and failures == []
    assert played.info["caller"] == kind
    assert "caller_fault" not in [e["kind"] for e in final["duplex"]["events"]]
    assert all(d["kind"] != "caller_error" for d in final["deviations"])
    # The caller's turns are what its session said, per the session's transcript.
    said = [e["said"] for e in sessions[0].log if "said" in e]
    assert caller_turns and all(
        any(words.startswith(text) or text == words for words in said) for text in caller_turns
    )
    tools = [t["tool_call"]["name"] for t in turns if t.get("tool_call")]
    assert "verify_caller" in tools
    assert final["end_reason"] == "hang_up" and final["verdict"]
