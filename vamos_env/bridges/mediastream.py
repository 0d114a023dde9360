"""Media-stream bridges: an outside voice agent, reached over a WebSocket, in a duplex call.

Two frame-level duplex agents (the interface of ``CascadeAgent``: ``reset(info)`` and
``step(line_audio_16k, tool_results) -> (audio_16k, actions)``) that play the telephone
network's side of a call to an agent we only reach over the wire:

- ``TwilioStreamAgent(url)``: Twilio's side of a bidirectional Media Stream (the
  ``<Connect><Stream>`` contract). It sends ``connected``, ``start`` (stream, account and
  call ids, ``tracks``, ``customParameters`` carrying the call's service variables, the
  ``audio/x-mulaw`` 8 kHz mono format), one ``media`` message per 20 ms frame of line audio
  (160 bytes of mu-law, base64; ``sequenceNumber``, ``chunk`` and ``timestamp`` as
  strings), and ``stop`` at the end. It accepts ``media`` (mu-law 8 kHz, played at real
  pace), ``mark`` (echoed once the audio queued before it has played, or when a ``clear``
  drops it) and ``clear`` (drop what has not played yet).
- ``PCMStreamAgent(url)``: veris-ai/rory-agent's ``WS /voice``: raw PCM16 LE mono at 24 kHz
  both ways, no envelope (960 bytes per 20 ms); one connection is one call; the call ends
  when the socket closes.

The outside agent runs its own tools against the call's served twins (their variables go
in ``customParameters`` or in the environment of the agent's launcher), so these agents
send no tool actions. The agent hangs up by closing the socket with 1000 (or 1001): what
it sent is played to the end, then the call ends as an ``end_call``. When the call ends on
our side (the caller hung up), ``close()`` sends ``stop`` (Twilio) and closes with 1000.

Anything else ends the call as an agent fault (``AgentFault`` raised from ``step``, which
``duplex.run.play`` records as ``agent_fault``; the call is still graded): no connection
within ``connect_timeout_s``; a malformed message (a text frame on the PCM stream, a binary
frame, invalid JSON, an unknown event or a missing field on the Twilio stream, bad base64,
an odd number of PCM bytes); the socket closed abnormally, or normally before the agent
said anything; no audio from the agent within ``answer_timeout_s`` of the call's start; no
message at all for ``idle_timeout_s``; more than ``MAX_AHEAD_S`` of audio queued.

The audio (resampling, mu-law and PCM16 bytes, the playback queue with its marks) is
``vamos_env.bridges.audio``'s.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vamos_env.bridges.audio import (
    Playback,
    Resampler,
    mulaw_audio,
    mulaw_bytes,
    pcm_audio,
    pcm_bytes,
)
from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.duplex.engine import FRAME

TWILIO_RATE = 8_000
PCM_RATE = 24_000
MULAW_FRAME_BYTES = TWILIO_RATE // 50  # 160: one 20 ms frame of mu-law
PCM_FRAME_BYTES = 2 * PCM_RATE // 50  # 960: one 20 ms frame of PCM16 at 24 kHz
CONNECT_TIMEOUT_S = 10.0  # rory's actor connects with a 10 s timeout
ANSWER_TIMEOUT_S = 30.0
IDLE_TIMEOUT_S = 60.0
MAX_AHEAD_S = 300.0  # audio queued and not yet played
CLOSE_TIMEOUT_S = 2.0
NORMAL_CLOSE = (1000, 1001)

# Where the bridges find their agent when no URL is given (what a stack registry passes).
TWILIO_URL_VARIABLE = "VAMOS_TWILIO_STREAM_URL"
PCM_URL_VARIABLE = "VAMOS_VOICE_WS_URL"
TWINS_PORT_VARIABLE = "VAMOS_TWINS_PORT"  # where each call's twins are served for WS /voice
PCM_DEFAULT_URL = "ws://127.0.0.1:8008/voice"  # rory-agent's transports serve :8008

Services = Mapping[str, str] | Callable[[Mapping[str, Any]], Mapping[str, str]] | None


class AgentFault(RuntimeError):
    """The outside agent broke its contract (or went away); the message says how."""


# -- the bridges --------------------------------------------------------------------------------
@dataclass
class _State:
    """What the reader thread learned, read by ``step`` under the lock."""

    fault: str | None = None
    closed: tuple[int | None, str] | None = None  # (code, reason) once the agent closed
    heard_audio: bool = False
    last_message: float = 0.0
    messages: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)


class _StreamAgent:
    """The part both bridges share: the connection, the reader thread, pacing and faults."""

    offline = False  # needs an outside agent listening at its URL
    duplex = True
    # The agent runs its own tools: run.play has the call's twins served to it and the
    # grader rebuilds its trace from their request log (vamos_env.bridges.trace).
    outside_tools = True
    twins_port = 0  # serve each call's twins on this port (0: a free one per call)
    url_variable = ""
    default_url: str | None = None
    protocol = ""

    def __init__(
        self,
        url: str | None = None,
        *,
        services: Services = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        answer_timeout_s: float = ANSWER_TIMEOUT_S,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        pace: bool = True,
        hung_up: Callable[[], bool] | None = None,
    ) -> None:
        self.url = url or os.environ.get(self.url_variable) or self.default_url
        self.services = services
        self.connect_timeout_s = connect_timeout_s
        self.answer_timeout_s = answer_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.pace = pace
        # Polled each step: True once the agent hung up some other way than closing its
        # socket (the served Twilio route for ending a call, when the twins serve one).
        self.hung_up = hung_up
        self._ws: Any = None
        self._reader: threading.Thread | None = None
        self._lock = threading.Lock()
        self._state = _State()
        self.playback = Playback()
        self.log: list[dict[str, Any]] = []
        self.sent_frames = 0
        self._t0 = 0.0
        self._hung_up = False

    # -- the frame-level agent interface ------------------------------------------------------
    def reset(self, info: Mapping[str, Any]) -> None:
        self.close()
        if not self.url:
            raise AgentFault(
                f"no agent URL: pass url= or set {self.url_variable} (e.g. ws://127.0.0.1:8765/)"
            )
        from websockets.sync.client import connect

        self._state = _State()
        self.playback = Playback()
        self.log = []
        self.sent_frames = 0
        self._hung_up = False
        self._open_call(info)
        try:
            self._ws = connect(
                self.url,
                open_timeout=self.connect_timeout_s,
                close_timeout=CLOSE_TIMEOUT_S,
                compression=None,
                proxy=None,
                max_size=4 * 1024 * 1024,
                max_queue=None,
            ).__enter__()  # as a context manager would: no legacy-use warning on websockets 17
        except Exception as exc:
            raise AgentFault(
                f"could not connect to the agent at {self.url} within "
                f"{self.connect_timeout_s:g} s: {type(exc).__name__}: {exc}"
            ) from None
        self._t0 = time.monotonic()
        self._state.last_message = self._t0
        try:
            self._greet()
        except Exception as exc:
            rcvd = getattr(exc, "rcvd", None)
            if rcvd is not None:
                self._state.closed = (rcvd.code, rcvd.reason)
            else:
                self._state.fault = f"the agent went away as the call opened: {exc}"
            self._check()  # raises: a close right away is a fault however it is done
            self._abandon()
            raise AgentFault(f"{self.protocol} agent at {self.url}: went away: {exc}") from None
        self._reader = threading.Thread(
            target=self._read, name=f"vamos-{self.protocol}-reader", daemon=True
        )
        self._reader.start()

    def step(
        self, line_audio: Audio, tool_results: list[dict[str, Any]] | None = None
    ) -> tuple[Audio, list[Any]]:
        if self._ws is None:
            raise AgentFault("the bridge is not connected (reset() first, or it was closed)")
        line_audio = np.asarray(line_audio, dtype=np.float64)
        if len(line_audio) % FRAME:
            raise ValueError(f"line audio: expected whole 20 ms frames ({FRAME} samples)")
        frames = len(line_audio) // FRAME
        if self.pace:  # a frame is sent no earlier than the instant it ends
            due = self._t0 + (self.sent_frames + frames) * FRAME / RATE
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        self._check()
        closed = self._state.closed is not None or self._hung_up_elsewhere()
        if not closed:
            try:
                for k in range(frames):
                    self._send_frame(line_audio[k * FRAME : (k + 1) * FRAME])
                    self.sent_frames += 1
            except Exception:
                time.sleep(0.05)  # let the reader record how the connection ended
                self._check()
                closed = True
                if self._state.closed is None:
                    self._fail("the connection broke while sending the caller's audio")
                    self._check()
        with self._lock:
            # The engine runs actions before the step's frames: hang up only in a step that
            # has nothing left to play.
            empty = self.playback.pending == 0
            out = self.playback.take(len(line_audio))
            done = self.playback.marks_done()
        if done and not closed:
            for name in done:
                self._echo_mark(name)
        actions: list[Any] = []
        if closed and empty:
            self._hung_up = True
            self.log.append({"time_s": round(self.sent_frames * FRAME / RATE, 3), "hung_up": True})
            actions.append({"type": "end_call"})
            if self._state.closed is None:
                self.close()  # it hung up by the route: the stream stops as the call ends
            else:
                self._abandon()
        return out, actions

    def _hung_up_elsewhere(self) -> bool:
        if self.hung_up is None:
            return False
        try:
            return bool(self.hung_up())
        except Exception:
            return False

    def close(self) -> None:
        """End the call on our side: say so (Twilio's ``stop``) and close with 1000."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        try:
            if self._state.closed is None and self._state.fault is None:
                self._say_goodbye(ws)
            ws.close(1000, "call ended")
        except Exception:
            pass
        if self._reader is not None:
            self._reader.join(timeout=CLOSE_TIMEOUT_S + 1)
            self._reader = None

    def __enter__(self) -> _StreamAgent:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the reader thread -------------------------------------------------------------------
    def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        ws = self._ws
        while ws is not None:
            try:
                message = ws.recv()
            except ConnectionClosed as exc:
                rcvd = exc.rcvd
                with self._lock:
                    if self._state.closed is None:
                        self._state.closed = (
                            (rcvd.code, rcvd.reason) if rcvd is not None else (None, "")
                        )
                return
            except Exception as exc:
                self._fail(f"reading from the agent failed: {type(exc).__name__}: {exc}")
                return
            with self._lock:
                self._state.last_message = time.monotonic()
                self._state.messages += 1
                if self._state.fault is not None:
                    return
                try:
                    self._receive(message)
                except AgentFault as fault:
                    self._state.fault = str(fault)
            if self._state.fault is not None:
                return  # step raises it (and drops the connection)

    def _fail(self, why: str) -> None:
        with self._lock:
            if self._state.fault is None:
                self._state.fault = why

    def _check(self) -> None:
        """Raise the agent's fault, if it has one by now."""
        now = time.monotonic()
        with self._lock:
            state = self._state
            fault = state.fault
            if fault is None and state.closed is not None:
                code, reason = state.closed
                if code not in NORMAL_CLOSE:
                    shown = "without a close frame" if code is None else f"with code {code}"
                    fault = f"the agent closed the connection {shown}" + (
                        f" ({reason})" if reason else ""
                    )
                elif not state.heard_audio:
                    fault = "the agent closed the connection before it said anything"
            if fault is None and state.closed is None:
                if not state.heard_audio and now - self._t0 > self.answer_timeout_s:
                    fault = f"the agent never answered: no audio within {self.answer_timeout_s:g} s"
                elif now - state.last_message > self.idle_timeout_s:
                    fault = f"the agent sent nothing for {self.idle_timeout_s:g} s"
            if fault is None and self.playback.pending > MAX_AHEAD_S * RATE:
                fault = f"the agent queued more than {MAX_AHEAD_S:g} s of audio ahead of playback"
            if fault is not None:
                state.fault = fault
        if fault is not None:
            self._abandon()
            raise AgentFault(f"{self.protocol} agent at {self.url}: {fault}")

    def _abandon(self) -> None:
        """Drop the connection without ceremony (a fault, or the agent already closed)."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        code = 1000 if self._state.fault is None else 1008

        def shut() -> None:
            with contextlib.suppress(Exception):
                ws.close(code)

        # A hung agent does not read, so its close handshake can only time out: not on the
        # call's time.
        threading.Thread(target=shut, name="vamos-stream-close", daemon=True).start()

    def _queue_audio(self, audio_16k: Audio) -> None:
        """Called by ``_receive`` under the lock."""
        if len(audio_16k):
            self._state.heard_audio = True
            self.playback.push(audio_16k)

    # -- what each contract defines -------------------------------------------------------------
    def _open_call(self, info: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _greet(self) -> None:
        raise NotImplementedError

    def _send_frame(self, frame: Audio) -> None:
        raise NotImplementedError

    def _receive(self, message: str | bytes) -> None:
        raise NotImplementedError

    def _echo_mark(self, name: str) -> None:
        return None

    def _say_goodbye(self, ws: Any) -> None:
        return None


def service_variables(services: Services, info: Mapping[str, Any]) -> dict[str, str]:
    """The call's service variables (STRIPE_API_BASE, ...): from ``services`` (a mapping, or
    a function of the reset info), else from ``info["services"]``; strings only."""
    found: Any = services(info) if callable(services) else services
    if found is None:
        found = info.get("services")
    return {str(k): str(v) for k, v in dict(found or {}).items()}


class TwilioStreamAgent(_StreamAgent):
    """An agent behind a Twilio bidirectional Media Stream: we play Twilio's side."""

    url_variable = TWILIO_URL_VARIABLE
    protocol = "twilio"
    wall_clock = True  # the agent hears the call in wall time: run.play paces this agent
    wire_line = "g711"  # mu-law at 8 kHz: the call's listeners hear its audio as a phone line

    def _open_call(self, info: Mapping[str, Any]) -> None:
        self.custom_parameters = service_variables(self.services, info)
        # The served twins' Twilio call-control route knows the call by these ids: an agent
        # that hangs up or transfers through it uses the ones the start message gave it.
        known = self.custom_parameters
        self.stream_sid = "MZ" + secrets.token_hex(16)
        self.account_sid = known.get("TWILIO_ACCOUNT_SID") or "AC" + secrets.token_hex(16)
        self.call_sid = known.get("TWILIO_CALL_SID") or "CA" + secrets.token_hex(16)
        self.sequence = 0
        self.chunk = 0
        self._down = Resampler(RATE, TWILIO_RATE)
        self._up = Resampler(TWILIO_RATE, RATE)
        self.sent_marks: list[str] = []

    def _next(self) -> str:
        self.sequence += 1
        return str(self.sequence)

    def _send(self, message: Mapping[str, Any], ws: Any = None) -> None:
        (ws or self._ws).send(json.dumps(message, separators=(",", ":")))

    def _greet(self) -> None:
        self._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        self._send(
            {
                "event": "start",
                "sequenceNumber": self._next(),
                "start": {
                    "streamSid": self.stream_sid,
                    "accountSid": self.account_sid,
                    "callSid": self.call_sid,
                    "tracks": ["inbound"],
                    "customParameters": dict(self.custom_parameters),
                    "mediaFormat": {
                        "encoding": "audio/x-mulaw",
                        "sampleRate": TWILIO_RATE,
                        "channels": 1,
                    },
                },
                "streamSid": self.stream_sid,
            }
        )

    def _send_frame(self, frame: Audio) -> None:
        codes = mulaw_bytes(self._down(frame))
        self.chunk += 1
        self._send(
            {
                "event": "media",
                "sequenceNumber": self._next(),
                "media": {
                    "track": "inbound",
                    "chunk": str(self.chunk),
                    "timestamp": str((self.chunk - 1) * 20),
                    "payload": base64.b64encode(codes).decode("ascii"),
                },
                "streamSid": self.stream_sid,
            }
        )

    def _echo_mark(self, name: str) -> None:
        self.sent_marks.append(name)
        with contextlib.suppress(Exception):  # the reader records how the connection ended
            self._send(
                {
                    "event": "mark",
                    "sequenceNumber": self._next(),
                    "streamSid": self.stream_sid,
                    "mark": {"name": name},
                }
            )

    def _say_goodbye(self, ws: Any) -> None:
        self._send(
            {
                "event": "stop",
                "sequenceNumber": self._next(),
                "stop": {"accountSid": self.account_sid, "callSid": self.call_sid},
                "streamSid": self.stream_sid,
            },
            ws,
        )

    def _receive(self, message: str | bytes) -> None:
        if not isinstance(message, str):
            raise AgentFault(
                f"a binary frame ({len(message)} bytes) on a Twilio media stream, which "
                "carries JSON text frames only"
            )
        try:
            event = json.loads(message)
        except ValueError:
            raise AgentFault(f"a text frame that is not JSON: {message[:80]!r}") from None
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise AgentFault(f"a message without an 'event' field: {message[:80]!r}")
        kind = event["event"]
        if kind not in ("media", "mark", "clear"):
            raise AgentFault(
                f"an event Twilio does not accept from a stream: {kind!r} (expected media, "
                "mark or clear)"
            )
        if event.get("streamSid") != self.stream_sid:
            raise AgentFault(
                f"a {kind!r} message for stream {event.get('streamSid')!r}; this stream is "
                f"{self.stream_sid!r}"
            )
        if kind == "media":
            payload = (event.get("media") or {}).get("payload")
            if not isinstance(payload, str):
                raise AgentFault("a 'media' message without media.payload (base64 mu-law)")
            try:
                codes = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                raise AgentFault(f"media.payload is not valid base64: {payload[:40]!r}") from None
            self._queue_audio(self._up(mulaw_audio(codes)))
        elif kind == "mark":
            name = (event.get("mark") or {}).get("name")
            if not isinstance(name, str):
                raise AgentFault("a 'mark' message without mark.name")
            self.playback.mark(name)
            self._state.events.append({"mark": name})
        else:
            self.playback.clear()
            done = self.playback.marks_done()
            self._up.reset()
            self._state.events.append({"clear": len(done)})
            # Pending marks come back at once (sent by step, the only thread that sends).
            self._cleared_marks.extend(done)

    _cleared_marks: list[str]

    def reset(self, info: Mapping[str, Any]) -> None:
        self._cleared_marks = []
        super().reset(info)

    def step(
        self, line_audio: Audio, tool_results: list[dict[str, Any]] | None = None
    ) -> tuple[Audio, list[Any]]:
        with self._lock:
            cleared, self._cleared_marks = self._cleared_marks, []
        if self._ws is not None:
            for name in cleared:
                self._echo_mark(name)
        return super().step(line_audio, tool_results)


class PCMStreamAgent(_StreamAgent):
    """An agent behind rory-agent's ``WS /voice``: PCM16 LE mono 24 kHz both ways.

    Such an agent reads its service variables once, when it starts, so each call's twins
    are served at one fixed address: ``twins_port`` (or ``VAMOS_TWINS_PORT``); start the
    agent with ``STRIPE_API_BASE`` and ``FINERACT_API_BASE`` at ``http://127.0.0.1:PORT``.
    """

    url_variable = PCM_URL_VARIABLE
    default_url = PCM_DEFAULT_URL
    protocol = "pcm"
    wall_clock = True  # the agent hears the call in wall time: run.play paces this agent

    def __init__(self, url: str | None = None, *, twins_port: int | None = None, **kw: Any) -> None:
        super().__init__(url, **kw)
        port = twins_port if twins_port is not None else os.environ.get(TWINS_PORT_VARIABLE, "0")
        try:
            self.twins_port = int(port)
        except ValueError:
            raise ValueError(
                f"{TWINS_PORT_VARIABLE}: expected a port number, got {port!r}"
            ) from None
        if not 0 <= self.twins_port <= 65535:
            raise ValueError(f"twins_port: expected 0 to 65535, got {self.twins_port}")

    def _open_call(self, info: Mapping[str, Any]) -> None:
        self._down = Resampler(RATE, PCM_RATE)  # 16 kHz line -> 24 kHz
        self._up = Resampler(PCM_RATE, RATE)

    def _greet(self) -> None:
        return None  # no envelope: the call starts with the connection

    def _send_frame(self, frame: Audio) -> None:
        data = pcm_bytes(self._down(frame))
        self._ws.send(data)

    def _receive(self, message: str | bytes) -> None:
        if isinstance(message, str):
            raise AgentFault(
                f"a text frame on the PCM stream, which carries binary PCM16 only: {message[:60]!r}"
            )
        if len(message) % 2:
            raise AgentFault(f"{len(message)} bytes of PCM16: not a whole number of samples")
        self._queue_audio(self._up(pcm_audio(message)))


__all__ = [
    "MULAW_FRAME_BYTES",
    "PCM_FRAME_BYTES",
    "AgentFault",
    "PCMStreamAgent",
    "TwilioStreamAgent",
    "service_variables",
]
