"""The OpenAI Realtime bridge and its offline server: the wire protocol with the raw SDK,
barge-in, dead servers, and one whole exam call against the local voice stack."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import numpy as np
import openai
import pytest

from vamos_env.bridges.audio import Resampler
from vamos_env.bridges.realtime import (
    PCM_RATE,
    RealtimeAgent,
    RealtimeFault,
    pcm24_b64,
    realtime_tools,
)
from vamos_env.channel.audio.dsp import RATE
from vamos_env.channel.audio.engines import missing_reason
from vamos_env.envs.energy.prompt import system_prompt
from vamos_env.envs.energy.tools.catalog import tool_schemas
from vamos_env.testing.fake_realtime import FakeRealtimeServer, ServedCascade

FRAME = 320
needs_audio = pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))
INFO = {"system_prompt": system_prompt(), "tools": tool_schemas(), "persona": "calm"}


# -- a voice stack without Whisper or Piper, for protocol tests --------------------------------
def tone(seconds: float, hz: float = 220.0) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return 0.1 * np.sin(2 * np.pi * hz * t)


class Scripted:
    """A text agent that plays a fixed list of actions and keeps what it was told."""

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self.actions, self.seen = list(actions), []

    def reset(self, info: Any) -> None:
        pass

    def act(self, observation: str, info: Any = None) -> dict[str, Any]:
        self.seen.append((observation, dict(info or {})))
        return self.actions.pop(0) if self.actions else {"type": "say", "text": "Goodbye."}


def stub_factory(actions: list[dict[str, Any]], holder: list[Any]) -> Any:
    def make(settings: Any) -> ServedCascade:
        agent = Scripted(actions)
        holder.append(agent)
        return ServedCascade(
            settings=settings,
            agent=agent,
            synthesize=lambda text: tone(0.25 * len(text.split())),
            recognise=lambda audio: "I would like to check my bill",
        )

    return make


def b64(audio: np.ndarray) -> str:
    return pcm24_b64(audio, Resampler(RATE, PCM_RATE))


def until(conn: Any, kind: str, *, feed: bool = False, limit_s: float = 10.0) -> list[Any]:
    """Events up to and including the first ``kind`` (appending silence while waiting, so
    the server's cascade steps)."""
    got: list[Any] = []
    deadline = time.monotonic() + limit_s
    silence = b64(np.zeros(FRAME * 5))
    while time.monotonic() < deadline:
        if feed:
            conn.input_audio_buffer.append(audio=silence)
        try:
            raw = conn._connection.recv(timeout=0.05, decode=False)
        except TimeoutError:
            continue
        event = json.loads(raw)
        got.append(event)
        if event["type"] == kind:
            return got
    raise AssertionError(f"no {kind} within {limit_s} s; got {[e['type'] for e in got]}")


@pytest.fixture
def agents() -> list[Any]:
    return []


@pytest.fixture
def server(agents: list[Any]) -> Any:
    actions = [
        {"type": "tool_call", "name": "lookup_account", "arguments": {"account_number": "1234"}},
        {"type": "say", "text": "I found your account and your balance is forty dollars today"},
    ]
    with FakeRealtimeServer(agent_factory=stub_factory(actions, agents)) as fake:
        yield fake


def connect(server: FakeRealtimeServer, key: str = "test") -> Any:
    client = openai.OpenAI(base_url=server.base_url, api_key=key)
    return client.realtime.connect(model="gpt-realtime", max_retries=0)


# -- pure parts ----------------------------------------------------------------------------
def test_the_bridge_asks_to_be_paced_in_wall_time() -> None:
    assert RealtimeAgent.wall_clock is True


def test_tools_go_flat_as_realtime_wants_them() -> None:
    flat = realtime_tools(tool_schemas())
    assert len(flat) == 16
    assert all(set(t) <= {"type", "name", "description", "parameters"} for t in flat)
    assert {t["type"] for t in flat} == {"function"}
    config = RealtimeAgent(silence_duration_ms=800).session_config(INFO)
    assert config["audio"]["input"]["turn_detection"] == {
        "type": "server_vad",
        "silence_duration_ms": 800,
    }
    assert config["audio"]["output"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert (
        RealtimeAgent(turn_detection=None).session_config(INFO)["audio"]["input"]["turn_detection"]
        is None
    )


# -- the wire, with the raw SDK ------------------------------------------------------------
def test_session_update_round_trip(server: FakeRealtimeServer) -> None:
    with connect(server) as conn:
        assert until(conn, "session.created")[-1]["session"]["type"] == "realtime"
        conn.session.update(session=RealtimeAgent(silence_duration_ms=800).session_config(INFO))
        session = until(conn, "session.updated")[-1]["session"]
    assert session["instructions"] == INFO["system_prompt"]
    assert [t["name"] for t in session["tools"]] == [t["function"]["name"] for t in INFO["tools"]]
    assert session["audio"]["input"]["turn_detection"]["silence_duration_ms"] == 800
    assert session["audio"]["input"]["turn_detection"]["create_response"] is True
    assert session["audio"]["output"]["voice"] == "marin"  # unchanged fields stay


def test_a_wrong_key_is_refused_at_the_upgrade(server: FakeRealtimeServer) -> None:
    with pytest.raises(Exception, match="401"), connect(server, key="wrong"):
        pass


def test_errors_come_in_the_services_shape(server: FakeRealtimeServer) -> None:
    with connect(server) as conn:
        until(conn, "session.created")
        conn.send_raw(json.dumps({"type": "session.nonsense", "event_id": "evt_1"}))
        error = until(conn, "error")[-1]["error"]
        assert error["type"] == "invalid_request_error" and error["param"] == "type"
        assert error["code"] == "invalid_value" and error["event_id"] == "evt_1"
        assert "'session.update'" in error["message"]
        # a beta-shaped field is not a GA session field
        conn.send_raw(
            json.dumps(
                {"type": "session.update", "session": {"type": "realtime", "voice": "alloy"}}
            )
        )
        assert until(conn, "error")[-1]["error"]["code"] == "unknown_parameter"
        bad_rate = {
            "type": "realtime",
            "audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}},
        }
        conn.send_raw(json.dumps({"type": "session.update", "session": bad_rate}))
        error = until(conn, "error")[-1]["error"]
        assert error["param"] == "session.audio.input.format.rate"
        conn.response.cancel()
        assert until(conn, "error")[-1]["error"]["code"] == "response_cancel_not_active"
        conn.conversation.item.truncate(item_id="item_nope", content_index=0, audio_end_ms=10)
        assert until(conn, "error")[-1]["error"]["param"] == "item_id"
        conn.session.update(
            session={"type": "realtime", "audio": {"input": {"turn_detection": None}}}
        )
        until(conn, "session.updated")
        conn.input_audio_buffer.commit()
        assert until(conn, "error")[-1]["error"]["code"] == "input_audio_buffer_commit_empty"
        conn.response.create()
        conn.response.create()
        events = until(conn, "error")
        assert events[-1]["error"]["code"] == "conversation_already_has_active_response"
        assert "response.created" in [e["type"] for e in events]
        assert until(conn, "response.done", feed=True)  # the first one still finishes


def test_function_call_round_trip_and_truncate(
    server: FakeRealtimeServer, agents: list[Any]
) -> None:
    with connect(server) as conn:
        until(conn, "session.created")
        conn.session.update(session={**RealtimeAgent(turn_detection=None).session_config(INFO)})
        until(conn, "session.updated")
        conn.conversation.item.create(
            item={
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hi"}],
            }
        )
        conn.response.create()
        events = until(conn, "response.done", feed=True)
        kinds = [e["type"] for e in events]
        assert kinds.index("response.created") < kinds.index("response.output_item.added")
        call = next(e for e in events if e["type"] == "response.function_call_arguments.done")
        assert call["name"] == "lookup_account"
        assert json.loads(call["arguments"]) == {"account_number": "1234"}
        done = events[-1]["response"]
        assert done["status"] == "completed" and done["output"][0]["call_id"] == call["call_id"]
        assert done["usage"]["output_tokens"] > 0
        # answer the call; the model resumes only when asked
        result = {"found": True, "balance": "40.00"}
        conn.conversation.item.create(
            item={
                "type": "function_call_output",
                "call_id": call["call_id"],
                "output": json.dumps(result),
            }
        )
        conn.response.create()
        events = until(conn, "response.done", feed=True)
        assert agents[0].seen[-1][0] == json.dumps(result)  # the cascade got the result as text
        kinds = [e["type"] for e in events]
        for kind in (
            "response.output_item.added",
            "response.content_part.added",
            "response.output_audio.delta",
            "response.output_audio.done",
            "response.output_audio_transcript.done",
            "response.output_item.done",
        ):
            assert kind in kinds, kind
        deltas = [e for e in events if e["type"] == "response.output_audio.delta"]
        item_id = deltas[0]["item_id"]
        audio_ms = sum(len(base64.b64decode(e["delta"])) // 2 for e in deltas) * 1000 // PCM_RATE
        assert audio_ms == pytest.approx(0.25 * 11 * 1000, abs=2)  # 11 words, all sent at once
        # an answer for a call that does not exist is refused
        conn.conversation.item.create(
            item={"type": "function_call_output", "call_id": "call_nope", "output": "{}"}
        )
        assert until(conn, "error")[-1]["error"]["param"] == "item.call_id"
        # truncation: past the audio is an error, inside it cuts the words
        conn.conversation.item.truncate(
            item_id=item_id, content_index=0, audio_end_ms=audio_ms + 50
        )
        error = until(conn, "error")[-1]["error"]
        assert "already shorter" in error["message"]
        conn.conversation.item.truncate(
            item_id=item_id, content_index=0, audio_end_ms=audio_ms // 2
        )
        truncated = until(conn, "conversation.item.truncated")[-1]
        assert truncated["audio_end_ms"] == audio_ms // 2
    cascade_cut = [e["cut"] for e in server.sessions[0].cascade.log if "cut" in e]
    assert cascade_cut == ["I found your account and"]


# -- the bridge ----------------------------------------------------------------------------
@pytest.mark.audio
@needs_audio
@pytest.mark.parametrize("detection", ["server_vad", None])
def test_bridge_barge_in_truncates_at_the_milliseconds_played(
    agents: list[Any], detection: str | None
) -> None:
    """Server turn detection, or the bridge's own detector committing each turn."""
    from vamos_env.channel.audio import engines

    speech = engines.synthesize("Hello, I am calling about the bill for my apartment, thank you.")
    actions = [{"type": "say", "text": " ".join(["word"] * 24)}]  # 6 s of tone
    with FakeRealtimeServer(agent_factory=stub_factory(actions, agents)) as fake:
        bridge = RealtimeAgent(
            base_url=fake.base_url,
            api_key="test",
            greet=True,
            answer_timeout_s=5,
            turn_detection=detection,
        )
        bridge.reset(INFO)
        out, began = [], time.perf_counter()
        line = np.concatenate([np.zeros(RATE * 2), speech, np.zeros(RATE)])
        line = line[: len(line) // FRAME * FRAME]
        for k in range(0, len(line), FRAME):
            audio, _ = bridge.step(line[k : k + FRAME], [])
            out.append(audio)
            ahead = (k + FRAME) / RATE - (time.perf_counter() - began)
            if ahead > 0:
                time.sleep(ahead)
        bridge.close()
    played = np.concatenate(out)
    cut = [e for e in bridge.log if "cut" in e]
    assert len(cut) == 1, bridge.log
    truncate = fake.sessions[0].received_of("conversation.item.truncate")
    assert [t["audio_end_ms"] for t in truncate] == [cut[0]["played_ms"]]
    # the greeting played until the caller's onset was confirmed, and not a frame more
    voiced = np.abs(played).reshape(-1, FRAME).max(axis=1) > 0.01
    first = np.flatnonzero(voiced)[0]
    stretch = np.flatnonzero(~voiced[first:])[0]
    assert stretch * FRAME == pytest.approx(cut[0]["played_ms"] * RATE / 1000, abs=2 * FRAME)
    # the caller starts at 2 s; wall-clock pacing on a loaded machine moves the rest a little
    assert 1000 < cut[0]["played_ms"] < 2800 and cut[0]["of_ms"] == 6000, bridge.log
    # the server's cascade was told what it had said, and answered the caller's turn after
    assert [e["cut"] for e in fake.sessions[0].cascade.log if "cut" in e] == [cut[0]["cut"]]
    assert bridge.log[-1]["said"] == "Goodbye." and bridge.usage.requests == 2
    assert fake.failures == []
    # The record carries the audio tokens apart and prices them at the audio rates.
    from vamos_env.grading.llm import price_of
    from vamos_env.runner.rollout import _cost, _usage_of

    usage = _usage_of(bridge)
    assert usage.model == "gpt-realtime" and usage.requests == 2
    assert usage.audio_completion_tokens == bridge.usage.output_audio_tokens > 0
    assert usage.audio_prompt_tokens == bridge.usage.input_audio_tokens
    price = price_of("gpt-realtime")
    assert price is not None
    text_rates = price.cost(usage.prompt_tokens, usage.completion_tokens)
    assert (
        _cost(usage, None) == pytest.approx(price.usage_cost(usage))
        and _cost(usage, None) > text_rates
    )


def test_a_mute_server_is_a_fault_within_the_timeout() -> None:
    with FakeRealtimeServer(mute=True) as fake:
        bridge = RealtimeAgent(
            base_url=fake.base_url, api_key="test", greet=True, answer_timeout_s=1.0
        )
        bridge.reset(INFO)
        began = time.perf_counter()
        with pytest.raises(RealtimeFault, match="no response within 1 s"):
            while time.perf_counter() - began < 5:
                bridge.step(np.zeros(FRAME), [])
                time.sleep(0.02)
        assert time.perf_counter() - began < 2.0
        bridge.close()


def test_a_server_that_goes_away_is_a_fault() -> None:
    with FakeRealtimeServer(close_after_appends=3) as fake:
        bridge = RealtimeAgent(base_url=fake.base_url, api_key="test", answer_timeout_s=1.0)
        bridge.reset(INFO)
        began = time.perf_counter()
        with pytest.raises(RealtimeFault, match=r"closed|lost"):
            while time.perf_counter() - began < 5:
                bridge.step(np.zeros(FRAME), [])
                time.sleep(0.02)
        assert time.perf_counter() - began < 2.0


def test_no_server_is_a_fault_at_reset() -> None:
    with FakeRealtimeServer() as fake:
        base = fake.base_url
    began = time.perf_counter()
    with pytest.raises(RealtimeFault, match="could not open"):
        RealtimeAgent(base_url=base, api_key="test", connect_timeout_s=2).reset(INFO)
    assert time.perf_counter() - began < 3


# -- one whole exam call ---------------------------------------------------------------------
def first_exam_task() -> str:
    from importlib import resources

    path = resources.files("vamos_env.envs.energy.tasks") / "data" / "exam.json"
    return json.loads(path.read_text())["tasks"][0]["task_id"]


@pytest.mark.slow
@pytest.mark.bridge_call
@pytest.mark.audio
@needs_audio
def test_a_whole_exam_call_through_the_bridge_matches_the_cascade() -> None:
    """The same call (exam task 1, calm, clean, seed 0) played by the cascade directly and
    by the Realtime bridge against the cascade behind the fake server. The bridge is paced
    to the wall clock: the server hears audio in wall time, and an unpaced bridge sends it
    faster than the server can listen, so its answers would come late on the call's clock."""
    from vamos_env.duplex.cascade import CascadeAgent
    from vamos_env.duplex.env import VamosEnergyDuplexEnv
    from vamos_env.duplex.run import play

    options = {"task_id": first_exam_task(), "persona": "calm", "background": "clean"}
    direct = play(VamosEnergyDuplexEnv("exam"), CascadeAgent(), seed=0, options=options)
    with FakeRealtimeServer() as fake:
        bridge = RealtimeAgent(base_url=fake.base_url, api_key="test", silence_duration_ms=800)
        bridged = play(VamosEnergyDuplexEnv("exam"), bridge, seed=0, options=options, pace=True)
        bridge.close()
    for name, played in (("cascade", direct), ("realtime", bridged)):
        metrics = played.final["duplex"]["metrics"]
        print(
            f"{name}: reward {played.final['reward']} end {played.final['end_reason']} "
            f"fault {played.agent_fault} latency median {metrics.get('latency_median_s')} "
            f"p90 {metrics.get('latency_p90_s')} call {metrics.get('duration_s')} s "
            f"wall {played.wall_s:.1f} s late {played.late_s:.2f} s"
        )
    print("usage", bridge.usage.as_dict(), "failures", fake.failures)
    assert bridged.agent_fault is None and fake.failures == []
    assert bridge.usage.requests > 0 and bridge.usage.output_audio_tokens > 0
    tools = [
        t["tool_call"]["name"] for t in bridged.final["transcript"]["turns"] if t.get("tool_call")
    ]
    direct_tools = [
        t["tool_call"]["name"] for t in direct.final["transcript"]["turns"] if t.get("tool_call")
    ]
    assert tools[:1] == direct_tools[:1]  # the same first tool, through the wire
    assert bridged.final["reward"] == direct.final["reward"]
