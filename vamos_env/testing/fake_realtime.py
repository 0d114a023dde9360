"""A local OpenAI Realtime server (GA protocol, WebSocket) with the local voice stack behind it.

``FakeRealtimeServer`` listens on ``ws://127.0.0.1:<port>/v1/realtime?model=...``, the URL
the official SDK builds from ``openai.OpenAI(base_url=server.base_url)`` (``http`` becomes
``ws``, ``/realtime`` is appended, the model goes in the query). It asks for
``Authorization: Bearer <api_key>`` and refuses the upgrade with a 401 otherwise.

Each session keeps its own ``ServedCascade``: the cascade of ``vamos_env.duplex`` (its
detector, Whisper ears, the reference decisions, Piper voice) run behind the wire:

- appended audio (``audio/pcm`` at 24 kHz, base64) is resampled to 16 kHz and fed to the
  cascade in 20 ms frames as it arrives, so the server's clock is the audio it has
  received (``audio_start_ms``/``audio_end_ms`` count it), never the wall clock;
- with ``server_vad``, the cascade's detector gives ``speech_started`` /
  ``speech_stopped`` (its stop is ``silence_duration_ms``; ``threshold`` and
  ``prefix_padding_ms`` are accepted and not modelled) and each end of turn starts a
  response that the cascade's next decision fills (empty when it decides nothing
  within its decision time plus 0.2 s); with ``turn_detection: null`` the client
  commits and the committed audio goes to the cascade's ear;
- each decision is one response: a spoken sentence is an assistant ``message`` item
  whose whole audio is sent at once (faster than real time, as the real service does)
  in ``response.output_audio.delta`` events, with its transcript; a tool call is a
  ``function_call`` item (``call_id``, JSON ``arguments``); the cascade's hang-up is an
  ``end_call`` call when the session declares such a tool, and is dropped otherwise;
- ``function_call_output`` items go back to the cascade as its tool results when the
  client asks for the next response (the model does not resume by itself);
- the server does not know what the client played: the cascade learns it was cut only
  from ``conversation.item.truncate`` (its unsaid words are dropped and the text agent
  is told what it had said, as the cascade does at a barge-in on a local line).

Client events are checked as the service checks them, with its error shape
(``{"type": "error", "event_id", "error": {"type", "code", "message", "param",
"event_id"}}``): an unknown event type, a session field that does not exist or has a
bad value, ``response.create`` while a response runs
(``conversation_already_has_active_response``), ``response.cancel`` with none
running, an empty commit, a ``function_call_output`` for no call, a truncate of an
unknown or non-audio item, at 0 ms, or past the item's audio. Errors leave the
session open, as the service's do.

``mute=True`` answers ``session.update`` and nothing after it (a server that never
answers); ``close_after_appends=n`` closes the socket after ``n`` appends (a server
that goes away). ``sessions`` keeps every client event received and every server event
sent, per session, for tests.

Not modelled: ``audio/pcmu``/``audio/pcma`` and text-only output (refused with an
error naming this fake), input transcription events, ``semantic_vad`` (accepted, run
as ``server_vad``), out-of-band responses (``conversation: "none"``), MCP tools,
rate limits. Usage is estimated (10 audio tokens a second in, 20 out, a text token per
4 characters), not the service's accounting.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import itertools
import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np

from vamos_env.actions import EndCall, ToolCallAction
from vamos_env.bridges.audio import Resampler, pcm_bytes, resample_whole
from vamos_env.bridges.realtime import PCM_RATE, b64_pcm
from vamos_env.channel.audio.dsp import RATE
from vamos_env.duplex.cascade import CascadeAgent
from vamos_env.duplex.engine import FRAME
from vamos_env.duplex.hearing import Offset, Onset

CLIENT_EVENTS = (
    "session.update",
    "input_audio_buffer.append",
    "input_audio_buffer.commit",
    "input_audio_buffer.clear",
    "conversation.item.create",
    "conversation.item.retrieve",
    "conversation.item.truncate",
    "conversation.item.delete",
    "response.create",
    "response.cancel",
    "output_audio_buffer.clear",
)
SESSION_FIELDS = frozenset(
    {
        "type",
        "audio",
        "include",
        "instructions",
        "max_output_tokens",
        "model",
        "output_modalities",
        "parallel_tool_calls",
        "prompt",
        "reasoning",
        "tool_choice",
        "tools",
        "tracing",
        "truncation",
    }
)
VOICES = ("alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar")
SERVER_VAD_FIELDS = frozenset(
    {
        "type",
        "threshold",
        "prefix_padding_ms",
        "silence_duration_ms",
        "create_response",
        "interrupt_response",
        "idle_timeout_ms",
    }
)
SEMANTIC_VAD_FIELDS = frozenset({"type", "eagerness", "create_response", "interrupt_response"})
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
DELTA_MS = 200  # audio per output_audio.delta event


class ServedCascade(CascadeAgent):
    """The cascade as a Realtime server runs it: its detector's events are kept for the
    wire (``events``), it does not stop its own speech at an onset (the server cannot
    know what the client played; ``cut`` does that on a truncate), and its own
    end-of-turn rule runs only with server turn detection (``auto``)."""

    auto: bool = True

    def reset(self, info: Mapping[str, Any]) -> None:
        super().reset(info)
        self.events: list[Onset | Offset] = []
        ears = self.ears
        outer = self

        class _Tap:
            def feed(self, frame: Any) -> list[Any]:
                got = ears.feed(frame)
                outer.events.extend(got)
                return got

        self.ears = _Tap()  # type: ignore[assignment]

    def _stop_speaking(self) -> None:  # the client truncates; see ``cut``
        return

    def _heard(self, event: Offset) -> None:
        if self.auto:
            super()._heard(event)

    def hear_committed(self, audio: Any) -> str:
        """The client committed a turn: recognise it, and decide on it when asked."""
        text = self._hear(audio).strip()
        if text and not set(text) <= set(" .,?!-'\""):
            self.heard.append(text)
            self.log.append({"time_s": round(self.sample / RATE, 3), "heard": text})
            return text
        return ""

    def cut(self, saying: Any, share: float | None) -> None:
        """The client stopped playing ``saying`` after ``share`` of it (None: deleted unplayed)."""
        self._queue[:] = [s for s in self._queue if s is not saying]
        if share is None:
            return
        words = saying.text.split()
        self._cut = " ".join(words[: int(len(words) * share)])
        self.log.append({"time_s": round(self.sample / RATE, 3), "cut": self._cut})
        self.barge_ins += 1


def reference_cascade(settings: Any = None) -> ServedCascade:
    """The default voice stack behind the wire: the cascade over the reference solver."""
    return ServedCascade() if settings is None else ServedCascade(settings=settings)


def _error(
    kind: str, code: str | None, message: str, param: str | None = None, event_id: str | None = None
) -> dict[str, Any]:
    return {"type": kind, "code": code, "message": message, "param": param, "event_id": event_id}


class _Refused(Exception):
    def __init__(self, code: str | None, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.param = code, message, param


@dataclass
class _Message:
    """An assistant audio item: the cascade's saying, and how long its audio is."""

    item: dict[str, Any]
    saying: Any
    audio_ms: int


@dataclass
class _Response:
    id: str
    status_due: int | None = None  # sample by which an empty response is finished
    output: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SessionRecord:
    """What one session received and sent (for tests)."""

    model: str
    cascade: Any = None  # the session's ServedCascade (its log: what it heard, said, was cut)
    received: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)

    def sent_types(self) -> list[str]:
        return [e.get("type", "") for e in self.sent]

    def received_of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.received if e.get("type") == kind]


class _Session:
    """One WebSocket session: the protocol state and its cascade."""

    def __init__(self, server: FakeRealtimeServer, websocket: Any, record: SessionRecord) -> None:
        self.server, self.ws, self.record = server, websocket, record
        self.ids = itertools.count(1)
        self.config: dict[str, Any] = {
            "type": "realtime",
            "object": "realtime.session",
            "id": self._id("sess"),
            "model": record.model,
            "output_modalities": ["audio"],
            "instructions": "",
            "tools": [],
            "tool_choice": "auto",
            "max_output_tokens": "inf",
            "tracing": None,
            "truncation": "auto",
            "prompt": None,
            "expires_at": 0,
            "include": None,
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": PCM_RATE},
                    "transcription": None,
                    "noise_reduction": None,
                    "turn_detection": {
                        "type": "server_vad",
                        "threshold": 0.5,
                        "prefix_padding_ms": 300,
                        "silence_duration_ms": 500,
                        "idle_timeout_ms": None,
                        "create_response": True,
                        "interrupt_response": True,
                    },
                },
                "output": {
                    "format": {"type": "audio/pcm", "rate": PCM_RATE},
                    "voice": "marin",
                    "speed": 1.0,
                },
            },
        }
        self.cascade: ServedCascade | None = None
        self.resampler = Resampler(PCM_RATE, RATE)
        self.pending16 = np.zeros(0)
        self.received_24k = 0
        self.buffer16: list[Any] = []  # audio since the last commit/clear (client turns)
        self.buffer_ms = 0.0
        self.items: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.messages: dict[str, _Message] = {}
        self.calls: dict[str, str] = {}  # call_id -> item id
        self.outputs: list[dict[str, Any]] = []  # function_call_output items not yet fed
        self.response: _Response | None = None
        self.spoke = False
        self.speech_item: str | None = None
        self.appends = 0
        self.muted = False

    # -- plumbing ----------------------------------------------------------------------------
    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):06d}"

    def send(self, kind: str, **body: Any) -> None:
        event = {"type": kind, "event_id": self._id("event"), **body}
        self.record.sent.append(
            event
            if kind != "response.output_audio.delta"
            else {**event, "delta": f"<{len(event['delta'])} b64>"}
        )
        self.ws.send(json.dumps(event))

    def error(
        self, code: str | None, message: str, param: str | None, client_event_id: Any
    ) -> None:
        self.send(
            "error",
            error=_error(
                "invalid_request_error",
                code,
                message,
                param,
                client_event_id if isinstance(client_event_id, str) else None,
            ),
        )

    @property
    def detection(self) -> dict[str, Any] | None:
        return self.config["audio"]["input"]["turn_detection"]

    def _new_cascade(self) -> ServedCascade:
        from vamos_env.channel.audio.vad import DetectorSettings

        settings = DetectorSettings()
        detection = self.detection
        if detection is not None and detection.get("silence_duration_ms") is not None:
            settings = replace(settings, stop_s=detection["silence_duration_ms"] / 1000)
        cascade = self.server.agent_factory(settings)
        cascade.reset(
            {
                "system_prompt": self.config["instructions"],
                "tools": self.config["tools"],
                "channel": "realtime",
            }
        )
        cascade.auto = detection is not None and detection.get("create_response", True)
        self.record.cascade = cascade
        return cascade

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> None:
        self.send("session.created", session=self.config)
        for message in self.ws:
            try:
                event = json.loads(message)
            except ValueError:
                self.error("invalid_json", "The event is not valid JSON.", None, None)
                continue
            if not isinstance(event, dict):
                self.error("invalid_json", "The event must be a JSON object.", None, None)
                continue
            self.record.received.append(
                event
                if event.get("type") != "input_audio_buffer.append"
                else {"type": event["type"]}
            )
            if self.muted:
                continue
            try:
                self.handle(event)
            except _Refused as refused:
                self.error(refused.code, refused.message, refused.param, event.get("event_id"))
            if (
                self.server.close_after_appends is not None
                and self.appends >= self.server.close_after_appends
            ):
                self.ws.close(code=1011, reason="fake server going away")
                return

    def handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind not in CLIENT_EVENTS:
            raise _Refused(
                "invalid_value",
                f"Invalid value: {kind!r}. Supported values are: "
                + ", ".join(repr(k) for k in CLIENT_EVENTS)
                + ".",
                "type",
            )
        if kind == "session.update":
            self.update(event.get("session"))
            if self.server.mute:
                self.muted = True
        elif kind == "input_audio_buffer.append":
            self.append(event.get("audio"))
        elif kind == "input_audio_buffer.commit":
            self.commit()
        elif kind == "input_audio_buffer.clear":
            self.buffer16, self.buffer_ms = [], 0.0
            self.send("input_audio_buffer.cleared")
        elif kind == "conversation.item.create":
            self.create_item(event.get("item"), event.get("previous_item_id"))
        elif kind == "conversation.item.retrieve":
            item = self.items.get(str(event.get("item_id")))
            if item is None:
                raise _Refused(
                    "item_not_found", f"Item with id '{event.get('item_id')}' not found.", "item_id"
                )
            self.send("conversation.item.retrieved", item=item)
        elif kind == "conversation.item.truncate":
            self.truncate(event)
        elif kind == "conversation.item.delete":
            self.delete(str(event.get("item_id")))
        elif kind == "response.create":
            self.create_response(event.get("response"))
        elif kind == "response.cancel":
            if self.response is None:
                raise _Refused(
                    "response_cancel_not_active",
                    "Cancellation failed: no active response found.",
                    None,
                )
            self.finish_response("cancelled", {"type": "cancelled", "reason": "client_cancelled"})
        elif kind == "output_audio_buffer.clear":
            raise _Refused(
                "invalid_value",
                "output_audio_buffer.clear is only supported for WebRTC and SIP sessions.",
                "type",
            )

    # -- session -----------------------------------------------------------------------------
    def update(self, session: Any) -> None:
        if not isinstance(session, dict):
            raise _Refused(
                "missing_required_parameter", "Missing required parameter: 'session'.", "session"
            )
        if session.get("type") != "realtime":
            raise _Refused(
                "invalid_value",
                f"Invalid value: {session.get('type')!r}. Supported values are: 'realtime' "
                "(transcription sessions are not modelled by this fake).",
                "session.type",
            )
        for key in session:
            if key not in SESSION_FIELDS:
                raise _Refused(
                    "unknown_parameter", f"Unknown parameter: 'session.{key}'.", f"session.{key}"
                )
        if "model" in session and session["model"] != self.config["model"]:
            raise _Refused(
                "invalid_value", "The model of a session cannot be changed.", "session.model"
            )
        if "output_modalities" in session and session["output_modalities"] != ["audio"]:
            raise _Refused(
                "invalid_value",
                "output_modalities: this fake serves ['audio'] only.",
                "session.output_modalities",
            )
        if "instructions" in session and not isinstance(session["instructions"], str):
            raise _Refused(
                "invalid_type",
                "Invalid type for 'session.instructions': expected a string.",
                "session.instructions",
            )
        tools = session.get("tools")
        if tools is not None:
            self._check_tools(tools)
        audio = session.get("audio")
        new_audio = json.loads(json.dumps(self.config["audio"]))
        if audio is not None:
            if not isinstance(audio, dict) or set(audio) - {"input", "output"}:
                raise _Refused(
                    "unknown_parameter", "Unknown parameter in 'session.audio'.", "session.audio"
                )
            inp, out = audio.get("input") or {}, audio.get("output") or {}
            for key in inp:
                if key not in ("format", "noise_reduction", "transcription", "turn_detection"):
                    raise _Refused(
                        "unknown_parameter",
                        f"Unknown parameter: 'session.audio.input.{key}'.",
                        f"session.audio.input.{key}",
                    )
            for key in out:
                if key not in ("format", "voice", "speed"):
                    raise _Refused(
                        "unknown_parameter",
                        f"Unknown parameter: 'session.audio.output.{key}'.",
                        f"session.audio.output.{key}",
                    )
            for side, part in (("input", inp), ("output", out)):
                if "format" in part:
                    new_audio[side]["format"] = self._check_format(
                        part["format"], f"session.audio.{side}.format"
                    )
            if "turn_detection" in inp:
                new_audio["input"]["turn_detection"] = self._check_detection(inp["turn_detection"])
            for key in ("noise_reduction", "transcription"):
                if key in inp:
                    new_audio["input"][key] = inp[key]
            if "voice" in out:
                voice = out["voice"]
                if not (
                    voice in VOICES
                    or (isinstance(voice, dict) and isinstance(voice.get("id"), str))
                ):
                    raise _Refused(
                        "invalid_value",
                        f"Invalid value: {voice!r}. Supported values are: {', '.join(VOICES)}.",
                        "session.audio.output.voice",
                    )
                if self.spoke and voice != self.config["audio"]["output"]["voice"]:
                    raise _Refused(
                        "cannot_update_voice",
                        "Cannot update a conversation's voice if assistant audio is present.",
                        "session.audio.output.voice",
                    )
                new_audio["output"]["voice"] = voice
            if "speed" in out:
                speed = out["speed"]
                if not isinstance(speed, int | float) or not 0.25 <= speed <= 1.5:
                    raise _Refused(
                        "decimal_above_max_value"
                        if isinstance(speed, int | float) and speed > 1.5
                        else "invalid_value",
                        f"Invalid 'session.audio.output.speed': {speed!r} (0.25 to 1.5).",
                        "session.audio.output.speed",
                    )
                new_audio["output"]["speed"] = speed
        for key, value in session.items():
            if key not in ("audio", "type"):
                self.config[key] = value
        self.config["audio"] = new_audio
        before = self.cascade
        if before is None or before.sample == 0:
            self.cascade = self._new_cascade()
        else:  # the conversation goes on; only the turn-taking follows the update
            before.auto = self.detection is not None and self.detection.get("create_response", True)
        self.send("session.updated", session=self.config)

    def _check_tools(self, tools: Any) -> None:
        if not isinstance(tools, list):
            raise _Refused(
                "invalid_type",
                "Invalid type for 'session.tools': expected an array.",
                "session.tools",
            )
        for n, tool in enumerate(tools):
            where = f"session.tools[{n}]"
            if not isinstance(tool, dict) or tool.get("type") not in ("function", "mcp"):
                raise _Refused(
                    "invalid_value",
                    f"Invalid value for '{where}.type': expected 'function' or 'mcp'.",
                    f"{where}.type",
                )
            if tool["type"] == "mcp":
                raise _Refused("invalid_value", "MCP tools are not modelled by this fake.", where)
            if "function" in tool:
                raise _Refused(
                    "unknown_parameter",
                    f"Unknown parameter: '{where}.function'.",
                    f"{where}.function",
                )
            name = tool.get("name")
            if not isinstance(name, str) or not TOOL_NAME.match(name):
                raise _Refused(
                    "invalid_value",
                    f"Invalid '{where}.name': expected a string matching {TOOL_NAME.pattern}.",
                    f"{where}.name",
                )
            params = tool.get("parameters")
            if params is not None and (
                not isinstance(params, dict) or params.get("type") != "object"
            ):
                raise _Refused(
                    "invalid_value",
                    f"Invalid schema for function '{name}': the parameters must be a JSON "
                    "Schema of type 'object'.",
                    f"{where}.parameters",
                )
            for key in tool:
                if key not in ("type", "name", "description", "parameters"):
                    raise _Refused(
                        "unknown_parameter",
                        f"Unknown parameter: '{where}.{key}'.",
                        f"{where}.{key}",
                    )

    @staticmethod
    def _check_format(fmt: Any, param: str) -> dict[str, Any]:
        if not isinstance(fmt, dict):
            raise _Refused(
                "invalid_type", f"Invalid type for '{param}': expected an object.", param
            )
        kind = fmt.get("type")
        if kind in ("audio/pcmu", "audio/pcma"):
            raise _Refused(
                "invalid_value",
                f"{kind} is not modelled by this fake (audio/pcm only).",
                f"{param}.type",
            )
        if kind != "audio/pcm":
            raise _Refused(
                "invalid_value",
                f"Invalid value: {kind!r}. Supported values are: 'audio/pcm', "
                "'audio/pcmu', and 'audio/pcma'.",
                f"{param}.type",
            )
        rate = fmt.get("rate", PCM_RATE)
        if rate != PCM_RATE:
            raise _Refused(
                "invalid_value",
                f"Invalid value: {rate!r}. Supported values are: 24000.",
                f"{param}.rate",
            )
        return {"type": "audio/pcm", "rate": PCM_RATE}

    @staticmethod
    def _check_detection(detection: Any) -> dict[str, Any] | None:
        param = "session.audio.input.turn_detection"
        if detection is None:
            return None
        if not isinstance(detection, dict) or detection.get("type") not in (
            "server_vad",
            "semantic_vad",
        ):
            raise _Refused(
                "invalid_value",
                f"Invalid value for '{param}.type': expected 'server_vad' or 'semantic_vad'.",
                f"{param}.type",
            )
        allowed = SERVER_VAD_FIELDS if detection["type"] == "server_vad" else SEMANTIC_VAD_FIELDS
        for key in detection:
            if key not in allowed:
                raise _Refused(
                    "unknown_parameter", f"Unknown parameter: '{param}.{key}'.", f"{param}.{key}"
                )
        silence = detection.get("silence_duration_ms", 500)
        if not isinstance(silence, int) or silence < 0:
            raise _Refused(
                "invalid_value",
                f"Invalid '{param}.silence_duration_ms': expected a non-negative integer.",
                f"{param}.silence_duration_ms",
            )
        threshold = detection.get("threshold", 0.5)
        if not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
            raise _Refused(
                "invalid_value",
                f"Invalid '{param}.threshold': expected a number from 0 to 1.",
                f"{param}.threshold",
            )
        full = {
            "type": detection["type"],
            "create_response": bool(detection.get("create_response", True)),
            "interrupt_response": bool(detection.get("interrupt_response", True)),
        }
        if detection["type"] == "server_vad":
            full.update(
                threshold=threshold,
                prefix_padding_ms=detection.get("prefix_padding_ms", 300),
                silence_duration_ms=silence,
                idle_timeout_ms=detection.get("idle_timeout_ms"),
            )
        else:
            full["eagerness"] = detection.get("eagerness", "auto")
        return full

    # -- audio in ----------------------------------------------------------------------------
    def append(self, audio: Any) -> None:
        if not isinstance(audio, str):
            raise _Refused(
                "invalid_type", "Invalid type for 'audio': expected a base64 string.", "audio"
            )
        try:
            pcm = b64_pcm(audio) if audio else np.zeros(0)
        except (binascii.Error, ValueError):
            raise _Refused(
                "invalid_value", "Invalid 'audio': not base64-encoded PCM16.", "audio"
            ) from None
        self.appends += 1
        self.received_24k += len(pcm)
        self.pending16 = np.concatenate([self.pending16, self.resampler(pcm)])
        while len(self.pending16) >= FRAME:
            frame, self.pending16 = self.pending16[:FRAME], self.pending16[FRAME:]
            self.buffer16.append(frame)
            self.buffer_ms += FRAME / RATE * 1000
            self.frame(frame)

    def frame(self, frame: Any) -> None:
        cascade = self.cascade
        if cascade is None:
            self.cascade = cascade = self._new_cascade()
        before = {id(s) for s in cascade._queue}
        heard = len(cascade.heard)
        results = []
        if self.outputs and self.response is not None:
            results, self.outputs = self._tool_results(self.outputs), []
        cascade.events.clear()
        _, actions = cascade.step(frame, results)
        detection = self.detection
        for event in cascade.events:
            ms = round(event.start / RATE * 1000)
            if detection is None:
                continue
            if isinstance(event, Onset):
                self.speech_item = self._id("item")
                self.send(
                    "input_audio_buffer.speech_started", audio_start_ms=ms, item_id=self.speech_item
                )
                if self.response is not None and detection.get("interrupt_response", True):
                    self.finish_response(
                        "cancelled", {"type": "cancelled", "reason": "turn_detected"}
                    )
            elif isinstance(event, Offset):
                item_id = self.speech_item or self._id("item")
                self.speech_item = None
                end_ms = round(event.end / RATE * 1000)
                self.send("input_audio_buffer.speech_stopped", audio_end_ms=end_ms, item_id=item_id)
                self._commit_turn(item_id)
                if detection.get("create_response", True) and self.response is None:
                    due = cascade.sample + round((cascade.decision_s + 0.2) * RATE)
                    if len(cascade.heard) == heard:
                        due = cascade.sample  # no words: nothing to decide on
                    self.start_response(due)
        sayings = [s for s in cascade._queue if id(s) not in before]
        if sayings or actions:
            if self.response is None:
                self.start_response(None)
            for saying in sayings:
                self.emit_message(saying)
            for action in actions:
                self.emit_action(action)
            self.finish_response("completed", None)
        elif (
            self.response is not None
            and self.response.status_due is not None
            and cascade.sample >= self.response.status_due
        ):
            self.finish_response("completed", None)

    def _commit_turn(self, item_id: str) -> None:
        previous = self.order[-1] if self.order else None
        self.send("input_audio_buffer.committed", item_id=item_id, previous_item_id=previous)
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "role": "user",
            "status": "completed",
            "content": [{"type": "input_audio", "transcript": None}],
        }
        self._add_item(item)
        self.buffer16, self.buffer_ms = [], 0.0

    def commit(self) -> None:
        if self.buffer_ms < 100:
            raise _Refused(
                "input_audio_buffer_commit_empty",
                f"Error committing input audio buffer: buffer too small. Expected at least 100ms "
                f"of audio, but buffer only has {self.buffer_ms:.2f}ms of audio.",
                None,
            )
        audio = np.concatenate(self.buffer16)
        cascade = self.cascade
        assert cascade is not None
        item_id = self._id("item")
        self._commit_turn(item_id)
        text = cascade.hear_committed(audio)
        if text:
            cascade._turns.append((cascade.sample, text))

    # -- conversation ------------------------------------------------------------------------
    def _add_item(self, item: dict[str, Any]) -> None:
        previous = self.order[-1] if self.order else None
        self.items[item["id"]] = item
        self.order.append(item["id"])
        self.send("conversation.item.added", item=item, previous_item_id=previous)
        self.send("conversation.item.done", item=item, previous_item_id=previous)

    def create_item(self, item: Any, previous: Any) -> None:
        if not isinstance(item, dict):
            raise _Refused(
                "missing_required_parameter", "Missing required parameter: 'item'.", "item"
            )
        kind = item.get("type")
        item = {
            **item,
            "id": item.get("id") or self._id("item"),
            "object": "realtime.item",
            "status": "completed",
        }
        if kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in self.calls:
                raise _Refused(
                    "invalid_value",
                    f"No tool call found for function call output with call_id {call_id!r}.",
                    "item.call_id",
                )
            if not isinstance(item.get("output"), str):
                raise _Refused(
                    "invalid_type",
                    "Invalid type for 'item.output': expected a string.",
                    "item.output",
                )
            self.outputs.append(item)
        elif kind == "message":
            if item.get("role") not in ("user", "system", "assistant"):
                raise _Refused("invalid_value", "Invalid 'item.role'.", "item.role")
            if item.get("role") == "user" and self.cascade is not None:
                text = " ".join(
                    str(c.get("text", ""))
                    for c in item.get("content") or []
                    if c.get("type") == "input_text"
                ).strip()
                if text:
                    self.cascade._turns.append((self.cascade.sample, text))
        elif kind != "function_call":
            raise _Refused(
                "invalid_value",
                f"Invalid value: {kind!r}. Supported values are: 'message', "
                "'function_call', and 'function_call_output'.",
                "item.type",
            )
        self._add_item(item)

    def truncate(self, event: dict[str, Any]) -> None:
        item_id = str(event.get("item_id"))
        end_ms = event.get("audio_end_ms")
        if event.get("content_index") != 0:
            raise _Refused("invalid_value", "Invalid 'content_index': expected 0.", "content_index")
        if not isinstance(end_ms, int) or end_ms < 0:
            raise _Refused(
                "invalid_value",
                "Invalid 'audio_end_ms': expected a non-negative integer.",
                "audio_end_ms",
            )
        message = self.messages.get(item_id)
        if item_id not in self.items:
            raise _Refused(
                "item_truncate_invalid_item_id",
                f"Item with item_id not found: {item_id}",
                "item_id",
            )
        if message is None or end_ms == 0:
            raise _Refused(
                "invalid_value", "Only model output audio messages can be truncated", "item_id"
            )
        if end_ms > message.audio_ms:
            raise _Refused(
                "invalid_value",
                f"Audio content of {message.audio_ms}ms is already shorter than {end_ms}ms",
                "audio_end_ms",
            )
        share = end_ms / max(message.audio_ms, 1)
        words = message.saying.text.split()
        message.item["content"][0]["transcript"] = " ".join(words[: int(len(words) * share)])
        message.audio_ms = end_ms
        assert self.cascade is not None
        self.cascade.cut(message.saying, share)
        self.send(
            "conversation.item.truncated", item_id=item_id, content_index=0, audio_end_ms=end_ms
        )

    def delete(self, item_id: str) -> None:
        if item_id not in self.items:
            raise _Refused(
                "item_delete_invalid_item_id", f"Item with item_id not found: {item_id}", "item_id"
            )
        del self.items[item_id]
        self.order.remove(item_id)
        message = self.messages.pop(item_id, None)
        if message is not None and self.cascade is not None:
            self.cascade.cut(message.saying, None)
        self.send("conversation.item.deleted", item_id=item_id)

    # -- responses ---------------------------------------------------------------------------
    def create_response(self, params: Any) -> None:
        if self.response is not None:
            raise _Refused(
                "conversation_already_has_active_response",
                f"Conversation already has an active response in progress: {self.response.id}. "
                "Wait until the response is finished before creating a new one.",
                None,
            )
        if params is not None and not isinstance(params, dict):
            raise _Refused(
                "invalid_type", "Invalid type for 'response': expected an object.", "response"
            )
        cascade = self.cascade
        if cascade is None:
            self.cascade = cascade = self._new_cascade()
        if not self.outputs and not cascade._turns and not cascade._awaiting:
            cascade._turns.append((cascade.sample, ""))  # asked to speak with nothing new heard
        # finished empty if the cascade decides nothing by its decision time (+0.2 s)
        self.start_response(cascade.sample + round((cascade.decision_s + 0.2) * RATE) + FRAME)

    def start_response(self, due: int | None) -> None:
        self.response = _Response(self._id("resp"), due)
        self.send("response.created", response=self._response_body("in_progress", None))

    def _response_body(self, status: str, details: Any) -> dict[str, Any]:
        assert self.response is not None
        return {
            "object": "realtime.response",
            "id": self.response.id,
            "status": status,
            "status_details": details,
            "output": self.response.output,
            "conversation_id": "conv_fake",
            "output_modalities": ["audio"],
            "max_output_tokens": "inf",
            "audio": {"output": dict(self.config["audio"]["output"])},
            "usage": None,
            "metadata": None,
        }

    def finish_response(self, status: str, details: Any) -> None:
        body = self._response_body(status, details)
        body["usage"] = self._usage(body["output"])
        self.send("response.done", response=body)
        self.response = None

    def _usage(self, output: list[dict[str, Any]]) -> dict[str, Any]:
        heard_s = self.received_24k / PCM_RATE
        text_in = len(self.config.get("instructions") or "") // 4 + 8 * len(
            self.config.get("tools") or []
        )
        audio_in = round(heard_s * 10)
        text_out = sum(len(json.dumps(i)) // 4 for i in output if i["type"] == "function_call")
        audio_out = 0
        for i in output:
            if i["type"] == "message":
                message = self.messages.get(i["id"])
                text_out += len(i["content"][0].get("transcript") or "") // 4
                audio_out += round((message.audio_ms if message else 0) / 1000 * 20)
        return {
            "total_tokens": text_in + audio_in + text_out + audio_out,
            "input_tokens": text_in + audio_in,
            "output_tokens": text_out + audio_out,
            "input_token_details": {
                "text_tokens": text_in,
                "audio_tokens": audio_in,
                "image_tokens": 0,
                "cached_tokens": 0,
                "cached_tokens_details": {"text_tokens": 0, "audio_tokens": 0, "image_tokens": 0},
            },
            "output_token_details": {"text_tokens": text_out, "audio_tokens": audio_out},
        }

    def emit_message(self, saying: Any) -> None:
        response = self.response
        assert response is not None
        index = len(response.output)
        item_id = self._id("item")
        base = {
            "response_id": response.id,
            "item_id": item_id,
            "output_index": index,
            "content_index": 0,
        }
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        self.send(
            "response.output_item.added", response_id=response.id, output_index=index, item=item
        )
        previous = self.order[-1] if self.order else None
        self.send("conversation.item.added", item=item, previous_item_id=previous)
        self.send("response.content_part.added", **base, part={"type": "audio", "transcript": ""})
        self.send("response.output_audio_transcript.delta", **base, delta=saying.text)
        audio = resample_whole(saying.audio, RATE, PCM_RATE)
        step = PCM_RATE * DELTA_MS // 1000
        for start in range(0, len(audio), step):
            chunk = pcm_bytes(audio[start : start + step])
            self.send("response.output_audio.delta", **base, delta=base64.b64encode(chunk).decode())
        self.send("response.output_audio.done", **base)
        self.send("response.output_audio_transcript.done", **base, transcript=saying.text)
        self.send(
            "response.content_part.done", **base, part={"type": "audio", "transcript": saying.text}
        )
        done = {
            **item,
            "status": "completed",
            "content": [{"type": "output_audio", "transcript": saying.text}],
        }
        self.items[item_id] = done
        self.order.append(item_id)
        self.messages[item_id] = _Message(done, saying, len(audio) * 1000 // PCM_RATE)
        self.spoke = True
        self.send(
            "response.output_item.done", response_id=response.id, output_index=index, item=done
        )
        self.send("conversation.item.done", item=done, previous_item_id=previous)
        response.output.append(done)

    def emit_action(self, action: Any) -> None:
        if isinstance(action, EndCall):
            if not any(t.get("name") == "end_call" for t in self.config.get("tools") or []):
                return  # the session offers no way to hang up
            action = ToolCallAction("end_call", {})
        if not isinstance(action, ToolCallAction):
            return  # text the cascade could not parse: nothing goes on the wire
        response = self.response
        assert response is not None
        index = len(response.output)
        item_id = self._id("item")
        call_id = self._id("call")
        arguments = (
            action.arguments if isinstance(action.arguments, str) else json.dumps(action.arguments)
        )
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "function_call",
            "status": "in_progress",
            "name": action.name,
            "call_id": call_id,
            "arguments": "",
        }
        previous = self.order[-1] if self.order else None
        self.send(
            "response.output_item.added", response_id=response.id, output_index=index, item=item
        )
        self.send("conversation.item.added", item=item, previous_item_id=previous)
        base = {
            "response_id": response.id,
            "item_id": item_id,
            "output_index": index,
            "call_id": call_id,
        }
        self.send("response.function_call_arguments.delta", **base, delta=arguments)
        self.send(
            "response.function_call_arguments.done", **base, name=action.name, arguments=arguments
        )
        done = {**item, "status": "completed", "arguments": arguments}
        self.items[item_id] = done
        self.order.append(item_id)
        self.calls[call_id] = item_id
        self.send(
            "response.output_item.done", response_id=response.id, output_index=index, item=done
        )
        self.send("conversation.item.done", item=done, previous_item_id=previous)
        response.output.append(done)

    def _tool_results(self, outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = []
        for item in outputs:
            call = self.items.get(self.calls.get(item["call_id"], ""), {})
            try:
                result = json.loads(item["output"])
            except ValueError:
                result = item["output"]
            results.append(
                {"tool_call_id": item["call_id"], "name": call.get("name"), "result": result}
            )
        return results


class FakeRealtimeServer:
    """The GA Realtime protocol on ``ws://127.0.0.1:<port>/v1/realtime`` (see the module)."""

    def __init__(
        self,
        *,
        api_key: str = "test",
        agent_factory: Callable[[Any], ServedCascade] | None = None,
        mute: bool = False,
        close_after_appends: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.agent_factory = agent_factory or reference_cascade
        self.mute = mute
        self.close_after_appends = close_after_appends
        self.host, self._port = host, port
        self.sessions: list[SessionRecord] = []
        self.failures: list[str] = []
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        return int(self._server.socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        """What ``openai.OpenAI(base_url=...)`` and ``OPENAI_BASE_URL`` take."""
        return f"http://{self.host}:{self.port}/v1"

    def _process_request(self, connection: Any, request: Any) -> Any:
        path = urlsplit(request.path)
        if path.path.rstrip("/") != "/v1/realtime":
            return connection.respond(404, f"no route {path.path}\n")
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return connection.respond(401, "Incorrect API key provided.\n")
        if not parse_qs(path.query).get("model"):
            return connection.respond(400, "Missing required parameter: 'model'.\n")
        return None

    def _handle(self, websocket: Any) -> None:
        model = parse_qs(urlsplit(websocket.request.path).query)["model"][0]
        record = SessionRecord(model)
        self.sessions.append(record)
        session = _Session(self, websocket, record)
        try:
            session.run()
        except Exception as exc:  # the session's own bug: close as the service would (1011)
            from websockets.exceptions import ConnectionClosed

            if not isinstance(exc, ConnectionClosed):
                self.failures.append(f"{type(exc).__name__}: {exc}")
                with contextlib.suppress(Exception):
                    websocket.close(code=1011, reason=f"server error: {type(exc).__name__}"[:120])

    def start(self) -> FakeRealtimeServer:
        from websockets.sync.server import serve

        self._server = serve(
            self._handle,
            self.host,
            self._port,
            process_request=self._process_request,
            compression=None,
            max_size=None,
            max_queue=4096,
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeRealtimeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["FakeRealtimeServer", "ServedCascade", "SessionRecord", "reference_cascade"]
