"""``realtime``: an OpenAI Realtime session as a duplex agent (stack ``realtime``).

``RealtimeAgent`` is a frame-level agent (``reset(info)``, ``step(line_audio,
tool_results) -> (audio, actions)``, as ``CascadeAgent``) that puts a speech-to-speech
model behind the call through the official ``openai`` SDK's realtime client
(``client.realtime.connect``, the GA protocol) over a WebSocket. The model, base URL
and key come from ``OPENAI_REALTIME_MODEL`` (default ``gpt-realtime``),
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (the names the ``openai`` stack reads), so
any Realtime-compatible server works; ``vamos_env.testing.fake_realtime`` is one.

Per call:

- **reset** opens a session and sends ``session.update``: ``type: realtime``, the call's
  system prompt as ``instructions``, the 16 tools in Realtime's flat function shape,
  ``audio/pcm`` at 24 kHz both ways, and turn detection: ``server_vad`` (the server's
  detector starts and interrupts responses; ``silence_duration_ms`` and ``threshold``
  are passed when given) or ``None`` (this bridge commits the buffer itself at the end
  of each caller turn, heard with the duplex detector, and asks for the response). It
  waits for ``session.updated``; with ``greet`` it then asks the model to speak first.
- **step** resamples the line's 16 kHz frames to 24 kHz (a streaming polyphase filter,
  no clicks at chunk edges) and appends them; the model's audio (which arrives faster
  than real time) is resampled to 16 kHz and played out at the call's pace, and the
  milliseconds of each item actually played are counted.
- **barge-in**: on ``input_audio_buffer.speech_started`` (or this bridge's own detector
  without server VAD) while audio is playing, playback stops, the buffered audio is
  dropped, the item being played is truncated at the milliseconds played (never past
  what was received), and items not started are deleted (truncating at 0 ms is refused
  by the API).
- **tools**: each function call (deduplicated by ``call_id``; a call whose arguments do
  not parse is answered with an error output and not run) becomes a ``ToolCallAction``
  that the duplex call runs through the episode's tool path; the results come back in
  the next step and go to the model as ``function_call_output`` items, followed by one
  ``response.create`` once no response is running (the API allows one at a time).
- **faults**: a server that closes, sends an ``error`` event (other than the benign
  "a response is already running" and "nothing to cancel"), or does not start a
  response within ``answer_timeout_s`` of being asked (or of its own end of turn)
  makes ``step`` raise ``RealtimeFault``; ``run.play`` records it as the agent's fault.
  Every wait is bounded; nothing blocks on the socket in the call's thread.

``usage`` adds up ``response.done`` usage (text and audio tokens, in and out);
``log`` is the agent's own account (what the model said, per its transcript, what was
cut, its tool calls); ``compute`` the wall time spent in the bridge.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vamos_env.actions import EndCall, ToolCallAction
from vamos_env.bridges.audio import Playback, Resampler, pcm_audio, pcm_bytes
from vamos_env.channel.audio.dsp import RATE, Audio

DEFAULT_MODEL = "gpt-realtime"
PCM_RATE = 24_000
END_CALL = "end_call"
# Errors a client may meet in normal operation: a response.create that raced a
# server-started response, a cancel after the response had finished.
BENIGN_ERRORS = frozenset(
    {"conversation_already_has_active_response", "response_cancel_not_active"}
)


class RealtimeFault(RuntimeError):
    """The Realtime server closed, failed or stopped answering: the call cannot go on."""


# -- audio -------------------------------------------------------------------------------------
def pcm24_b64(audio16k: Audio, resampler: Resampler) -> str:
    """16 kHz float audio as Realtime's ``audio/pcm``: 24 kHz PCM16 LE, base64."""
    return base64.b64encode(pcm_bytes(resampler(audio16k))).decode()


def b64_pcm(data: str) -> Audio:
    """Base64 PCM16 LE (any rate) as float audio."""
    return pcm_audio(base64.b64decode(data))


def realtime_tools(tools: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions tool schemas (``{type, function: {name, ...}}``) in Realtime's flat
    shape ``{type: "function", name, description, parameters}``."""
    flat = []
    for tool in tools:
        fn = tool.get("function", tool)
        entry = {"type": "function", "name": fn["name"]}
        if fn.get("description"):
            entry["description"] = fn["description"]
        entry["parameters"] = fn.get("parameters") or {"type": "object", "properties": {}}
        flat.append(entry)
    return flat


# -- accounts ----------------------------------------------------------------------------------
@dataclass
class RealtimeUsage:
    """What the session reported in ``response.done`` (summed over the call's responses).
    ``requests``/``prompt_tokens``/``completion_tokens`` are what the runner records."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    input_text_tokens: int = 0
    input_audio_tokens: int = 0
    cached_tokens: int = 0
    output_text_tokens: int = 0
    output_audio_tokens: int = 0

    def add(self, usage: Mapping[str, Any] | None) -> None:
        self.requests += 1
        if not usage:
            return
        inputs = usage.get("input_token_details") or {}
        outputs = usage.get("output_token_details") or {}
        self.prompt_tokens += int(usage.get("input_tokens") or 0)
        self.completion_tokens += int(usage.get("output_tokens") or 0)
        self.input_text_tokens += int(inputs.get("text_tokens") or 0)
        self.input_audio_tokens += int(inputs.get("audio_tokens") or 0)
        self.cached_tokens += int(inputs.get("cached_tokens") or 0)
        self.output_text_tokens += int(outputs.get("text_tokens") or 0)
        self.output_audio_tokens += int(outputs.get("audio_tokens") or 0)

    @property
    def audio_prompt_tokens(self) -> int:
        return self.input_audio_tokens

    @property
    def audio_completion_tokens(self) -> int:
        return self.output_audio_tokens

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class BridgeCompute:
    """Wall seconds spent in the bridge (never on the call's clock)."""

    send_s: float = 0.0
    events_s: float = 0.0
    resample_s: float = 0.0
    events: int = 0

    def as_dict(self) -> dict[str, float]:
        return {k: round(float(v), 4) for k, v in self.__dict__.items()}


@dataclass
class _Item:
    """One assistant audio item as this side received and played it."""

    item_id: str
    response_id: str
    resampler: Resampler = field(default_factory=lambda: Resampler(PCM_RATE, RATE))
    received_24k: int = 0  # samples of 24 kHz audio received
    done: bool = False  # output_audio.done received
    dropped: bool = False


class _Closed:
    def __init__(self, why: str) -> None:
        self.why = why


# -- the agent ---------------------------------------------------------------------------------
class RealtimeAgent:
    """An OpenAI Realtime session speaking 20 ms frames on a duplex line."""

    offline = False
    duplex = True
    vendor = "openai"
    wall_clock = True  # the server hears the call in wall time: run.play paces this agent

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        turn_detection: str | None = "server_vad",
        silence_duration_ms: int | None = None,
        threshold: float | None = None,
        voice: str | None = None,
        greet: bool = False,
        end_call_tool: bool = False,
        connect_timeout_s: float = 10.0,
        answer_timeout_s: float = 20.0,
        client: Any = None,
    ) -> None:
        if turn_detection not in ("server_vad", "semantic_vad", None):
            raise ValueError(
                f"turn_detection: expected server_vad, semantic_vad or None, got {turn_detection!r}"
            )
        self.model = model or os.environ.get("OPENAI_REALTIME_MODEL") or DEFAULT_MODEL
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self._api_key = api_key
        self.turn_detection = turn_detection
        self.silence_duration_ms = silence_duration_ms
        self.threshold = threshold
        self.voice = voice
        self.greet = greet
        self.end_call_tool = end_call_tool
        self.connect_timeout_s = connect_timeout_s
        self.answer_timeout_s = answer_timeout_s
        self._client = client
        self._manager: Any = None
        self._conn: Any = None
        self._reader: threading.Thread | None = None
        self._events: queue.Queue[Any] = queue.Queue()
        self.usage = RealtimeUsage()
        self.compute = BridgeCompute()
        self.log: list[dict[str, Any]] = []
        self.sample = 0

    @classmethod
    def preflight(cls, environ: Mapping[str, str]) -> str | None:
        if not environ.get("OPENAI_API_KEY"):
            return (
                "expected OPENAI_API_KEY to be set (any value for a local Realtime server; with "
                "OPENAI_BASE_URL for a Realtime-compatible server), got it unset"
            )
        return None

    # -- session -----------------------------------------------------------------------------
    def session_config(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """The ``session.update`` body for this call."""
        prompt, tools = info.get("system_prompt"), info.get("tools")
        if not isinstance(prompt, str) or not isinstance(tools, list):
            raise ValueError(
                "expected the environment's reset info with 'system_prompt' (str) and 'tools' "
                f"(list); got keys {sorted(info)}"
            )
        flat = realtime_tools(tools)
        if self.end_call_tool:
            flat.append(
                {
                    "type": "function",
                    "name": END_CALL,
                    "description": "Hang up. Use only after you have said goodbye and the "
                    "caller has nothing more to ask.",
                    "parameters": {"type": "object", "properties": {}},
                }
            )
        detection: dict[str, Any] | None = None
        if self.turn_detection is not None:
            detection = {"type": self.turn_detection}
            if self.turn_detection == "server_vad":
                if self.silence_duration_ms is not None:
                    detection["silence_duration_ms"] = int(self.silence_duration_ms)
                if self.threshold is not None:
                    detection["threshold"] = float(self.threshold)
        output: dict[str, Any] = {"format": {"type": "audio/pcm", "rate": PCM_RATE}}
        if self.voice:
            output["voice"] = self.voice
        return {
            "type": "realtime",
            "instructions": prompt,
            "output_modalities": ["audio"],
            "tools": flat,
            "tool_choice": "auto",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": PCM_RATE},
                    "turn_detection": detection,
                },
                "output": output,
            },
        }

    def _sdk_client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self._api_key or os.environ.get("OPENAI_API_KEY"),
                base_url=self.base_url,
            )
        return self._client

    def reset(self, info: Mapping[str, Any]) -> None:
        self.close()
        config = self.session_config(info)
        self._info = dict(info)
        self.sample = 0
        self.usage = RealtimeUsage()
        self.compute = BridgeCompute()
        self.log = []
        self._up = Resampler(RATE, PCM_RATE)
        self._playback = Playback()  # the model's 16 kHz audio by item id, not yet played
        self._items: dict[str, _Item] = {}
        self._dropped_responses: set[str] = set()
        self._active: str | None = None  # the response running now
        self._want_response = False
        self._awaiting_since: float | None = None
        self._calls_seen: set[str] = set()
        self._pending: list[tuple[str, str]] = []  # (call_id, name) sent to the line, unanswered
        self._outputs: list[tuple[str, str]] = []  # (call_id, output) to send
        self._ending = False
        self._transcripts: dict[str, str] = {}
        self._detector: Any = None
        if self.turn_detection is None:
            from vamos_env.duplex.hearing import StreamingDetector

            self._detector = StreamingDetector()
            self._buffered_ms = 0.0
        self._events = queue.Queue()
        try:
            self._manager = self._sdk_client().realtime.connect(
                model=self.model,
                websocket_connection_options={
                    "open_timeout": self.connect_timeout_s,
                    "close_timeout": 2.0,
                },
                max_retries=0,
            )
            self._conn = self._manager.enter()
        except Exception as exc:
            self._conn = None
            raise RealtimeFault(
                f"could not open a Realtime session at {self.base_url or 'api.openai.com'}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        self._reader = threading.Thread(
            target=self._read, args=(self._conn, self._events), daemon=True
        )
        self._reader.start()
        self._send("session.update", lambda c: c.session.update(session=config))
        self._wait_for("session.updated", self.connect_timeout_s)
        if self.greet:
            self._want_response = True
            self._request_response()

    def close(self) -> None:
        """End the session (idempotent); the reader thread ends with the socket."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        if self._reader is not None:
            self._reader.join(timeout=3.0)
            self._reader = None

    def __del__(self) -> None:  # a session left open holds a socket and a thread
        with contextlib.suppress(Exception):
            self.close()

    @staticmethod
    def _read(conn: Any, events: queue.Queue[Any]) -> None:
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        try:
            while True:
                raw = conn.recv_bytes()
                try:
                    event = json.loads(raw)
                except ValueError:
                    events.put(_Closed(f"the server sent a frame that is not JSON: {raw[:80]!r}"))
                    return
                events.put(event if isinstance(event, dict) else {"type": "?", "raw": event})
        except ConnectionClosed as exc:
            close = exc.rcvd
            how = f"code {close.code}: {close.reason or 'no reason'}" if close else "no close frame"
            lost = (
                "closed the session" if isinstance(exc, ConnectionClosedOK) else "lost the session"
            )
            events.put(_Closed(f"the server {lost} ({how})"))
        except Exception as exc:
            events.put(_Closed(f"reading the session failed: {type(exc).__name__}: {exc}"))

    def _send(self, what: str, send: Any) -> None:
        if self._conn is None:
            raise RealtimeFault(f"cannot send {what}: the session is closed")
        began = time.perf_counter()
        try:
            send(self._conn)
        except Exception as exc:
            from websockets.exceptions import ConnectionClosed

            if isinstance(exc, ConnectionClosed):
                self._conn = None
                raise RealtimeFault(
                    f"the server closed the session ({exc}) while {what} was sent"
                ) from exc
            raise RealtimeFault(f"sending {what} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            self.compute.send_s += time.perf_counter() - began

    def _wait_for(self, kind: str, timeout_s: float) -> None:
        deadline = time.perf_counter() + timeout_s
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise RealtimeFault(f"the server did not send {kind} within {timeout_s:g} s")
            try:
                event = self._events.get(timeout=left)
            except queue.Empty:
                continue
            self._handle(event, [])
            if isinstance(event, dict) and event.get("type") == kind:
                return

    # -- one step ----------------------------------------------------------------------------
    def step(
        self, line_audio: Audio, tool_results: list[dict[str, Any]] | None = None
    ) -> tuple[Audio, list[Any]]:
        if self._conn is None:
            raise RealtimeFault("step before reset (no Realtime session)")
        actions: list[Any] = []
        self._answer(tool_results or [])
        began = time.perf_counter()
        chunk = pcm24_b64(line_audio, self._up)
        self.compute.resample_s += time.perf_counter() - began
        self._send("input_audio_buffer.append", lambda c: c.input_audio_buffer.append(audio=chunk))
        if self._detector is not None:
            self._client_turns(line_audio)
        self.sample += len(line_audio)
        began = time.perf_counter()
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            self._handle(event, actions)
        self.compute.events_s += time.perf_counter() - began
        if self._want_response:
            self._request_response()
        if (
            self._awaiting_since is not None
            and time.perf_counter() - self._awaiting_since > self.answer_timeout_s
        ):
            raise RealtimeFault(
                f"the server started no response within {self.answer_timeout_s:g} s of being "
                "asked for one"
            )
        out = self._playback.take(len(line_audio))
        idle = not self._playback.pending and not self._pending and self._active is None
        if self._ending and idle:
            actions.append(EndCall())
            self._ending = False
        return out, actions

    @property
    def now_s(self) -> float:
        return self.sample / RATE

    # -- the server's events -----------------------------------------------------------------
    def _handle(self, event: Any, actions: list[Any]) -> None:
        if isinstance(event, _Closed):
            self._conn = None
            raise RealtimeFault(event.why)
        self.compute.events += 1
        kind = event.get("type")
        if kind == "error":
            error = event.get("error") or {}
            code = error.get("code")
            self.log.append({"time_s": round(self.now_s, 3), "error": error})
            if code in BENIGN_ERRORS:
                return
            raise RealtimeFault(
                f"the server reported an error: {error.get('type')}/{code}: {error.get('message')}"
            )
        if kind == "response.created":
            response = event.get("response") or {}
            self._active = response.get("id")
            self._awaiting_since = None
        elif kind == "response.done":
            response = event.get("response") or {}
            self.usage.add(response.get("usage"))
            if response.get("id") in (self._active, None):
                self._active = None
            if response.get("status") == "failed":
                details = response.get("status_details") or {}
                raise RealtimeFault(f"a response failed: {details.get('error') or details}")
            for item in response.get("output") or []:
                if item.get("type") == "function_call":
                    self._function_call(item, actions)
        elif kind == "response.output_audio.delta":
            self._audio(event)
        elif kind == "response.output_audio.done":
            item = self._items.get(event.get("item_id", ""))
            if item is not None and not item.dropped:
                item.done = True
                self._playback.push(item.resampler.flush(), item.item_id)
        elif kind == "response.output_audio_transcript.done":
            self._transcripts[event.get("item_id", "")] = event.get("transcript", "")
            self.log.append({"time_s": round(self.now_s, 3), "said": event.get("transcript", "")})
        elif kind in ("response.function_call_arguments.done", "response.output_item.done"):
            item = event.get("item") if kind == "response.output_item.done" else event
            if item and (
                kind != "response.output_item.done" or item.get("type") == "function_call"
            ):
                self._function_call(item, actions)
        elif kind == "input_audio_buffer.speech_started":
            self._barge_in()
        elif kind == "input_audio_buffer.speech_stopped":
            if self._active is None and self._awaiting_since is None:
                self._awaiting_since = time.perf_counter()
        elif kind == "conversation.item.input_audio_transcription.completed":
            self.log.append({"time_s": round(self.now_s, 3), "heard": event.get("transcript", "")})

    def _audio(self, event: Mapping[str, Any]) -> None:
        item_id = event.get("item_id", "")
        response_id = event.get("response_id", "")
        if response_id in self._dropped_responses:
            return
        item = self._items.get(item_id)
        if item is None:
            item = self._items[item_id] = _Item(item_id, response_id)
        if item.dropped:
            return
        pcm = b64_pcm(event.get("delta", ""))
        item.received_24k += len(pcm)
        began = time.perf_counter()
        audio = item.resampler(pcm)
        self.compute.resample_s += time.perf_counter() - began
        self._playback.push(audio, item_id)

    def _function_call(self, item: Mapping[str, Any], actions: list[Any]) -> None:
        call_id, name = item.get("call_id"), item.get("name")
        if not call_id or not name or call_id in self._calls_seen:
            return  # the same call comes as arguments.done, output_item.done and response.done
        self._calls_seen.add(call_id)
        raw = item.get("arguments") or "{}"
        try:
            arguments = json.loads(raw)
            if not isinstance(arguments, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            self._outputs.append(
                (call_id, json.dumps({"error": f"arguments are not a JSON object: {exc}"}))
            )
            self.log.append({"time_s": round(self.now_s, 3), "bad_call": name, "arguments": raw})
            self._flush_outputs()
            return
        self.log.append({"time_s": round(self.now_s, 3), "tool": name, "arguments": arguments})
        if name == END_CALL and self.end_call_tool:
            self._ending = True
            self._outputs.append((call_id, json.dumps({"ok": True})))
            self._flush_outputs(respond=False)
            return
        actions.append(ToolCallAction(name, arguments, call_id))
        self._pending.append((call_id, name))

    # -- tool results ------------------------------------------------------------------------
    def _answer(self, results: list[dict[str, Any]]) -> None:
        for entry in results:
            call_id = entry.get("tool_call_id")
            match = next((p for p in self._pending if p[0] == call_id), None)
            if match is None and self._pending:
                match = self._pending[0]  # an answer without an id: the oldest call
            if match is None:
                continue
            self._pending.remove(match)
            payload = entry["result"] if "result" in entry else {"error": entry.get("error")}
            self._outputs.append((match[0], json.dumps(payload)))
        if self._outputs and not self._pending:
            self._flush_outputs()

    def _flush_outputs(self, respond: bool = True) -> None:
        for call_id, output in self._outputs:
            item = {"type": "function_call_output", "call_id": call_id, "output": output}
            self._send(
                "conversation.item.create", lambda c, i=item: c.conversation.item.create(item=i)
            )
        self._outputs = []
        if respond and not self._pending:
            self._want_response = True
            self._request_response()

    def _request_response(self) -> None:
        """Ask for a response when none runs (the API allows one at a time); otherwise
        ask again after the running one's ``response.done``."""
        if self._active is not None or not self._want_response:
            return
        self._want_response = False
        self._send("response.create", lambda c: c.response.create())
        if self._awaiting_since is None:
            self._awaiting_since = time.perf_counter()

    # -- client-side turns (turn_detection None) ---------------------------------------------
    def _client_turns(self, line_audio: Audio) -> None:
        from vamos_env.duplex.hearing import Offset, Onset

        self._buffered_ms += len(line_audio) / RATE * 1000
        for event in self._detector.feed(line_audio):
            if isinstance(event, Onset):
                self._barge_in()
            elif isinstance(event, Offset) and self._buffered_ms >= 100:
                self._send("input_audio_buffer.commit", lambda c: c.input_audio_buffer.commit())
                self._buffered_ms = 0.0
                self._want_response = True
                self._request_response()

    # -- playback ----------------------------------------------------------------------------
    @property
    def speaking(self) -> bool:
        return self._playback.pending > 0

    def _barge_in(self) -> None:
        """The caller spoke over the agent: stop, drop what is buffered, and tell the server
        what was heard (truncate the item being played, delete those not started)."""
        if self._active is not None and self.turn_detection is None:
            active = self._active
            self._send("response.cancel", lambda c: c.response.cancel())
            self._dropped_responses.add(active)
        if not self._playback.pending:
            return
        for item_id in self._playback.clear():
            item = self._items[str(item_id)]
            item.dropped = True
            self._dropped_responses.add(item.response_id)
            received_ms = item.received_24k * 1000 // PCM_RATE
            played = self._playback.played_of.get(item_id, 0)
            played_ms = min(played * 1000 // RATE, received_ms)
            if played_ms <= 0:
                self._send(
                    "conversation.item.delete",
                    lambda c, i=item.item_id: c.conversation.item.delete(item_id=i),
                )
                continue
            self._send(
                "conversation.item.truncate",
                lambda c, i=item.item_id, ms=int(played_ms): c.conversation.item.truncate(
                    item_id=i, content_index=0, audio_end_ms=ms
                ),
            )
            said = self._transcripts.get(item.item_id, "")
            share = played_ms / max(received_ms, 1)
            words = said.split()
            self.log.append(
                {
                    "time_s": round(self.now_s, 3),
                    "cut": " ".join(words[: int(len(words) * share)]),
                    "played_ms": int(played_ms),
                    "of_ms": int(received_ms),
                }
            )


__all__ = [
    "DEFAULT_MODEL",
    "RealtimeAgent",
    "RealtimeFault",
    "RealtimeUsage",
    "realtime_tools",
]
