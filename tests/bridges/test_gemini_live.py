"""Gemini Live: the fake server speaks the protocol as google-genai reads it, and the bridge
turns a Live session into a duplex agent (issue 17)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from base64 import b64encode
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

pytest.importorskip("google.genai")
pytest.importorskip("websockets")

from google import genai
from google.genai import errors, types

from vamos_env.actions import ToolCallAction
from vamos_env.bridges.gemini_live import OPENING, GeminiLiveAgent, GeminiLiveFault
from vamos_env.testing.fake_gemini_live import FakeGeminiLiveServer

FRAME = 320
RATE = 16_000
MODEL = "gemini-live-test"
INFO = {
    "system_prompt": "You are Rory at Acme Energy.",
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_account",
                "description": "Read the account.",
                "parameters": {
                    "type": "object",
                    "properties": {"account_number": {"type": "string", "pattern": "^[0-9-]+$"}},
                    "required": ["account_number"],
                    "additionalProperties": False,
                },
            },
        }
    ],
}


def tone(seconds: float, hz: float = 440.0, level: float = 0.3) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return level * np.sin(2 * np.pi * hz * t)


@dataclass
class _Saying:
    text: str
    audio: np.ndarray
    position: int = 0


@dataclass
class StubVoice:
    """A tiny frame agent with the cascade's shape (``_queue``, ``_turns``, ``log``): it greets
    on a text turn, answers a burst of sound by calling ``get_account`` and then speaking, and
    stops when talked over."""

    calls: bool = True
    greeting_s: float = 0.5
    info: dict[str, Any] = field(default_factory=dict)
    results: list[Any] = field(default_factory=list)

    def reset(self, info: dict[str, Any]) -> None:
        self.info = dict(info)
        self._queue: list[_Saying] = []
        self._turns: list[tuple[int, str]] = []
        self.log: list[dict[str, Any]] = []
        self.sample = 0
        self._loud = 0
        self._quiet = 0
        self._awaiting = False

    def _say(self, text: str, seconds: float) -> None:
        self._queue.append(_Saying(text, tone(seconds)))

    def step(self, frame: np.ndarray, tool_results: list[Any]) -> tuple[np.ndarray, list[Any]]:
        self.sample += len(frame)
        actions: list[Any] = []
        loud = float(np.sqrt(np.mean(np.square(frame)))) > 0.05
        if loud:
            self._loud += 1
            self._quiet = 0
            if self._queue and self._loud >= 3:  # talked over: stop at once
                self._queue.clear()
        else:
            self._quiet += 1
            if self._loud >= 3 and self._quiet >= 10:  # a turn heard: answer it
                self._loud = 0
                self.log.append({"heard": "a burst"})
                if self.calls:
                    actions.append(ToolCallAction("get_account", {"account_number": "1-2"}))
                    self._awaiting = True
                else:
                    self._say("I heard you.", 0.6)
        if tool_results and self._awaiting:
            self._awaiting = False
            self.results.append(tool_results)
            self._say("Your account is fine.", 0.6)
        while self._turns:
            self._turns.pop(0)
            self._say("Thank you for calling.", self.greeting_s)
        out = np.zeros(len(frame))
        if self._queue:
            saying = self._queue[0]
            piece = saying.audio[saying.position : saying.position + len(frame)]
            out[: len(piece)] = piece
            saying.position += len(piece)
            if saying.position >= len(saying.audio):
                self._queue.pop(0)
        return out, actions


def stub_server(greeting_s: float = 0.5, **kwargs: Any) -> FakeGeminiLiveServer:
    return FakeGeminiLiveServer(
        agent_factory=lambda setup: StubVoice(greeting_s=greeting_s), **kwargs
    )


def client_for(server: FakeGeminiLiveServer, key: str | None = None) -> genai.Client:
    return genai.Client(api_key=key or server.api_key, http_options=server.http_options())


def pcm(audio: np.ndarray) -> types.Blob:
    data = np.clip(np.round(audio * 32767), -32768, 32767).astype("<i2").tobytes()
    return types.Blob(data=data, mime_type="audio/pcm;rate=16000")


async def collect(session: Any, until: Any, timeout_s: float = 10.0) -> list[Any]:
    got: list[Any] = []

    async def loop() -> None:
        while True:
            async for message in session.receive():
                got.append(message)
                if until(message):
                    return

    await asyncio.wait_for(loop(), timeout_s)
    return got


async def stream(session: Any, audio: np.ndarray, pace: float = 0.0) -> None:
    for a in range(0, len(audio), FRAME):
        await session.send_realtime_input(audio=pcm(audio[a : a + FRAME]))
        if pace:
            await asyncio.sleep(pace)


async def streaming(session: Any, audio: np.ndarray, pace: float = 0.002) -> asyncio.Task[None]:
    """Stream ``audio`` then silence in the background, as a client keeps its line open."""

    async def run() -> None:
        await stream(session, audio, pace)
        while True:
            await session.send_realtime_input(audio=pcm(np.zeros(FRAME)))
            await asyncio.sleep(pace)

    return asyncio.create_task(run())


def ends_turn(message: Any) -> bool:
    return bool(message.server_content and message.server_content.turn_complete)


# -- the fake server, through the raw SDK ---------------------------------------------------------
def test_setup_round_trip_and_a_greeting_in_24khz_audio() -> None:
    async def main(server: FakeGeminiLiveServer) -> list[Any]:
        config = GeminiLiveAgent(MODEL).config(INFO)
        async with client_for(server).aio.live.connect(model=MODEL, config=config) as session:
            assert session.session_id and session.session_id.startswith("fake-live-")
            await session.send_realtime_input(text="The caller is on the line.")
            feeder = await streaming(session, np.zeros(0))
            try:
                return await collect(session, ends_turn)
            finally:
                feeder.cancel()

    with stub_server() as server:
        got = asyncio.run(main(server))
        record = server.sessions[0]
    assert record.path.endswith(".GenerativeService.BidiGenerateContent")
    assert record.api_key == server.api_key
    setup = record.setup or {}
    assert setup["model"] == f"models/{MODEL}"
    assert setup["systemInstruction"]["parts"][0]["text"] == INFO["system_prompt"]
    names = [d["name"] for d in setup["tools"][0]["functionDeclarations"]]
    assert names == ["get_account", "end_call"]
    parameters = setup["tools"][0]["functionDeclarations"][0]["parameters"]
    assert "additionalProperties" not in json.dumps(parameters)  # Gemini refuses it
    assert (
        setup["realtimeInputConfig"]["automatic_activity_detection"]["silence_duration_ms"] == 800
    )
    assert record.texts == ["The caller is on the line."]
    audio = b"".join(
        p.inline_data.data
        for m in got
        if m.server_content and m.server_content.model_turn
        for p in m.server_content.model_turn.parts
    )
    mimes = {
        p.inline_data.mime_type
        for m in got
        if m.server_content and m.server_content.model_turn
        for p in m.server_content.model_turn.parts
    }
    assert mimes == {"audio/pcm;rate=24000"}
    assert len(audio) == 2 * round(0.5 * 24_000)  # the 0.5 s greeting, whole, at 24 kHz
    said = [
        m.server_content.output_transcription.text
        for m in got
        if m.server_content and m.server_content.output_transcription
    ]
    assert said == ["Thank you for calling."]
    kinds = [
        "generation"
        if m.server_content and m.server_content.generation_complete
        else "turn"
        if ends_turn(m)
        else None
        for m in got
    ]
    assert kinds[-2:] == ["generation", "turn"]
    assert got[-1].usage_metadata.response_token_count == 16  # 0.5 s at 32 tokens a second


def test_tool_call_round_trip_with_ids() -> None:
    voices: list[StubVoice] = []

    def factory(setup: dict[str, Any]) -> StubVoice:
        voices.append(StubVoice())
        return voices[-1]

    async def main(server: FakeGeminiLiveServer) -> tuple[Any, list[Any]]:
        config = GeminiLiveAgent(MODEL).config(INFO)
        async with client_for(server).aio.live.connect(model=MODEL, config=config) as session:
            feeder = await streaming(session, tone(0.3))
            try:
                first = await collect(session, lambda m: m.tool_call is not None)
                call = first[-1].tool_call.function_calls[0]
                await session.send_tool_response(
                    function_responses=types.FunctionResponse(
                        id=call.id, name=call.name, response={"output": {"balance_cents": 1234}}
                    )
                )
                rest = await collect(session, ends_turn)
            finally:
                feeder.cancel()
            return call, rest

    with FakeGeminiLiveServer(agent_factory=factory) as server:
        call, rest = asyncio.run(main(server))
        record = server.sessions[0]
    assert (call.id, call.name, call.args) == (
        "function-call-1",
        "get_account",
        {"account_number": "1-2"},
    )
    assert record.tool_responses[0]["id"] == "function-call-1"
    assert voices[0].results == [
        [
            {
                "tool_call_id": "function-call-1",
                "name": "get_account",
                "result": {"balance_cents": 1234},
            }
        ]
    ]
    assert any(
        m.server_content
        and m.server_content.output_transcription
        and m.server_content.output_transcription.text == "Your account is fine."
        for m in rest
    )


def test_a_function_response_without_its_id_is_refused() -> None:
    async def main(server: FakeGeminiLiveServer, response: dict[str, Any]) -> Exception:
        config = GeminiLiveAgent(MODEL).config(INFO)
        async with client_for(server).aio.live.connect(model=MODEL, config=config) as session:
            # The SDK refuses it before the wire on the Gemini API ...
            with pytest.raises(ValueError, match="must have an `id`"):
                await session.send_tool_response(
                    function_responses=types.FunctionResponse(name="get_account", response={})
                )
            # ... and the server refuses it on the wire, closing the session.
            await session._ws.send(json.dumps({"tool_response": {"functionResponses": [response]}}))
            with pytest.raises(errors.APIError) as caught:
                await collect(session, lambda m: False)
            return caught.value

    with stub_server() as server:
        missing = asyncio.run(main(server, {"name": "get_account", "response": {"output": 1}}))
        unknown = asyncio.run(main(server, {"id": "function-call-9", "name": "x", "response": {}}))
        closes = [s.closed for s in server.sessions]
    assert missing.code == 1007 and "must have an `id`" in str(missing)
    assert unknown.code == 1007 and "matches no function call" in str(unknown)
    assert [c[0] for c in closes if c] == [1007, 1007]


def test_unknown_fields_keys_and_paths_are_refused_as_the_service_does() -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    async def close_of(
        server: FakeGeminiLiveServer,
        message: Any,
        *,
        key: str | None = "ok",
        path: str = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
    ) -> tuple[int, str]:
        headers = {"x-goog-api-key": server.api_key if key == "ok" else key} if key else {}
        uri = f"wss://127.0.0.1:{server.port}{path}"
        async with connect(uri, additional_headers=headers, ssl=server.ssl_context()) as ws:
            with contextlib.suppress(ConnectionClosed):  # it may close before the setup
                await ws.send(json.dumps(message))
            await asyncio.wait_for(ws.wait_closed(), 5)
            assert ws.close_code is not None
            return ws.close_code, ws.close_reason or ""

    setup = {"setup": {"model": f"models/{MODEL}"}}
    with stub_server(models=[MODEL]) as server:
        code, reason = asyncio.run(
            close_of(server, {"setup": {"model": f"models/{MODEL}", "voice": "x"}})
        )
        assert (code, reason) == (
            1007,
            "Invalid JSON payload received. Unknown name \"voice\" at 'setup': Cannot find field.",
        )
        code, reason = asyncio.run(close_of(server, {"realtime_input": {"text": "hi"}}))
        assert code == 1007 and "first message must be a setup" in reason
        code, reason = asyncio.run(close_of(server, {"setup": {"model": "models/other"}}))
        assert (
            code == 1008
            and "is not found for API version" in reason
            and len(reason.encode()) <= 123
        )
        code, reason = asyncio.run(close_of(server, setup, key=None))
        assert code == 1008 and "unregistered callers" in reason
        code, reason = asyncio.run(close_of(server, setup, key="wrong"))
        assert (code, reason) == (1007, "API key not valid. Please pass a valid API key.")
        bad_tools = {
            "setup": {
                "model": f"models/{MODEL}",
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "name": "f",
                                "parameters": {"type": "OBJECT", "additionalProperties": False},
                            }
                        ]
                    }
                ],
            }
        }
        code, reason = asyncio.run(close_of(server, bad_tools))
        assert code == 1007 and 'Unknown name "additionalProperties"' in reason
        with pytest.raises(InvalidStatus) as refused:
            asyncio.run(close_of(server, setup, path="/ws/elsewhere"))
        assert refused.value.response.status_code == 404


def test_the_server_speaks_tls_and_the_sdk_insists_on_it() -> None:
    import ssl

    async def main(server: FakeGeminiLiveServer) -> None:
        plain = genai.Client(
            api_key=server.api_key, http_options=types.HttpOptions(base_url=server.base_url)
        )
        async with plain.aio.live.connect(model=MODEL, config={}):
            pass

    with stub_server() as server, pytest.raises(ssl.SSLCertVerificationError):
        asyncio.run(main(server))  # wss:// even for an https:// base URL, and no CA given


def test_talking_over_the_agent_interrupts_its_turn() -> None:
    async def main(server: FakeGeminiLiveServer) -> list[Any]:
        config = GeminiLiveAgent(MODEL).config(INFO)
        async with client_for(server).aio.live.connect(model=MODEL, config=config) as session:
            await session.send_realtime_input(text="hello")
            feeder = await streaming(session, np.concatenate([np.zeros(FRAME * 10), tone(0.2)]))
            try:
                return await collect(session, ends_turn)
            finally:
                feeder.cancel()

    with stub_server(greeting_s=3.0) as server:
        got = asyncio.run(main(server))
        record = server.sessions[0]
    flags = [
        "interrupted"
        if m.server_content and m.server_content.interrupted
        else "turn"
        if ends_turn(m)
        else None
        for m in got
    ]
    assert [f for f in flags if f] == ["interrupted", "turn"]
    assert not any(m.server_content and m.server_content.generation_complete for m in got)
    assert record.interruptions == 1


# -- the bridge ---------------------------------------------------------------------------------
def bridge(server: FakeGeminiLiveServer, **kwargs: Any) -> GeminiLiveAgent:
    return GeminiLiveAgent(
        MODEL,
        api_key=server.api_key,
        base_url=server.base_url,
        ssl_context=server.ssl_context(),
        **kwargs,
    )


def drive(
    agent: GeminiLiveAgent, line: np.ndarray, *, results: Any = None, frames: int | None = None
) -> tuple[np.ndarray, list[Any]]:
    """Step the agent in real time over ``line`` (then silence); its audio and actions."""
    total = frames if frames is not None else len(line) // FRAME
    out, actions = [], []
    pending: list[Any] = []
    began = time.perf_counter()
    for k in range(total):
        frame = line[k * FRAME : (k + 1) * FRAME]
        if len(frame) < FRAME:
            frame = np.zeros(FRAME)
        audio, acts = agent.step(frame, pending)
        pending = results(acts) if results is not None and acts else []
        out.append(audio)
        actions += acts
        ahead = (k + 1) * 0.02 - (time.perf_counter() - began)
        if ahead > 0:
            time.sleep(ahead)
    return np.concatenate(out), actions


def test_the_bridge_greets_calls_a_tool_and_answers_with_its_result() -> None:
    def run_tools(actions: list[Any]) -> list[dict[str, Any]]:
        return [
            {"tool_call_id": a.call_id, "name": a.name, "result": {"balance_cents": 77}}
            for a in actions
            if isinstance(a, ToolCallAction)
        ]

    voices: list[StubVoice] = []

    def factory(setup: dict[str, Any]) -> StubVoice:
        voices.append(StubVoice())
        return voices[-1]

    with (
        FakeGeminiLiveServer(agent_factory=factory) as server,
        bridge(server, opening=OPENING) as agent,
    ):
        agent.reset(INFO)
        line = np.concatenate([np.zeros(RATE), tone(0.3, hz=300), np.zeros(2 * RATE)])
        out, actions = drive(agent, line, results=run_tools)
        agent.close()
        record = server.sessions[0]
    assert record.texts == [agent.opening]
    calls = [a for a in actions if isinstance(a, ToolCallAction)]
    assert [(a.name, a.arguments, a.call_id) for a in calls] == [
        ("get_account", {"account_number": "1-2"}, "gl-function-call-1")
    ]
    assert voices[0].results[0][0]["result"] == {"balance_cents": 77}
    # The greeting's 440 Hz tone comes back at 16 kHz, whole and clean (0.5 s of it).
    loud = np.nonzero(np.abs(out[:RATE]) > 0.01)[0]
    greeting = out[loud[0] : loud[-1] + 1]
    assert 0.48 < len(greeting) / RATE < 0.52
    spectrum = np.abs(np.fft.rfft(greeting * np.hanning(len(greeting))))
    assert abs(np.argmax(spectrum) * RATE / len(greeting) - 440) < 5
    assert 0.19 < float(np.sqrt(np.mean(greeting[800:-800] ** 2))) < 0.23  # 0.3 peak: 0.21 rms
    said = [e["said"] for e in agent.log if "said" in e]
    assert said == ["Thank you for calling.", "Your account is fine."]
    assert agent.usage.requests == 2 and agent.usage.audio_out_tokens == 16 + 19
    assert agent.usage.prompt_tokens > agent.usage.audio_in_tokens > 0


def test_the_bridge_waits_for_the_caller_unless_given_an_opening() -> None:
    assert GeminiLiveAgent.wall_clock is True
    with stub_server() as server, bridge(server) as agent:
        assert agent.opening is None
        agent.reset(INFO)
        out, _ = drive(agent, np.zeros(RATE // 2))
        record = server.sessions[0]
    assert record.texts == [] and not out.any()  # no greeting: the caller opens the call


def test_the_bridge_drops_unplayed_audio_when_interrupted() -> None:
    with stub_server(greeting_s=4.0) as server, bridge(server, opening=OPENING) as agent:
        agent.reset(INFO)
        line = np.concatenate([np.zeros(RATE), tone(0.2, hz=300), np.zeros(RATE)])
        out, _ = drive(agent, line)
    frames = out.reshape(-1, FRAME)
    loud = np.sqrt(np.mean(frames**2, axis=1)) > 0.05
    assert loud[:50].sum() > 20  # the greeting was playing in the first second
    assert not loud[-40:].any()  # and stopped soon after the caller spoke
    assert loud.sum() < 100  # 4 s of greeting, well under 2 s of it played
    assert any("interrupted" in e for e in agent.log)


# -- faults -------------------------------------------------------------------------------------
@pytest.mark.parametrize("misbehave", ["close", "garbage", "silent"])
def test_a_broken_server_is_an_agent_fault_within_its_timeout(misbehave: str) -> None:
    with (
        FakeGeminiLiveServer(misbehave=misbehave) as server,
        bridge(server, idle_timeout_s=1.5) as agent,
    ):
        agent.reset(INFO)
        began = time.perf_counter()
        with pytest.raises(GeminiLiveFault) as fault:
            drive(agent, np.zeros(5 * RATE))
        waited = time.perf_counter() - began
    assert waited < 3.0
    expected = {
        "close": "closed the session (1011)",
        "garbage": "Gemini Live: ",
        "silent": "no message from the server for 1.5 s",
    }[misbehave]
    assert expected in str(fault.value)


def test_a_server_that_never_completes_the_setup_or_is_gone_fails_the_reset() -> None:
    with (
        FakeGeminiLiveServer(misbehave="no_setup") as server,
        bridge(server, connect_timeout_s=1.0) as agent,
    ):
        began = time.perf_counter()
        with pytest.raises(GeminiLiveFault, match=r"no setupComplete within 1 s"):
            agent.reset(INFO)
        assert time.perf_counter() - began < 6.0
    gone = bridge(server, connect_timeout_s=2.0)  # the server is closed: nothing listens
    with pytest.raises(GeminiLiveFault, match=r"^Gemini Live: .*(refused|Errno 111)"):
        gone.reset(INFO)


def test_the_bridge_reports_the_servers_refusal() -> None:
    with stub_server() as server:
        agent = GeminiLiveAgent(
            MODEL, api_key="wrong", base_url=server.base_url, ssl_context=server.ssl_context()
        )
        with pytest.raises(GeminiLiveFault, match=r"\(1007\).*API key not valid"):
            agent.reset(INFO)


# -- a whole exam call, end to end ----------------------------------------------------------------
def _first_exam_task() -> str:
    from importlib import resources

    data = resources.files("vamos_env.envs.energy.tasks").joinpath("data/exam.json").read_text()
    return str(json.loads(data)["tasks"][0]["task_id"])


@pytest.mark.slow
@pytest.mark.bridge_call
@pytest.mark.audio
def test_a_whole_exam_call_through_the_bridge_and_the_fake_server() -> None:
    """The local voice stack behind the Live wire, the bridge in the call, paced at wall time."""
    from vamos_env.channel.audio.engines import missing_reason

    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    from vamos_env.duplex.env import VamosEnergyDuplexEnv
    from vamos_env.duplex.run import play

    options = {"task_id": _first_exam_task(), "persona": "calm", "background": "clean"}
    # No opening: this env's caller always opens 1 s into the call, and a greeting that the
    # server's cascade makes in wall time lands on it (docs/duplex.md, "Gemini Live bridge").
    with FakeGeminiLiveServer() as server, bridge(server, opening=None) as agent:
        played = play(VamosEnergyDuplexEnv("exam"), agent, seed=0, options=options, pace=True)
        record = server.sessions[-1]
    final = played.final
    assert played.agent_fault is None
    assert final["end_reason"] in ("end_call", "hang_up")
    assert record.tool_calls and not record.undeclared_calls
    assert {r["id"] for r in record.tool_responses} <= {c["id"] for c in record.tool_calls}
    assert final["duplex"]["metrics"]["audio_out_s"] > 10
    agent_turns = [t for t in final["transcript"]["turns"] if t["speaker"] == "agent" and t["text"]]
    assert len(agent_turns) >= 3
    assert agent.usage.requests >= 3 and agent.usage.audio_out_tokens > 0
    # The call ran at wall time: not faster than its audio, and not far behind it.
    assert played.wall_s >= final["duplex"]["metrics"]["duration_s"] * 0.95


# -- session resumption and goAway --------------------------------------------------------------
def resuming(handle: str) -> types.LiveConnectConfig:
    """The bridge's config for INFO, resuming ``handle``."""
    config = GeminiLiveAgent(MODEL).config(INFO)
    return config.model_copy(
        update={"session_resumption": types.SessionResumptionConfig(handle=handle)}
    )


def updates_of(got: list[Any]) -> list[Any]:
    return [m.session_resumption_update for m in got if m.session_resumption_update]


def test_a_resumed_connection_continues_the_same_agent_and_its_open_calls() -> None:
    voices: list[StubVoice] = []

    def factory(setup: dict[str, Any]) -> StubVoice:
        voices.append(StubVoice())
        return voices[-1]

    async def first(server: FakeGeminiLiveServer) -> list[Any]:
        config = GeminiLiveAgent(MODEL).config(INFO)
        assert config.session_resumption == types.SessionResumptionConfig()  # always asked
        async with client_for(server).aio.live.connect(model=MODEL, config=config) as session:
            feeder = await streaming(session, tone(0.3))
            try:  # the call, then the update that says the session cannot resume now
                got = await collect(session, lambda m: m.tool_call is not None)
                return got + await collect(session, lambda m: m.session_resumption_update)
            finally:
                feeder.cancel()

    async def second(server: FakeGeminiLiveServer, handle: str, call: Any) -> list[Any]:
        connect = client_for(server).aio.live.connect(model=MODEL, config=resuming(handle))
        async with connect as session:
            await session.send_tool_response(  # answers the call made on the first connection
                function_responses=types.FunctionResponse(
                    id=call.id, name=call.name, response={"output": {"balance_cents": 9}}
                )
            )
            feeder = await streaming(session, np.zeros(0))
            turns: list[Any] = []

            def after_a_turn(message: Any) -> bool:
                turns.extend([message] if ends_turn(message) else [])
                return bool(turns and message.session_resumption_update)

            try:
                return await collect(session, after_a_turn)
            finally:
                feeder.cancel()

    with FakeGeminiLiveServer(agent_factory=factory) as server:
        got = asyncio.run(first(server))
        updates = updates_of(got)
        assert updates[0].resumable is True and updates[0].new_handle  # after setupComplete
        assert updates[-1].resumable is False and not updates[-1].new_handle  # a call is open
        handle = updates[0].new_handle
        call = next(m.tool_call for m in got if m.tool_call).function_calls[0]
        rest = asyncio.run(second(server, handle, call))
        one, two = server.sessions
        assert server.handles[handle] is server.handles[two.handles[-1]]  # one session
    assert len(voices) == 1  # the same agent, not a new one
    assert one.setup and "sessionResumption" in one.setup and one.resumed is None
    assert two.resumed == handle and (two.setup or {})["sessionResumption"] == {"handle": handle}
    assert [c["id"] for c in one.tool_calls] == [call.id] and two.tool_calls == []
    assert [r["id"] for r in two.tool_responses] == [call.id]
    assert voices[0].results[0][0]["result"] == {"balance_cents": 9}
    said = [
        m.server_content.output_transcription.text
        for m in rest
        if m.server_content and m.server_content.output_transcription
    ]
    assert said == ["Your account is fine."]
    # The agent answered on the second connection only because it was still waiting on the
    # call from the first: its state went on. So does the context the turn's prompt counts.
    assert two.turns == 1 and one.turns == 0
    audio_in = next(
        d.token_count
        for m in rest
        if m.usage_metadata
        for d in m.usage_metadata.prompt_tokens_details
        if d.modality == types.MediaModality.AUDIO
    )
    assert round(one.audio_in_s * 32) < audio_in <= round((one.audio_in_s + two.audio_in_s) * 32)
    fresh = updates_of(rest)
    assert fresh[0].new_handle == two.handles[0] and fresh[-1].new_handle == two.handles[-1]
    assert len(two.handles) == 2 and all(u.resumable for u in fresh)


def test_unknown_or_held_handles_are_refused() -> None:
    async def resume(server: FakeGeminiLiveServer, handle: str) -> errors.APIError:
        with pytest.raises(errors.APIError) as refused:
            connect = client_for(server).aio.live.connect(model=MODEL, config=resuming(handle))
            async with connect:
                pass
        return refused.value

    async def while_open(server: FakeGeminiLiveServer) -> errors.APIError:
        config = GeminiLiveAgent(MODEL).config(INFO)
        async with client_for(server).aio.live.connect(model=MODEL, config=config) as session:
            got = await collect(session, lambda m: m.session_resumption_update)
            return await resume(server, updates_of(got)[0].new_handle)

    with stub_server() as server:
        unknown = asyncio.run(resume(server, "fake-handle-never-issued"))
        held = asyncio.run(while_open(server))
        records = list(server.sessions)
    assert unknown.code == 1008 and "handle not found" in str(unknown)
    assert held.code == 1011 and "currently unavailable" in str(held)
    assert [r.closed and r.closed[0] for r in records] == [1008, None, 1011]
    assert all(r.resumed is None for r in records)


def test_go_away_comes_with_its_time_left_and_then_the_close() -> None:
    async def main(server: FakeGeminiLiveServer) -> tuple[list[Any], errors.APIError, float]:
        config = GeminiLiveAgent(MODEL).config(INFO)
        async with client_for(server).aio.live.connect(model=MODEL, config=config) as session:
            began = time.perf_counter()
            got = await collect(session, lambda m: m.go_away is not None)
            with pytest.raises(errors.APIError) as closed:
                await collect(session, lambda m: False)
            return got, closed.value, time.perf_counter() - began

    with stub_server(go_away_after_s=0.3, go_away_time_left_s=0.5) as server:
        got, closed, waited = asyncio.run(main(server))
        record = server.sessions[0]
    assert got[-1].go_away.time_left == "0.500s"
    assert record.go_away == "0.500s"
    assert closed.code == 1011 and "aborted" in str(closed)
    assert record.closed == (1011, "The operation was aborted.")
    assert 0.7 < waited < 2.0


def test_the_bridge_resumes_on_go_away_and_the_call_goes_on() -> None:
    """goAway every 1.5 s: the bridge resumes each time, no fault; a tool call made before a
    reconnection is answered after it, and audio flows both ways on the new connections."""
    voices: list[StubVoice] = []

    def factory(setup: dict[str, Any]) -> StubVoice:
        voices.append(StubVoice())
        return voices[-1]

    line = np.concatenate([np.zeros(round(0.3 * RATE)), tone(0.3, hz=300)])
    line = np.concatenate([line, np.zeros(round(3.8 * RATE) - len(line)), tone(0.3, hz=300)])
    line = np.concatenate([line, np.zeros(round(5.8 * RATE) - len(line))])
    server = FakeGeminiLiveServer(
        agent_factory=factory, go_away_after_s=1.5, go_away_time_left_s=3.0
    )
    with server, bridge(server) as agent:
        agent.reset(INFO)
        out, pending, held, answered_after = [], [], [], []
        began = time.perf_counter()
        for k in range(len(line) // FRAME):
            audio, actions = agent.step(line[k * FRAME : (k + 1) * FRAME], pending)
            out.append(audio)
            pending = []
            held += [
                {"tool_call_id": a.call_id, "name": a.name, "result": {"balance_cents": 5}}
                for a in actions
                if isinstance(a, ToolCallAction)
            ]
            if held and agent.reconnects >= 1:  # the first call's result waits for a resumption
                answered_after.append(agent.reconnects)
                pending, held = held, []
            ahead = (k + 1) * 0.02 - (time.perf_counter() - began)
            if ahead > 0:
                time.sleep(ahead)
        records = list(server.sessions)
        agent.close()
    heard = np.concatenate(out)
    reconnections = [e for e in agent.log if "reconnect" in e]
    assert agent.reconnects >= 2 and len(reconnections) == agent.reconnects
    assert len(records) == agent.reconnects + 1 and len(voices) == 1
    for n, entry in enumerate(reconnections, start=1):
        assert entry["reconnect"] == n and entry["why"].startswith("goAway, 3s left")
        assert entry["handle"] in records[n - 1].handles  # the newest handle it was given
        assert records[n].resumed == entry["handle"]
        assert records[n - 1].go_away == "3s"
    assert sum("go_away" in e for e in agent.log) >= agent.reconnects
    # The first call was made on the first connection and answered on a later one.
    calls = [(n, c["id"]) for n, r in enumerate(records) for c in r.tool_calls]
    responses = [(n, r["id"]) for n, rec in enumerate(records) for r in rec.tool_responses]
    assert [c for _, c in calls] == ["function-call-1", "function-call-2"]
    assert calls[0][0] == 0 and responses[0] == (answered_after[0], "function-call-1")
    assert answered_after[0] >= 1
    # The second was made and answered after the second resumption.
    assert calls[1][0] >= 2 and responses[1][1] == "function-call-2"
    assert responses[1][0] >= calls[1][0]
    assert len(voices[0].results) == 2
    # Audio both ways after each resumption: the server heard the line on every connection,
    # and both answers ("Your account is fine.", 0.6 s each) played after a reconnection.
    assert all(r.audio_in_s > 0.5 for r in records[:-1])
    assert [s for r in records for s in r.said] == ["Your account is fine."] * 2
    loud = np.sqrt(np.mean(heard.reshape(-1, FRAME) ** 2, axis=1)) > 0.05
    first_back = round(reconnections[0]["time_s"] / 0.02)
    second_back = round(reconnections[1]["time_s"] / 0.02)
    assert 25 <= loud[first_back:second_back].sum() <= 32
    assert 25 <= loud[second_back:].sum() <= 32
    said = [e["said"] for e in agent.log if "said" in e]
    assert said == ["Your account is fine."] * 2


def a_tone_at_24khz(seconds: float) -> dict[str, Any]:
    """A ``serverContent.modelTurn`` message of a 440 Hz tone, as the service sends audio."""
    t = np.arange(round(seconds * 24_000)) / 24_000
    data = np.round(0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype("<i2").tobytes()
    part = {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": b64encode(data).decode()}}
    return {"serverContent": {"modelTurn": {"parts": [part]}}}


@dataclass
class Scripted:
    """A server script: a new session gets ``first`` and then the close; a resumed one gets
    0.4 s of tone and a turn's end, and stays open, reading what comes."""

    first: list[dict[str, Any]]
    close: tuple[int, str]
    resumed: list[str] = field(default_factory=list)

    async def __call__(self, ws: Any, setup: dict[str, Any]) -> None:
        handle = (setup.get("sessionResumption") or {}).get("handle")
        if handle is None:
            for message in self.first:
                await ws.send(json.dumps(message))
            await asyncio.sleep(0.3)
            await ws.close(*self.close)
            return
        self.resumed.append(handle)
        await ws.send(json.dumps(a_tone_at_24khz(0.4)))
        await ws.send(json.dumps({"serverContent": {"turnComplete": True}}))
        async for _ in ws:  # read on (a server that stops reading never hears the close)
            pass


HANDLE = {"sessionResumptionUpdate": {"newHandle": "fake-handle-h1", "resumable": True}}
NOT_NOW = {"sessionResumptionUpdate": {"resumable": False}}


def test_a_normal_close_with_a_handle_held_is_resumed() -> None:
    script = Scripted([HANDLE, NOT_NOW], (1000, "done here"))
    with FakeGeminiLiveServer(script=script) as server, bridge(server) as agent:
        agent.reset(INFO)
        out, _ = drive(agent, np.zeros(RATE * 3 // 2))
    assert script.resumed == ["fake-handle-h1"]  # the resumable one, not the later refusal
    assert agent.reconnects == 1
    (entry,) = [e for e in agent.log if "reconnect" in e]
    assert entry["why"] == "closed (1000)" and entry["handle"] == "fake-handle-h1"
    loud = np.sqrt(np.mean(out.reshape(-1, FRAME) ** 2, axis=1)) > 0.05
    back = round(entry["time_s"] / 0.02)
    assert not loud[:back].any() and 18 <= loud[back:].sum() <= 21  # the 0.4 s, after it


@pytest.mark.parametrize(
    ("first", "close", "expected"),
    [
        ([], (1000, "done here"), r"\(1000\): .*done here \(closed with no resumption handle"),
        (
            [{"goAway": {"timeLeft": "0.200s"}}, NOT_NOW],
            (1011, "The operation was aborted."),
            r"\(1011\): .*aborted\. \(closed after goAway with no resumption",
        ),
    ],
    ids=["normal-close", "go-away"],
)
def test_a_close_with_no_handle_held_is_a_fault(
    first: list[dict[str, Any]], close: tuple[int, str], expected: str
) -> None:
    script = Scripted(first, close)
    with FakeGeminiLiveServer(script=script) as server, bridge(server) as agent:
        agent.reset(INFO)
        with pytest.raises(GeminiLiveFault, match=expected):
            drive(agent, np.zeros(2 * RATE))
    assert agent.reconnects == 0 and script.resumed == []


def test_a_server_that_goes_away_again_and_again_is_a_fault() -> None:
    with (
        stub_server(go_away_after_s=0.2, go_away_time_left_s=5.0) as server,
        bridge(server, max_reconnects=2) as agent,
    ):
        agent.reset(INFO)
        began = time.perf_counter()
        with pytest.raises(GeminiLiveFault) as fault:
            drive(agent, np.zeros(4 * RATE))
        waited = time.perf_counter() - began
        records = list(server.sessions)
    assert str(fault.value) == (
        "Gemini Live: gave up after 2 reconnections in this call (max_reconnects): "
        "the server ended the connection again (goAway, 5s left)"
    )
    assert agent.reconnects == 2 and len(records) == 3
    assert [r.resumed is not None for r in records] == [False, True, True]
    assert waited < 2.5


def test_a_resumption_the_server_refuses_is_a_fault() -> None:
    with (
        stub_server(go_away_after_s=0.6, go_away_time_left_s=5.0) as server,
        bridge(server) as agent,
    ):
        agent.reset(INFO)
        drive(agent, np.zeros(RATE // 5))
        assert server.sessions[0].handles  # the bridge holds one ...
        server.handles.clear()  # ... that the server forgets: an expired handle
        with pytest.raises(GeminiLiveFault) as fault:
            drive(agent, np.zeros(2 * RATE))
    assert str(fault.value).startswith(
        f"Gemini Live: resuming the session (handle {server.sessions[0].handles[-1]}) failed: "
        "the server closed the session (1008)"
    )
    assert agent.reconnects == 1 and server.sessions[1].closed is not None
