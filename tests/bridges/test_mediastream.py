"""The media-stream bridges: framing, marks and clear, faults, and whole calls.

Fast tests drive the bridges against scripted WebSocket agents on loopback (and the local
outside agent with a stub stack in place of the voice stack); the whole exam calls and the
minimal rory-style client need the audio extra and are marked slow.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from websockets.sync.server import serve

from vamos_env.actions import EndCall, ToolCallAction
from vamos_env.bridges.audio import Resampler, mulaw_bytes, pcm_bytes
from vamos_env.bridges.mediastream import AgentFault, PCMStreamAgent, TwilioStreamAgent
from vamos_env.testing.voice_agent import VoiceAgentServer

RATE = 16_000
FRAME = 320
STEP = 10 * FRAME  # the env's default step: 200 ms


def level_db(x: np.ndarray) -> float:
    return float(20 * np.log10(max(np.sqrt(np.mean(np.square(x))), 1e-12)))


def tone(seconds: float, hz: float = 1000.0, dbfs: float = -20.0, rate: int = RATE) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return np.sqrt(2) * 10 ** (dbfs / 20) * np.sin(2 * np.pi * hz * t)


# -- scripted agents on loopback -------------------------------------------------------------------
class Agent:
    """A scripted WebSocket agent: ``script(ws, seen)`` runs per connection in its thread."""

    def __init__(self, script: Callable[[Any, list[Any]], None]) -> None:
        self.seen: list[Any] = []
        self.script = script
        self.done = threading.Event()

        def handler(ws: Any) -> None:
            try:
                script(ws, self.seen)
            except Exception as exc:  # the bridge hung up: part of the script
                self.seen.append(("ended", type(exc).__name__))
            finally:
                self.done.set()

        self.server = serve(handler, "127.0.0.1", 0, compression=None, close_timeout=0.5)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.socket.getsockname()[1]}/voice"

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=5)


@pytest.fixture
def agent() -> Iterator[Callable[..., Agent]]:
    made: list[Agent] = []

    def make(script: Callable[[Any, list[Any]], None]) -> Agent:
        made.append(Agent(script))
        return made[-1]

    yield make
    for a in made:
        a.stop()


def steps_until(
    bridge: Any, done: Callable[[], bool], limit: int = 200, pause_s: float = 0.01
) -> list[np.ndarray]:
    """Step the bridge with silence until ``done()``, waiting ``pause_s`` between steps."""
    outs = []
    for _ in range(limit):
        out, actions = bridge.step(np.zeros(STEP), [])
        outs.append(out)
        assert actions == [] or done()
        if done():
            return outs
        time.sleep(pause_s)
    raise AssertionError("the condition never came")


def recv_json(ws: Any, kind: str) -> dict[str, Any]:
    while True:
        event = json.loads(ws.recv(timeout=5))
        if event["event"] == kind:
            return event


def twilio_media(sid: str, audio_16k: np.ndarray) -> str:
    narrow = Resampler(RATE, 8000)(audio_16k)
    payload = base64.b64encode(mulaw_bytes(narrow)).decode()
    return json.dumps({"event": "media", "streamSid": sid, "media": {"payload": payload}})


def test_the_bridges_ask_to_be_paced_in_wall_time() -> None:
    assert TwilioStreamAgent.wall_clock is True and PCMStreamAgent.wall_clock is True


def test_twilio_start_media_and_sequence(agent: Callable[..., Agent]) -> None:
    def script(ws: Any, seen: list[Any]) -> None:
        for _ in range(2 + 12):
            seen.append(json.loads(ws.recv(timeout=5)))
        ws.send(twilio_media(seen[1]["start"]["streamSid"], tone(0.3)))
        seen.append(recv_json(ws, "stop"))  # when the bridge hangs up

    a = agent(script)
    services = {
        "STRIPE_API_BASE": "http://127.0.0.1:9/",
        "FINERACT_API_BASE": "http://127.0.0.1:9",
        "TWILIO_CALL_SID": "CA" + "5" * 32,
    }
    bridge = TwilioStreamAgent(a.url, services=services, pace=False)
    bridge.reset({})
    bridge.step(np.zeros(12 * FRAME), [])
    heard = np.concatenate(steps_until(bridge, lambda: bridge.playback.played >= 0.3 * RATE))
    voiced = heard[np.flatnonzero(heard)[0] :][: int(0.3 * RATE)]
    assert abs(level_db(voiced[800:]) + 20) < 1.0
    bridge.close()
    assert a.done.wait(5)
    connected, start, *media, stop = a.seen
    assert connected == {"event": "connected", "protocol": "Call", "version": "1.0.0"}
    sid = start["streamSid"]
    assert start["sequenceNumber"] == "1" and sid.startswith("MZ")
    body = start["start"]
    assert body["streamSid"] == sid and body["callSid"] == services["TWILIO_CALL_SID"]
    assert body["accountSid"].startswith("AC") and body["tracks"] == ["inbound"]
    assert body["customParameters"] == services
    assert body["mediaFormat"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    assert [m["sequenceNumber"] for m in media] == [str(n) for n in range(2, 14)]
    assert [m["media"]["chunk"] for m in media] == [str(n) for n in range(1, 13)]
    assert [m["media"]["timestamp"] for m in media] == [str(20 * n) for n in range(12)]
    assert all(m["media"]["track"] == "inbound" and m["streamSid"] == sid for m in media)
    assert {len(base64.b64decode(m["media"]["payload"])) for m in media} == {160}
    assert stop["event"] == "stop" and stop["streamSid"] == sid
    assert stop["stop"] == {"accountSid": body["accountSid"], "callSid": body["callSid"]}
    assert int(stop["sequenceNumber"]) > 13


def test_twilio_mark_echo_after_play_and_on_clear(agent: Callable[..., Agent]) -> None:
    def script(ws: Any, seen: list[Any]) -> None:
        sid = recv_json(ws, "start")["streamSid"]
        ws.send(twilio_media(sid, tone(0.5)))
        ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": "m1"}}))
        seen.append(recv_json(ws, "mark"))
        ws.send(twilio_media(sid, tone(3.0)))
        ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": "m2"}}))
        seen.append("sent m2")
        time.sleep(0.3)
        ws.send(json.dumps({"event": "clear", "streamSid": sid}))
        seen.append(recv_json(ws, "mark"))
        recv_json(ws, "stop")

    a = agent(script)
    bridge = TwilioStreamAgent(a.url, pace=False)
    bridge.reset({})
    # m1 comes back only after the 0.5 s before it has played, not when it arrives.
    steps_until(bridge, lambda: bridge.playback.queued >= 0.5 * RATE)
    bridge.step(np.zeros(STEP), [])
    assert bridge.sent_marks == []
    steps_until(bridge, lambda: bridge.sent_marks == ["m1"])
    assert bridge.playback.played >= 0.5 * RATE
    # m2 sits behind 3 s of audio; a clear drops the rest and m2 comes back at once.
    steps_until(bridge, lambda: "sent m2" in a.seen)
    outs = steps_until(bridge, lambda: bridge.sent_marks == ["m1", "m2"], pause_s=0.05)
    assert len(outs) < 14  # before the 3 s had played (15 steps)
    after, _ = bridge.step(np.zeros(STEP), [])
    assert not after.any()  # the cleared audio is gone
    bridge.close()
    assert a.done.wait(5)
    assert [m["mark"]["name"] for m in a.seen if isinstance(m, dict)] == ["m1", "m2"]


def test_pcm_frames_both_ways_and_hang_up_plays_out(agent: Callable[..., Agent]) -> None:
    said = tone(0.6, 440.0, -20.0, rate=24000)

    def script(ws: Any, seen: list[Any]) -> None:
        for _ in range(5):
            seen.append(ws.recv(timeout=5))
        ws.send(pcm_bytes(said))  # 0.6 s at once, faster than real time
        ws.close(1000)

    a = agent(script)
    bridge = PCMStreamAgent(a.url, pace=False)
    bridge.reset({})
    bridge.step(np.zeros(5 * FRAME), [])
    outs, actions = [], []
    for _ in range(100):
        out, actions = bridge.step(np.zeros(STEP), [])
        outs.append(out)
        if actions:
            break
        time.sleep(0.01)
    assert actions == [{"type": "end_call"}]
    assert all(isinstance(m, bytes) and len(m) == 960 for m in a.seen[:5])
    heard = np.concatenate(outs)
    assert np.count_nonzero(np.abs(heard) > 1e-3) > 0.55 * RATE  # all 0.6 s played
    assert abs(level_db(heard[np.abs(heard) > 0][1000:8000]) + 20) < 1.5


# -- faults ----------------------------------------------------------------------------------------
def _twilio_sid(ws: Any) -> str:
    return str(recv_json(ws, "start")["streamSid"])


FAULTS: dict[str, tuple[type, Callable[[Any, list[Any]], None], str]] = {
    "pcm closes at once": (PCMStreamAgent, lambda ws, seen: ws.close(1000), "before it said"),
    "twilio closes at once": (TwilioStreamAgent, lambda ws, seen: ws.close(1000), "before it said"),
    "pcm closes with 1011": (
        PCMStreamAgent,
        lambda ws, seen: (ws.send(b"\0\0" * 480), ws.close(1011, "boom")),
        "code 1011 (boom)",
    ),
    "pcm text frame": (PCMStreamAgent, lambda ws, seen: ws.send("hello"), "text frame"),
    "pcm odd bytes": (PCMStreamAgent, lambda ws, seen: ws.send(b"\0" * 961), "961 bytes"),
    "twilio invalid json": (
        TwilioStreamAgent,
        lambda ws, seen: (_twilio_sid(ws), ws.send("{not json")),
        "not JSON",
    ),
    "twilio bad base64": (
        TwilioStreamAgent,
        lambda ws, seen: ws.send(
            json.dumps(
                {"event": "media", "streamSid": _twilio_sid(ws), "media": {"payload": "@@@"}}
            )
        ),
        "not valid base64",
    ),
    "twilio unknown event": (
        TwilioStreamAgent,
        lambda ws, seen: ws.send(json.dumps({"event": "dance", "streamSid": _twilio_sid(ws)})),
        "'dance'",
    ),
    "twilio binary frame": (
        TwilioStreamAgent,
        lambda ws, seen: (_twilio_sid(ws), ws.send(b"\xff" * 160)),
        "binary frame",
    ),
    "twilio wrong stream": (
        TwilioStreamAgent,
        lambda ws, seen: (_twilio_sid(ws), ws.send(twilio_media("MZ0", tone(0.1)))),
        "for stream 'MZ0'",
    ),
    "never answers": (PCMStreamAgent, lambda ws, seen: time.sleep(1.5), "never answered"),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_a_broken_agent_is_an_agent_fault(agent: Callable[..., Agent], case: str) -> None:
    kind, script, words = FAULTS[case]

    def held(ws: Any, seen: list[Any]) -> None:
        script(ws, seen)
        time.sleep(0.6)  # stay connected, so that only the script's own fault shows

    a = agent(held)
    bridge = kind(a.url, pace=False, answer_timeout_s=0.5)
    began = time.monotonic()
    with pytest.raises(AgentFault, match=re.escape(words)) as fault:
        bridge.reset({})  # a close at once may already show as the call opens
        for _ in range(300):
            bridge.step(np.zeros(STEP), [])
            time.sleep(0.01)
    assert time.monotonic() - began < 2.5
    assert a.url in str(fault.value)
    assert bridge._ws is None  # the connection is dropped, not left open


def test_no_agent_at_the_url_fails_to_start() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(AgentFault, match="could not connect"):
        PCMStreamAgent(f"ws://127.0.0.1:{port}/voice").reset({})


def test_an_agent_that_never_completes_the_handshake_times_out() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)  # accepts the TCP connection, never answers the upgrade
        began = time.monotonic()
        with pytest.raises(AgentFault, match=r"within 0\.5 s"):
            url = f"ws://127.0.0.1:{s.getsockname()[1]}/"
            TwilioStreamAgent(url, connect_timeout_s=0.5).reset({})
        assert time.monotonic() - began < 2.0


def test_an_agent_that_goes_quiet_is_a_fault(agent: Callable[..., Agent]) -> None:
    def script(ws: Any, seen: list[Any]) -> None:
        ws.send(pcm_bytes(tone(0.1, rate=24000)))
        time.sleep(1.5)

    a = agent(script)
    bridge = PCMStreamAgent(a.url, pace=False, idle_timeout_s=0.5)
    bridge.reset({})
    with pytest.raises(AgentFault, match=r"sent nothing for 0\.5 s"):
        for _ in range(300):
            bridge.step(np.zeros(STEP), [])
            time.sleep(0.01)


# -- the local outside agent, with a stub stack (no models) -----------------------------------
class StubStack:
    """Stands in for the voice stack: verifies the caller, says a tone, hangs up."""

    def __init__(self, caller: dict[str, Any]) -> None:
        self.caller = caller
        self.results: list[Any] = []
        self.barge_ins = 0
        self.log: list[dict[str, Any]] = []
        self._n = 0
        self._left = 0

    def reset(self, info: Any) -> None:
        self.info = info

    @property
    def speaking(self) -> bool:
        return self._left > 0

    def step(self, audio: np.ndarray, results: list[Any]) -> tuple[np.ndarray, list[Any]]:
        self._n += 1
        if results:
            self.results.extend(results)
        actions: list[Any] = []
        out = np.zeros(len(audio))
        if self._n == 3:
            actions.append(
                ToolCallAction(
                    "verify_caller",
                    {
                        "account_number": self.caller["account_number"],
                        "name_on_account": self.caller["full_name"],
                        "second_factor": self.caller["second_factor"]["value"],
                    },
                )
            )
        elif self._n == 5:
            self._left = 15  # 0.3 s of voice
            self.log.append({"said": "a tone"})
        if self._left:
            out = tone(0.02, 500.0, -20.0)
            self._left -= 1
        elif self._n > 20:
            actions.append(EndCall())
        return out, actions


@pytest.fixture
def twins() -> Iterator[Any]:
    from vamos_env.envs.energy.seed import default_snapshot
    from vamos_env.twins.serve import TwinServer

    world = default_snapshot().clone()
    server = TwinServer(world.billing, world.loans).start()
    seen: list[str] = []
    handle = server.handle
    server.handle = lambda request: (seen.append(request.path), handle(request))[1]  # type: ignore[method-assign]
    server.seen = seen  # type: ignore[attr-defined]
    yield server
    server.stop()


def first_exam_task() -> dict[str, Any]:
    from importlib.resources import files

    data = json.loads(files("vamos_env.envs.energy.tasks").joinpath("data/exam.json").read_text())
    return dict(data["tasks"][0])


@pytest.mark.parametrize("mode", ["twilio", "pcm"])
def test_the_local_outside_agent_runs_its_tools_over_http(mode: str, twins: Any) -> None:
    task = first_exam_task()
    stacks: list[StubStack] = []

    def stack() -> StubStack:
        stacks.append(StubStack(task["caller"]))
        return stacks[-1]

    variables = {"STRIPE_API_BASE": twins.base_url, "FINERACT_API_BASE": twins.base_url}
    environ = variables if mode == "pcm" else {}  # twilio: from the start message only
    with VoiceAgentServer(mode, environ=environ, cascade=stack) as server:  # type: ignore[arg-type]
        kind = TwilioStreamAgent if mode == "twilio" else PCMStreamAgent
        bridge = kind(server.url, services=variables if mode == "twilio" else None, pace=False)
        bridge.reset({})
        heard, actions = [], []
        for _ in range(200):
            out, actions = bridge.step(np.zeros(FRAME), [])
            heard.append(out)
            if actions:
                break
            time.sleep(0.005)
        assert actions == [{"type": "end_call"}]
        bridge.close()
        deadline = time.monotonic() + 5
        while server.calls[0].ended is None and time.monotonic() < deadline:
            time.sleep(0.01)
    record = server.calls[0]
    assert record.ended == "agent_hung_up", record
    assert record.tool_calls == [
        {"name": "verify_caller", "arguments": record.tool_calls[0]["arguments"], "ok": True}
    ]
    assert stacks[0].results[0]["result"] == {"status": "verified"}
    assert any(p.startswith("/v1/") for p in twins.seen)  # reached the served twins
    assert np.count_nonzero(np.abs(np.concatenate(heard)) > 1e-3) >= 0.25 * RATE
    if mode == "twilio":
        assert record.marks_sent == ["said-1", "goodbye"] == record.marks_echoed


class TransferringStack(StubStack):
    """The stub verifies the caller, then hands the call to a person."""

    def step(self, audio: np.ndarray, results: list[Any]) -> tuple[np.ndarray, list[Any]]:
        out, actions = super().step(audio, results)
        if self._n == 7:
            actions.append(ToolCallAction("transfer_to_human", {"reason": "caller asked for one"}))
        return out, actions


def test_the_local_twilio_agent_transfers_through_call_control() -> None:
    """Its transfer is a Twilio call update with a <Dial>, as a deployed agent's is, so the
    served twins see it and the rebuilt trace holds it."""
    from vamos_env.bridges.served import ServedTwins
    from vamos_env.envs.energy.seed import default_snapshot

    task = first_exam_task()
    with ServedTwins(default_snapshot().clone(), clock=lambda: 1.0) as served:
        stack = TransferringStack(task["caller"])
        with VoiceAgentServer("twilio", environ={}, cascade=lambda: stack) as server:  # type: ignore[arg-type]
            bridge = TwilioStreamAgent(server.url, services=served.env, pace=False)
            bridge.reset({})
            for _ in range(200):
                _, actions = bridge.step(np.zeros(FRAME), [])
                if actions:
                    break
                time.sleep(0.005)
            bridge.close()
        record = server.calls[0]
        assert [c["name"] for c in record.tool_calls] == ["verify_caller", "transfer_to_human"]
        assert record.error is None
        assert served.calls.transferred_to == "billing-specialists"
        updates = [r for r in served.log if r.service == "twilio"]
        assert len(updates) == 1 and updates[0].status == 200


# -- whole calls (the audio extra; slow) ------------------------------------------------------
def _audio_missing() -> str | None:
    from vamos_env.channel.audio.engines import missing_reason

    return missing_reason()


needs_audio = pytest.mark.skipif(_audio_missing() is not None, reason=str(_audio_missing()))


EXAM_CALL = {"persona": "calm", "background": "clean"}


@pytest.fixture(scope="module")
def duplex_env() -> Any:
    reason = _audio_missing()
    if reason is not None:
        pytest.skip(reason)
    from vamos_env.duplex.env import VamosEnergyDuplexEnv

    return VamosEnergyDuplexEnv("exam")


def _summary(played: Any) -> dict[str, Any]:
    final = played.final
    return {
        "reward": final["reward"],
        "end_reason": final["end_reason"],
        "fault": played.agent_fault,
        "wall_s": round(played.wall_s, 1),
        "late_s": round(played.late_s, 2),
        "call_s": final["duplex"]["metrics"]["duration_s"],
        "failed": [
            k
            for k, v in final["verdict"].items()
            if isinstance(v, dict) and v.get("passed") is False
        ],
    }


@needs_audio
@pytest.mark.audio
@pytest.mark.parametrize(
    "case", ["pcm closes at once", "pcm text frame", "twilio invalid json", "never answers"]
)
def test_a_broken_agent_ends_the_call_as_an_agent_fault(
    agent: Callable[..., Agent], duplex_env: Any, case: str
) -> None:
    from vamos_env.duplex.run import play

    kind, script, words = FAULTS[case]
    a = agent(lambda ws, seen: (script(ws, seen), time.sleep(2)))
    bridge = kind(a.url, answer_timeout_s=1.0)
    options = {"task_id": first_exam_task()["task_id"], **EXAM_CALL}
    played = play(duplex_env, bridge, seed=0, options=options, pace=True, timeout_s=60)
    bridge.close()
    assert played.agent_fault is not None and words in played.agent_fault
    assert played.final["reward"] == 0.0 and "verdict" in played.final  # still graded
    assert played.final["duplex"]["metrics"]["duration_s"] < 5


MINIMAL_CLIENT = textwrap.dedent(
    '''
    """A minimal rory-style agent: reads the services from its environment, serves WS /voice."""
    import base64, json, math, os, struct, sys, urllib.request
    from websockets.sync.server import serve

    STRIPE, KEY = os.environ["STRIPE_API_BASE"].rstrip("/"), os.environ["STRIPE_API_KEY"]
    FINERACT = os.environ["FINERACT_API_BASE"].rstrip("/")
    AUTH = base64.b64encode(
        f"{os.environ['FINERACT_USER']}:{os.environ['FINERACT_PASSWORD']}".encode()).decode()

    def get(url, headers):
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=20) as r:
            return json.loads(r.read())

    def voice(ws):
        customers = get(STRIPE + "/v1/customers?limit=1", {"Authorization": "Bearer " + KEY})
        get(FINERACT + "/fineract-provider/api/v1/clients?limit=1",
            {"Authorization": "Basic " + AUTH,
             "Fineract-Platform-TenantId": os.environ["FINERACT_TENANT"]})
        # It speaks first: a second of a 440 Hz tone, PCM16 mono 24 kHz; then it hangs up.
        pcm = b"".join(struct.pack("<h", int(6000 * math.sin(2 * math.pi * 440 * n / 24000)))
                       for n in range(24000))
        for i in range(0, len(pcm), 960):
            ws.send(pcm[i:i + 960])
        for _ in range(10):
            ws.recv(timeout=5)  # hears the line for a moment
        ws.close(1000)
        print("served", len(customers["data"]), flush=True)

    with serve(voice, "127.0.0.1", int(sys.argv[1])) as server:
        print("ready", flush=True)
        server.serve_forever()
    '''
)


@needs_audio
@pytest.mark.audio
def test_a_minimal_rory_style_client_is_evaluated_unchanged(duplex_env: Any, tmp_path: Any) -> None:
    """The published agents' contract: a client started with the service variables in its
    environment (read once), serving WS /voice at PCM 24 kHz; each call's own twins are
    served at that fixed address and its requests land in the call's request log."""
    import os

    from vamos_env.bridges.local import free_port
    from vamos_env.clients.config import ServiceEndpoints
    from vamos_env.duplex.run import play

    port, twins_port = free_port(), free_port()
    root = f"http://127.0.0.1:{twins_port}"
    script = tmp_path / "minimal_client.py"
    script.write_text(MINIMAL_CLIENT)
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("STRIPE_", "FINERACT_"))
    }
    environment |= ServiceEndpoints(root, fineract_api_base=root).as_env()
    client = subprocess.Popen(
        [sys.executable, str(script), str(port)], env=environment, stdout=subprocess.PIPE, text=True
    )
    try:
        assert client.stdout is not None and client.stdout.readline().strip() == "ready"
        bridge = PCMStreamAgent(f"ws://127.0.0.1:{port}/voice", twins_port=twins_port)
        options = {"task_id": first_exam_task()["task_id"], **EXAM_CALL}
        played = play(duplex_env, bridge, seed=0, options=options, timeout_s=60)
    finally:
        client.terminate()
        client.wait(timeout=10)
    assert played.agent_fault is None, played.agent_fault
    assert played.final["end_reason"] == "end_call"
    assert played.info["services"]["STRIPE_API_BASE"] == root
    # Its two unverified reads (customers, clients), one burst: an account read outside the gate.
    rebuilt = played.final["duplex"]["outside_trace"]
    assert [(e["tool"], len(e["requests"]), e["verified"]) for e in rebuilt] == [
        ("read_account", 2, False)
    ]
    assert 1.0 <= played.final["duplex"]["metrics"]["audio_out_s"] <= 1.5
    assert played.final["reward"] == 0.0


def _whole_call(mode: str) -> tuple[Any, Any]:
    from vamos_env.bridges.local import twilio_stream_local, voice_ws_local
    from vamos_env.duplex.env import VamosEnergyDuplexEnv
    from vamos_env.duplex.run import play

    options = {"task_id": first_exam_task()["task_id"], **EXAM_CALL}
    bridge = twilio_stream_local() if mode == "twilio" else voice_ws_local()
    try:
        played = play(VamosEnergyDuplexEnv("exam"), bridge, seed=0, options=options, timeout_s=600)
    finally:
        bridge.local_server.stop()
    print(f"\n{mode} bridge:", json.dumps(_summary(played)))
    print(f"{mode} agent record:", bridge.local_server.calls[0].tool_calls)
    return played, bridge.local_server.calls[0]


@needs_audio
@pytest.mark.audio
@pytest.mark.slow
@pytest.mark.bridge_call
@pytest.mark.parametrize("mode", ["twilio", "pcm"])
def test_a_whole_exam_call_through_the_bridge(mode: str) -> None:
    """The cascade as an outside agent, its tools over HTTP against the call's served twins:
    the trace rebuilt from their log grades it as the in-process cascade is graded (1.0).

    Over Twilio's stream the agent hears and speaks 8 kHz mu-law at wall-clock pace, and in
    clean-clone runs the same call scored 1.0 in some runs and lost a spoken figure or a
    read-back in others ("due on of the 16th"): its reward is what the bridge comparison
    measures, not what this plumbing check can pin. There the check is the rebuilt trace:
    verification first, account changes right."""
    played, record = _whole_call(mode)
    assert played.agent_fault is None, played.agent_fault
    assert record.tool_calls, "the outside agent made no tool call"
    assert record.tool_calls[0]["name"] == "verify_caller"
    rebuilt = played.final["duplex"]["outside_trace"]
    assert rebuilt[0]["tool"] == "verify_caller" and rebuilt[0]["outcome"] == "succeeded"
    assert played.final["end_reason"] in ("end_call", "hang_up", "transfer")
    if mode == "twilio":
        assert played.final["verdict"]["actions"]["passed"], played.final["verdict"]
    else:
        assert played.final["reward"] == 1.0, played.final["verdict"]
