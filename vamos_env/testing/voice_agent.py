"""A local OUTSIDE voice agent: the local voice stack behind a media-stream contract.

``VoiceAgentServer(mode)`` listens on loopback in its own thread (websockets' threaded
server: one thread per connection) and answers each connection as a black-box agent
would:

- ``mode="twilio"``: the bot side of a Twilio bidirectional Media Stream. It reads
  ``connected`` and ``start``, takes the services' variables from the start message's
  ``customParameters`` (else from ``environ``), hears ``media`` (mu-law 8 kHz), speaks
  ``media`` back, sends a ``mark`` after each thing it finished saying, ``clear`` when the
  caller talks over it, and, to hang up, a last ``mark`` whose echo (its goodbye has
  played) it answers by closing the socket with 1000. ``stop`` ends its side.
- ``mode="pcm"``: rory-agent's ``WS /voice``: binary PCM16 mono 24 kHz both ways; the
  services' variables come from ``environ`` (os.environ when not given) as the published
  agents read them at start; it closes with 1000 to hang up, with 1003 on a text frame.

Per connection it builds a ``CascadeAgent`` (Silero, Whisper, the reference solver's
decisions, Piper) and runs the tool calls the cascade makes ITSELF, over HTTP, through a
``CallSession`` on ``ServiceEndpoints.from_env(...)``: exactly what an outside agent does
against the served twins. It speaks in step with what it hears (one 20 ms frame out per
frame in) and sends only frames that carry its voice. Unlike rory's agents it does not
speak first: the reference waits for the caller, who opens a second after the line does.

Each connection leaves a ``CallRecord`` in ``server.calls`` (tool calls, marks, clears,
how it ended) for tests.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from vamos_env.actions import EndCall, ToolCallAction
from vamos_env.bridges.audio import Resampler, mulaw_audio, mulaw_bytes, pcm_audio, pcm_bytes
from vamos_env.bridges.mediastream import PCM_RATE, TWILIO_RATE
from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.clients.config import ServiceEndpoints
from vamos_env.duplex.engine import FRAME

Mode = Literal["twilio", "pcm"]
IDLE_TIMEOUT_S = 120.0  # a connection that carries nothing this long is dropped


@dataclass
class CallRecord:
    """What one connection did, for tests and diagnosis."""

    mode: str
    services: dict[str, str] = field(default_factory=dict)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    marks_sent: list[str] = field(default_factory=list)
    marks_echoed: list[str] = field(default_factory=list)
    clears: int = 0
    frames_in: int = 0
    frames_out: int = 0
    ended: str | None = None  # "agent_hung_up", "stop", "closed", "error"
    error: str | None = None


def default_info() -> dict[str, Any]:
    """What a deployed agent knows before a call: its prompt and its tools, not the caller."""
    from vamos_env.envs.energy.prompt import system_prompt
    from vamos_env.envs.energy.tools import tool_schemas

    return {"system_prompt": system_prompt(), "tools": tool_schemas(), "channel": "duplex"}


class _Call:
    """One call's cascade and tool session: 16 kHz audio in, 20 ms frames of voice out."""

    def __init__(
        self,
        endpoints: ServiceEndpoints,
        cascade: Any,
        info: Mapping[str, Any],
        record: CallRecord,
        variables: Mapping[str, str] | None = None,
    ) -> None:
        from vamos_env.clients.services import ServiceClients
        from vamos_env.envs.energy.session import CallSession

        self.session = CallSession(ServiceClients.over_http(endpoints))
        self.variables = dict(variables or {})
        self.cascade = cascade
        self.cascade.reset(dict(info))
        self.record = record
        self.results: list[dict[str, Any]] = []
        self.ended = False
        self._held = np.zeros(0)

    def feed(self, audio: Audio) -> Iterator[tuple[Audio, bool, bool]]:
        """Each whole frame heard: (the frame it says, whether it was just cut off,
        whether it just finished saying something)."""
        self._held = np.concatenate([self._held, audio])
        while len(self._held) >= FRAME and not self.ended:
            frame, self._held = self._held[:FRAME], self._held[FRAME:]
            speaking, cuts = self.cascade.speaking, self.cascade.barge_ins
            out, actions = self.cascade.step(frame, self.results)
            self.results = []
            self.record.frames_in += 1
            for action in actions:
                self._act(action)
            cut = self.cascade.barge_ins > cuts
            yield out, cut, speaking and not self.cascade.speaking and not cut

    def _act(self, action: Any) -> None:
        if isinstance(action, ToolCallAction):
            result = self.session.call(action.name, action.arguments)
            entry = self.session.trace[-1]
            self.results.append(
                {
                    "tool_call_id": action.call_id or entry.call_id,
                    "name": action.name,
                    "result": result,
                }
            )
            self.record.tool_calls.append(
                {"name": action.name, "arguments": entry.arguments, "ok": entry.ok}
            )
            if action.name == "transfer_to_human" and entry.ok:
                self._dial()
        elif isinstance(action, EndCall):
            self.ended = True
        else:  # a malformed decision: answered as the line answers it
            self.results.append({"error": f"action not understood: {str(action)[:200]}"})

    def _dial(self) -> None:
        """A transfer as a deployed Twilio agent makes one: the call updated with TwiML that
        dials the specialists (Twilio's REST API, ``POST .../Calls/{CallSid}.json``, basic
        auth with the account SID and auth token the stream's parameters carry)."""
        v = self.variables
        base, sid, call = (
            v.get(k) for k in ("TWILIO_API_BASE", "TWILIO_ACCOUNT_SID", "TWILIO_CALL_SID")
        )
        if not (base and sid and call):  # no call control on this contract (WS /voice)
            return
        import httpx

        url = f"{base.rstrip('/')}/2010-04-01/Accounts/{sid}/Calls/{call}.json"
        twiml = "<Response><Dial><Queue>billing-specialists</Queue></Dial></Response>"
        try:
            response = httpx.post(
                url, data={"Twiml": twiml}, auth=(sid, v.get("TWILIO_AUTH_TOKEN", "")), timeout=10.0
            )
        except httpx.HTTPError as exc:
            self.record.error = self.record.error or f"transfer: {type(exc).__name__}: {exc}"
            return
        if response.status_code >= 400:
            self.record.error = self.record.error or f"transfer: HTTP {response.status_code}"

    def close(self) -> None:
        self.session.clients.close()
        self.record.said = [e["said"] for e in getattr(self.cascade, "log", []) if "said" in e]


class VoiceAgentServer:
    """The local voice stack served as an outside agent (``mode`` "twilio" or "pcm")."""

    def __init__(
        self,
        mode: Mode = "twilio",
        *,
        environ: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/voice",
        info: Mapping[str, Any] | None = None,
        cascade: Callable[[], Any] | None = None,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
    ) -> None:
        if mode not in ("twilio", "pcm"):
            raise ValueError(f"mode: expected 'twilio' or 'pcm', got {mode!r}")
        from websockets.sync.server import serve

        self.mode = mode
        self.environ = dict(environ) if environ is not None else None
        self.path = path
        self.info = dict(info) if info is not None else None
        self._cascade = cascade
        self.idle_timeout_s = idle_timeout_s
        self.calls: list[CallRecord] = []
        self._server = serve(self._handle, host, port, compression=None, max_size=4 * 1024 * 1024)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.socket.getsockname()[1])

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{self.path}"

    def start(self) -> VoiceAgentServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"vamos-voice-agent-{self.mode}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> VoiceAgentServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- one connection ---------------------------------------------------------------------
    def _make_call(
        self, variables: Mapping[str, str], record: CallRecord, line: str | None = None
    ) -> _Call:
        endpoints = ServiceEndpoints.from_env(variables)
        record.services = {
            "STRIPE_API_BASE": endpoints.stripe_api_base,
            "FINERACT_API_BASE": endpoints.fineract_api_base,
        }
        if self._cascade is not None:
            cascade = self._cascade()
        else:
            from vamos_env.duplex.cascade import CascadeAgent

            cascade = CascadeAgent()
        info = dict(self.info or default_info())
        if line is not None:
            info["line"] = line
        return _Call(endpoints, cascade, info, record, variables)

    def _handle(self, ws: Any) -> None:
        record = CallRecord(self.mode)
        self.calls.append(record)
        call: _Call | None = None
        try:
            call = self._twilio(ws, record) if self.mode == "twilio" else self._pcm(ws, record)
        except Exception as exc:
            from websockets.exceptions import ConnectionClosed

            if isinstance(exc, ConnectionClosed):
                record.ended = record.ended or "closed"
            else:
                record.ended, record.error = "error", f"{type(exc).__name__}: {exc}"
                with contextlib.suppress(Exception):
                    ws.close(1011, str(exc)[:100])
        finally:
            if call is not None:
                call.close()
            elif record.error is None and record.ended is None:
                record.ended = "closed"

    def _twilio(self, ws: Any, record: CallRecord) -> _Call | None:
        call: _Call | None = None
        stream_sid = ""
        heard = Resampler(TWILIO_RATE, RATE)
        voice = Resampler(RATE, TWILIO_RATE)
        goodbye: str | None = None
        said = 0
        while True:
            event = json.loads(ws.recv(timeout=self.idle_timeout_s))
            kind = event.get("event")
            if kind == "start":
                start = event["start"]
                stream_sid = start["streamSid"]
                params = dict(start.get("customParameters") or {})
                variables = params if params.get("STRIPE_API_BASE") else self._variables()
                # The stream says its audio is G.711 mu-law at 8 kHz: the agent hears a
                # telephone line and takes the detector for one (duplex/line.py).
                media = start.get("mediaFormat") or {}
                narrow = media.get("encoding") == "audio/x-mulaw"
                call = self._make_call(variables, record, line="g711" if narrow else None)
            elif kind == "media" and call is not None:
                audio = heard(mulaw_audio(base64.b64decode(event["media"]["payload"])))
                for out, cut, finished in call.feed(audio):
                    if cut:
                        record.clears += 1
                        ws.send(json.dumps({"event": "clear", "streamSid": stream_sid}))
                    narrow = voice(out)
                    if np.any(out):
                        record.frames_out += 1
                        payload = base64.b64encode(mulaw_bytes(narrow)).decode("ascii")
                        ws.send(
                            json.dumps(
                                {
                                    "event": "media",
                                    "streamSid": stream_sid,
                                    "media": {"payload": payload},
                                }
                            )
                        )
                    if finished:
                        said += 1
                        self._mark(ws, stream_sid, f"said-{said}", record)
                if call.ended and goodbye is None:
                    goodbye = "goodbye"
                    self._mark(ws, stream_sid, goodbye, record)
            elif kind == "mark":
                name = event["mark"]["name"]
                record.marks_echoed.append(name)
                if name == goodbye:
                    record.ended = "agent_hung_up"
                    ws.close(1000, "goodbye")
                    return call
            elif kind == "stop":
                record.ended = "stop"
                return call

    @staticmethod
    def _mark(ws: Any, stream_sid: str, name: str, record: CallRecord) -> None:
        record.marks_sent.append(name)
        ws.send(json.dumps({"event": "mark", "streamSid": stream_sid, "mark": {"name": name}}))

    def _variables(self) -> Mapping[str, str]:
        return self.environ if self.environ is not None else os.environ

    def _pcm(self, ws: Any, record: CallRecord) -> _Call | None:
        if ws.request is not None and ws.request.path.split("?")[0] != self.path:
            record.ended = "error"
            record.error = f"no such path {ws.request.path!r}"
            ws.close(1008, "not found")
            return None
        call = self._make_call(self._variables(), record)
        heard = Resampler(PCM_RATE, RATE)
        voice = Resampler(RATE, PCM_RATE)
        held = b""
        while True:
            message = ws.recv(timeout=self.idle_timeout_s)
            if isinstance(message, str):
                record.ended, record.error = "error", "a text frame on WS /voice"
                ws.close(1003, "binary PCM16 only")
                return call
            held += message
            whole = len(held) - len(held) % 2
            audio, held = pcm_audio(held[:whole]), held[whole:]
            for out, _cut, _finished in call.feed(heard(audio)):
                wide = voice(out)
                if np.any(out):
                    record.frames_out += 1
                    ws.send(pcm_bytes(wide))
            if call.ended:
                record.ended = "agent_hung_up"
                ws.close(1000, "goodbye")
                return call


def serve_twilio(**kwargs: Any) -> VoiceAgentServer:
    """A started Twilio-stream agent server on a free loopback port."""
    return VoiceAgentServer("twilio", **kwargs).start()


def serve_pcm(**kwargs: Any) -> VoiceAgentServer:
    """A started ``WS /voice`` agent server on a free loopback port."""
    return VoiceAgentServer("pcm", **kwargs).start()


__all__ = ["CallRecord", "VoiceAgentServer", "default_info", "serve_pcm", "serve_twilio"]
