"""``gemini-live``: a Gemini Live session as a duplex agent (stack ``gemini-live``).

``GeminiLiveAgent`` is a frame-level agent (``reset(info)``, ``step(line_audio,
tool_results) -> (audio, actions)``, as ``CascadeAgent``) that puts a Gemini Live model
behind the call through google-genai's live API (``client.aio.live.connect``) over a
WebSocket, in an asyncio event loop of its own on a background thread. Nothing in
``step`` waits on the socket.

Configuration, by argument or from the environment:

- the model: ``GEMINI_LIVE_MODEL`` (default ``gemini-2.5-flash-native-audio-preview-12-2025``);
- the key: ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` (the names the ``gemini`` stack reads);
- the server: ``GEMINI_LIVE_BASE_URL`` (the SDK's own ``GOOGLE_GEMINI_BASE_URL`` when
  unset), and a CA to trust for it, ``GEMINI_LIVE_CA_FILE``, or an ``ssl_context``.
  With an API key the SDK always connects with ``wss://``; an SSL context reaches the
  WebSocket through ``HttpOptions.async_client_args={"ssl": ctx}`` (the SDK's
  ``_ensure_websocket_ssl_ctx``). ``SSL_CERT_FILE`` works too: the SDK reads it when no
  context is given. ``vamos_env.testing.fake_gemini_live.FakeGeminiLiveServer`` is such
  a server.

Per call:

- **reset** connects with a ``LiveConnectConfig``: ``response_modalities=["AUDIO"]``, the
  call's system prompt as ``system_instruction``, the 16 tools as function declarations
  (``toolschema.gemini_tools``: only the schema fields Gemini accepts), and, unless
  ``end_call_tool`` is off, an ``end_call`` function so the model can hang up;
  ``output_audio_transcription``; automatic activity detection with
  ``silence_duration_ms`` (and the optional prefix and sensitivities); a voice when
  given. It waits for ``setupComplete`` (at most ``connect_timeout_s``) and then, when
  ``opening`` is set (e.g. ``OPENING``), sends it as text so the agent speaks first, as
  published Live agents do. It is off by default: this env's caller opens each call 1 s
  in, and a greeting lands on it.
- **step** sends the line's 16 kHz frames as PCM16 ``audio/pcm;rate=16000`` blobs
  (``send_realtime_input``); the model's audio (24 kHz, generated faster than real
  time) is resampled to 16 kHz with a streaming filter (``bridges.audio``) and played
  out at the call's pace, frame by frame. ``interrupted`` drops what has not been played.
- **tools**: each ``tool_call`` function call becomes a ``ToolCallAction`` (its call id
  is ``gl-<Gemini id>``) that the duplex call runs; the result comes back with the next
  step and goes to the model as ``FunctionResponse(id, name, response={"output": ...})``.
  A ``tool_call_cancellation`` removes calls not yet run; a cancelled call that already
  ran gets no response (the server has dropped it). ``end_call`` ends the call once the
  audio before it has been played.
- ``receive()`` returns at each ``turn_complete``; it is called again in a loop.
- **usage** sums ``usage_metadata`` over the call: ``prompt_tokens`` /
  ``completion_tokens`` (what the runner prices) and the audio and text tokens each way.
- **faults**: a server that closes, sends what the SDK cannot read, sends nothing for
  ``idle_timeout_s``, does not complete the setup in ``connect_timeout_s``, or stops
  reading (a message unsent for ``send_timeout_s``) makes ``step`` raise
  ``GeminiLiveFault`` (``reset`` for the setup); ``run.play`` records it as the agent's
  fault. A session the call stops stepping is closed after ``abandon_after_s``.

The server hears the call in wall time: with ``pace`` (the default) ``step`` holds each
frame until the instant it ends on the wall clock (counted from the session's start), so
an unpaced ``run.play`` runs the call in real time too; ``run.play(..., pace=True)`` does
no harm.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import ssl
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vamos_env.actions import EndCall, ToolCallAction
from vamos_env.bridges.audio import Playback, Resampler, pcm_audio, pcm_bytes
from vamos_env.channel.audio.dsp import RATE, Audio

DEFAULT_MODEL = "gemini-2.5-flash-native-audio-preview-12-2025"
OPENING = "The caller is on the line now. Greet them."
END_CALL = "end_call"
END_CALL_DECLARATION = {
    "name": END_CALL,
    "description": "Hang up the call. Use it only after saying goodbye to the caller.",
}
_RATE_PARAM = re.compile(r"rate\s*=\s*(\d+)")


class GeminiLiveFault(RuntimeError):
    """The Live server failed the call: closed, garbled, silent or unreachable."""


@dataclass
class LiveUsage:
    """What the server reported over one call (``usage_metadata`` summed)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0  # usage reports (one per model turn)
    audio_in_tokens: int = 0
    text_in_tokens: int = 0
    audio_out_tokens: int = 0
    text_out_tokens: int = 0
    latencies_s: list[float] = field(default_factory=list)

    def add(self, meta: Any) -> None:
        prompt = int(getattr(meta, "prompt_token_count", 0) or 0)
        response = int(getattr(meta, "response_token_count", 0) or 0)
        thoughts = int(getattr(meta, "thoughts_token_count", 0) or 0)
        self.prompt_tokens += prompt
        self.completion_tokens += response + thoughts
        self.total_tokens += int(getattr(meta, "total_token_count", 0) or 0)
        self.requests += 1
        for details, audio, text in (
            (getattr(meta, "prompt_tokens_details", None), "audio_in_tokens", "text_in_tokens"),
            (getattr(meta, "response_tokens_details", None), "audio_out_tokens", "text_out_tokens"),
        ):
            for item in details or []:
                modality = str(getattr(getattr(item, "modality", None), "value", "") or "")
                count = int(getattr(item, "token_count", 0) or 0)
                if modality == "AUDIO":
                    setattr(self, audio, getattr(self, audio) + count)
                elif modality == "TEXT":
                    setattr(self, text, getattr(self, text) + count)

    @property
    def audio_prompt_tokens(self) -> int:
        return self.audio_in_tokens

    @property
    def audio_completion_tokens(self) -> int:
        return self.audio_out_tokens

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, int)}


class GeminiLiveAgent:
    """A Gemini Live model on the duplex line (see the module's docstring)."""

    duplex = True
    offline = False
    wall_clock = True  # the server hears the call in wall time: run.play paces this agent

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        api_version: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        ca_file: str | None = None,
        voice: str | None = None,
        silence_duration_ms: int | None = 800,
        prefix_padding_ms: int | None = None,
        start_sensitivity: str | None = None,
        end_sensitivity: str | None = None,
        opening: str | None = None,
        end_call_tool: bool = True,
        pace: bool = True,
        connect_timeout_s: float = 20.0,
        idle_timeout_s: float = 30.0,
        send_timeout_s: float = 5.0,
        abandon_after_s: float = 10.0,
        close_timeout_s: float = 3.0,
    ) -> None:
        self.model = model or os.environ.get("GEMINI_LIVE_MODEL") or DEFAULT_MODEL
        self._api_key = api_key
        self.base_url = base_url or os.environ.get("GEMINI_LIVE_BASE_URL") or None
        self.api_version = api_version
        self._ssl = ssl_context
        self.ca_file = ca_file or os.environ.get("GEMINI_LIVE_CA_FILE") or None
        self.voice = voice
        self.silence_duration_ms = silence_duration_ms
        self.prefix_padding_ms = prefix_padding_ms
        self.start_sensitivity = start_sensitivity
        self.end_sensitivity = end_sensitivity
        self.opening = opening
        self.end_call_tool = end_call_tool
        self.pace = pace
        self.connect_timeout_s = connect_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.send_timeout_s = send_timeout_s
        self.abandon_after_s = abandon_after_s
        self.close_timeout_s = close_timeout_s
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._main: asyncio.Task[None] | None = None
        self._outbox: asyncio.Queue[Any] | None = None
        self._session: Any = None
        self._fresh_state()

    def _fresh_state(self) -> None:
        self.usage = LiveUsage()
        self.log: list[dict[str, Any]] = []
        self.session_id: str | None = None
        self._fault: str | None = None
        self._playback = Playback()
        self._resamplers: dict[int, Resampler] = {}
        self._calls: list[tuple[str, str, dict[str, Any]]] = []  # (Gemini id, name, args)
        self._running: dict[str, tuple[str, str]] = {}  # our call id -> (Gemini id, name)
        self._cancelled: set[str] = set()
        self._ending = False
        self._sample = 0  # samples of line audio stepped
        self._said = ""  # the current turn's output transcription
        self._unsent: deque[float] = deque()  # when each queued message was queued
        now = time.monotonic()
        self._heard_at = now  # the server's last message
        self._stepped_at = now
        self._opened_at = now  # when the session was ready: the line's time zero

    @classmethod
    def preflight(cls, environ: Mapping[str, str]) -> str | None:
        """What a default-built agent lacks to run here, or None (for ``vamos eval``)."""
        if not (environ.get("GOOGLE_API_KEY") or environ.get("GEMINI_API_KEY")):
            return "expected GOOGLE_API_KEY (or GEMINI_API_KEY) to be set, got neither"
        return None

    # -- the event loop ------------------------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            return self._loop
        loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(started.set)
            loop.run_forever()

        self._thread = threading.Thread(target=run, name="gemini-live-agent", daemon=True)
        self._thread.start()
        started.wait(5.0)
        self._loop = loop
        return loop

    def _call_soon(self, timeout_s: float, coro: Any) -> Any:
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout_s)
        except TimeoutError:
            future.cancel()
            raise

    def _genai(self) -> Any:
        if self._client is None:
            from google import genai
            from google.genai import types

            context = self._ssl
            if context is None and self.ca_file:
                context = ssl.create_default_context(cafile=self.ca_file)
            options = types.HttpOptions(
                base_url=self.base_url,
                api_version=self.api_version,
                async_client_args={"ssl": context} if context is not None else None,
            )
            key = (
                self._api_key
                or os.environ.get("GOOGLE_API_KEY")
                or os.environ.get("GEMINI_API_KEY")
            )
            if not key:
                raise GeminiLiveFault(
                    "expected an API key (api_key, GOOGLE_API_KEY or GEMINI_API_KEY), got none"
                )
            self._client = genai.Client(api_key=key, http_options=options)
        return self._client

    # -- the protocol -----------------------------------------------------------------------
    def config(self, info: Mapping[str, Any]) -> Any:
        """The ``LiveConnectConfig`` for a call's reset info."""
        from google.genai import types

        from vamos_env.toolschema import gemini_tools

        prompt, tools = info.get("system_prompt"), info.get("tools")
        if not isinstance(prompt, str) or not isinstance(tools, list):
            raise ValueError(
                "expected the environment's reset info with 'system_prompt' (str) and 'tools' "
                f"(list); got keys {sorted(info)}"
            )
        declarations = [types.FunctionDeclaration.model_validate(d) for d in gemini_tools(tools)]
        if self.end_call_tool:
            declarations.append(types.FunctionDeclaration.model_validate(END_CALL_DECLARATION))
        detection = types.AutomaticActivityDetection(
            disabled=False,
            silence_duration_ms=self.silence_duration_ms,
            prefix_padding_ms=self.prefix_padding_ms,
            start_of_speech_sensitivity=(
                types.StartSensitivity(self.start_sensitivity) if self.start_sensitivity else None
            ),
            end_of_speech_sensitivity=(
                types.EndSensitivity(self.end_sensitivity) if self.end_sensitivity else None
            ),
        )
        speech = (
            types.SpeechConfig(
                voice_config=types.VoiceConfig(
                    prebuilt_voice_config=types.PrebuiltVoiceConfig(voice_name=self.voice)
                )
            )
            if self.voice
            else None
        )
        return types.LiveConnectConfig(
            response_modalities=[types.Modality.AUDIO],
            system_instruction=prompt,
            tools=[types.Tool(function_declarations=declarations)],
            output_audio_transcription=types.AudioTranscriptionConfig(),
            realtime_input_config=types.RealtimeInputConfig(automatic_activity_detection=detection),
            speech_config=speech,
        )

    def reset(self, info: Mapping[str, Any]) -> None:
        """Close any session of an earlier call and open this call's (bounded wait)."""
        self.close()
        self._fresh_state()
        if not info:
            return
        config = self.config(info)
        client = self._genai()
        budget = self.connect_timeout_s + self.close_timeout_s + 1.0
        try:
            self.session_id = self._call_soon(budget, self._open(client, config))
            self._opened_at = time.monotonic()
        except TimeoutError:
            raise GeminiLiveFault(
                f"Gemini Live: no setupComplete within {self.connect_timeout_s:g} s"
            ) from None

    async def _open(self, client: Any, config: Any) -> str | None:
        ready: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._outbox = asyncio.Queue()
        self._main = asyncio.create_task(self._run(client, config, ready))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout_s)
        except TimeoutError:
            await self._stop()
            raise GeminiLiveFault(
                f"Gemini Live: no setupComplete within {self.connect_timeout_s:g} s"
            ) from None
        except GeminiLiveFault:
            await self._stop()
            raise

    async def _run(self, client: Any, config: Any, ready: asyncio.Future[str | None]) -> None:
        sender: asyncio.Task[None] | None = None
        watchdog: asyncio.Task[None] | None = None
        try:
            async with client.aio.live.connect(model=self.model, config=config) as session:
                self._session = session
                self._heard_at = self._stepped_at = time.monotonic()
                if not ready.done():
                    ready.set_result(session.session_id)
                if self.opening:
                    await session.send_realtime_input(text=self.opening)
                sender = asyncio.create_task(self._send_loop(session))
                watchdog = asyncio.create_task(self._watch())
                while True:
                    async for message in session.receive():
                        self._take(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # whatever the server did is its fault
            why = _describe(exc)
            self._fail(why)
            if not ready.done():
                ready.set_exception(GeminiLiveFault(f"Gemini Live: {why}"))
        finally:
            for task in (sender, watchdog):
                if task is not None:
                    task.cancel()
            self._session = None

    async def _send_loop(self, session: Any) -> None:
        assert self._outbox is not None
        while True:
            kind, payload = await self._outbox.get()
            try:
                if kind == "audio":
                    await session.send_realtime_input(audio=payload)
                else:
                    await session.send_tool_response(function_responses=payload)
            except Exception as exc:
                self._fail(f"sending {kind} failed: {_describe(exc)}")
                return
            with self._lock:
                if self._unsent:
                    self._unsent.popleft()

    async def _watch(self) -> None:
        """Close a session the call no longer steps (it ended, or its runner moved on)."""
        while True:
            await asyncio.sleep(0.5)
            if time.monotonic() - self._stepped_at > self.abandon_after_s:
                self.log.append({"time_s": self._now(), "closed": "abandoned by the call"})
                if self._main is not None:
                    self._main.cancel()
                return

    async def _stop(self) -> None:
        task, self._main = self._main, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, self.close_timeout_s)

    def close(self) -> None:
        """End the session (if any); the agent can be reset for another call."""
        if self._loop is None or self._main is None:
            return
        with contextlib.suppress(Exception):
            self._call_soon(self.close_timeout_s + 1.0, self._stop())

    def __enter__(self) -> GeminiLiveAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the server sends (on the loop's thread) -------------------------------------------
    def _fail(self, why: str) -> None:
        with self._lock:
            if self._fault is None:
                self._fault = why

    def _now(self) -> float:
        return round(self._sample / RATE, 3)

    def _take(self, message: Any) -> None:
        with self._lock:
            self._heard_at = time.monotonic()
            content = message.server_content
            if content is not None:
                self._content(content)
            call = message.tool_call
            if call is not None:
                for fc in call.function_calls or []:
                    if not fc.id:
                        self._fault = f"Gemini Live: a function call without an id ({fc.name})"
                        continue
                    self._calls.append((fc.id, str(fc.name or ""), dict(fc.args or {})))
            cancelled = message.tool_call_cancellation
            if cancelled is not None:
                ids = set(cancelled.ids or [])
                self._cancelled |= ids
                self._calls = [c for c in self._calls if c[0] not in ids]
                self.log.append({"time_s": self._now(), "cancelled": sorted(ids)})
            if message.usage_metadata is not None:
                self.usage.add(message.usage_metadata)
            if message.go_away is not None:
                self.log.append({"time_s": self._now(), "go_away": str(message.go_away.time_left)})

    def _content(self, content: Any) -> None:
        if content.interrupted:
            dropped = self._playback.pending
            self._playback.clear()
            self._resamplers.clear()
            self.log.append(
                {"time_s": self._now(), "interrupted": round(dropped / RATE, 3), "said": self._said}
            )
            self._said = ""
        turn = content.model_turn
        for part in (turn.parts or []) if turn is not None else []:
            blob = part.inline_data
            if blob is not None and blob.data and str(blob.mime_type or "").startswith("audio/"):
                found = _RATE_PARAM.search(str(blob.mime_type))
                rate = int(found.group(1)) if found else 24_000
                pcm = pcm_audio(blob.data[: len(blob.data) // 2 * 2])
                if rate not in self._resamplers:
                    self._resamplers[rate] = Resampler(rate, RATE)
                self._playback.push(self._resamplers[rate](pcm))
            elif part.text and not part.thought:
                self._said += part.text
        if content.output_transcription is not None and content.output_transcription.text:
            self._said += content.output_transcription.text
        if content.turn_complete:
            if self._said:
                self.log.append({"time_s": self._now(), "said": self._said.strip()})
            self._said = ""

    # -- the call's side ----------------------------------------------------------------------
    def step(
        self, line_audio: Audio, tool_results: list[dict[str, Any]] | None = None
    ) -> tuple[Audio, list[Any]]:
        """Send the line's frames and any tool results; play the next frames of the model."""
        from google.genai import types

        if self.pace:  # a frame goes out no earlier than the instant it ends
            ahead = self._opened_at + (self._sample + len(line_audio)) / RATE - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        now = time.monotonic()
        self._stepped_at = now
        with self._lock:
            fault = self._fault
            if fault is None and self._session is None:
                fault = (
                    "no session: call reset(info) first"
                    if self._main is None
                    else ("the session has ended")
                )
            if fault is None and now - self._heard_at > self.idle_timeout_s:
                fault = f"no message from the server for {self.idle_timeout_s:g} s"
            if fault is None and self._unsent and now - self._unsent[0] > self.send_timeout_s:
                fault = (
                    f"the server stopped reading: {len(self._unsent)} messages unsent for "
                    f"{now - self._unsent[0]:.1f} s"
                )
            if fault is not None:
                self._fault = fault
        if fault is not None:
            raise GeminiLiveFault(f"Gemini Live: {fault}")
        responses = []
        for entry in tool_results or []:
            ours = entry.get("tool_call_id")
            running = self._running.pop(str(ours), None) if ours is not None else None
            if running is None:
                continue
            gemini_id, name = running
            if gemini_id in self._cancelled:
                continue
            result = entry.get("result", {"error": entry.get("error", "no result")})
            responses.append(
                types.FunctionResponse(id=gemini_id, name=name, response={"output": result})
            )
        if responses:
            self._queue("tools", responses)
        pcm = pcm_bytes(line_audio)
        self._queue("audio", types.Blob(data=pcm, mime_type=f"audio/pcm;rate={RATE}"))
        self._sample += len(line_audio)
        actions: list[Any] = []
        with self._lock:
            calls, self._calls = self._calls, []
            out = self._playback.take(len(line_audio))
            left = self._playback.pending
        for gemini_id, name, args in calls:
            if name == END_CALL and self.end_call_tool:
                self._ending = True
                self.log.append({"time_s": self._now(), "end_call": gemini_id})
                continue
            ours = f"gl-{gemini_id}"
            self._running[ours] = (gemini_id, name)
            actions.append(ToolCallAction(name, args, call_id=ours))
        if self._ending and left == 0:
            actions.append(EndCall())
            self._ending = False
        return out, actions

    def _queue(self, kind: str, payload: Any) -> None:
        loop, outbox = self._loop, self._outbox
        if loop is None or outbox is None:
            return
        with self._lock:
            self._unsent.append(time.monotonic())
        loop.call_soon_threadsafe(outbox.put_nowait, (kind, payload))


def _describe(exc: BaseException) -> str:
    """A server failure in words: the close code and reason when the socket closed."""
    from websockets.exceptions import ConnectionClosed

    if isinstance(exc, ConnectionClosed):  # closed before the SDK read it (a send, the setup)
        frame = exc.rcvd
        if frame is not None:
            return f"the server closed the session ({frame.code}): {frame.reason}"
        return f"the connection was lost: {exc}"
    code = getattr(exc, "code", None)
    if isinstance(code, int) and code >= 1000:
        return f"the server closed the session ({code}): {exc}"
    return f"{type(exc).__name__}: {exc}"


__all__ = ["DEFAULT_MODEL", "OPENING", "GeminiLiveAgent", "GeminiLiveFault", "LiveUsage"]
