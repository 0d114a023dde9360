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
  given; and ``session_resumption`` (``SessionResumptionConfig()``), so that the server
  sends handles to resume the session with. It waits for ``setupComplete`` (at most
  ``connect_timeout_s``) and then, when ``opening`` is set (e.g. ``OPENING``), sends it
  as text so the agent speaks first, as published Live agents do. It is off by default:
  this env's caller opens each call 1 s in, and a greeting lands on it.
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
- **resumption**: a Live connection lasts about ten minutes, and the service says
  ``go_away`` (``time_left``) before it ends one. The bridge keeps the newest handle of
  a ``session_resumption_update`` that is ``resumable`` (one that is not, sent while the
  model waits on its function calls, leaves the last one in place). On ``go_away`` with
  a handle held, it closes the connection (the service refuses to resume a session
  another socket still holds) and connects again with the same config and
  ``SessionResumptionConfig(handle=...)``; the server keeps the conversation. It does the
  same when the socket closes after a ``go_away`` (whatever the code) or closes normally
  (1000, 1001) while a handle is held. Meanwhile ``step`` goes on: the line's audio and
  tool results wait in the outbox and go to the new connection (the message being sent
  when the old one went is sent again), running tool calls keep their ids, and what is
  left to play plays. Each reconnection is logged (``{"time_s", "reconnect", "why",
  "handle"}``) and counted (``reconnects``), at most ``max_reconnects`` a call
  (``MAX_RECONNECTS``). A close with no handle held, a resumption the server refuses
  or does not complete in ``connect_timeout_s``, or one past the limit is a fault.
- **usage** sums ``usage_metadata`` over the call: ``prompt_tokens`` /
  ``completion_tokens`` (what the runner prices) and the audio and text tokens each way.
- **faults**: a server that closes (but for the resumption above), sends what the SDK
  cannot read, sends nothing for ``idle_timeout_s``, does not complete the setup in
  ``connect_timeout_s``, or stops reading (a message unsent for ``send_timeout_s``)
  makes ``step`` raise ``GeminiLiveFault`` (``reset`` for the setup); ``run.play``
  records it as the agent's fault. A session the call stops stepping is closed after
  ``abandon_after_s``.

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
# Reconnections a call may make. At the service's ~10-minute connection lifetime a call
# of under 900 s needs one or two; a server that ends every connection at once (a goAway
# loop) would otherwise have the bridge reconnect for the whole call.
MAX_RECONNECTS = 6
NORMAL_CLOSES = (1000, 1001)  # a close that is no failure: after it a handle resumes
LOST = 1006  # the connection dropped without a close frame


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
        max_reconnects: int = MAX_RECONNECTS,
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
        self.max_reconnects = max_reconnects
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._main: asyncio.Task[None] | None = None
        self._outbox: asyncio.Queue[Any] | None = None
        self._session: Any = None
        self._watchdog: asyncio.Task[None] | None = None
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
        self._carry: tuple[str, Any] | None = None  # the outbox message being sent
        self.reconnects = 0
        self._handle: str | None = None  # the newest resumable handle
        self._going_away: str | None = None  # the current connection's goAway (time left)
        self._reconnecting = False  # between connections: no session, and no fault
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
            session_resumption=types.SessionResumptionConfig(),
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
        """The call's connections, one after another: the first, then each resumption."""
        resume: str | None = None  # the handle the next connection resumes
        try:
            while True:
                try:
                    why = await self._connection(client, config, resume, ready)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # whatever the server did is its fault
                    fault = str(exc) if isinstance(exc, GeminiLiveFault) else _describe(exc)
                    self._fail(fault)
                    if not ready.done():
                        ready.set_exception(GeminiLiveFault(f"Gemini Live: {fault}"))
                    return
                with self._lock:
                    if self.reconnects >= self.max_reconnects:
                        self._fault = self._fault or (
                            f"gave up after {self.reconnects} reconnections in this call "
                            f"(max_reconnects): the server ended the connection again ({why})"
                        )
                        return
                    self.reconnects += 1
                    resume = self._handle
                    self._heard_at = time.monotonic()
                    self.log.append(
                        {
                            "time_s": self._now(),
                            "reconnect": self.reconnects,
                            "why": why,
                            "handle": resume,
                        }
                    )
        finally:
            watchdog, self._watchdog = self._watchdog, None
            if watchdog is not None:
                watchdog.cancel()
            with self._lock:
                self._session = None
                self._reconnecting = False

    async def _connection(
        self, client: Any, config: Any, resume: str | None, ready: asyncio.Future[str | None]
    ) -> str:
        """One connection of the call, served until it ends: why to resume, or raise."""
        async with contextlib.AsyncExitStack() as stack:
            session = await self._connect(stack, client, config, resume)
            with self._lock:
                self._session = session
                self._going_away = None
                self._reconnecting = False
                now = time.monotonic()
                self._heard_at = now
                if resume is None:
                    self._stepped_at = now
                else:  # what waited through the reconnection was not the server's to read
                    self._unsent = deque(now for _ in self._unsent)
            if resume is None:
                if not ready.done():
                    ready.set_result(session.session_id)
                if self.opening:
                    await session.send_realtime_input(text=self.opening)
            if self._watchdog is None:
                self._watchdog = asyncio.create_task(self._watch())
            stop = asyncio.Event()
            sender = asyncio.create_task(self._send_loop(session, stop))
            try:
                return await self._receive(session)
            except Exception as exc:
                why = self._resumable(exc)
                if why is None:
                    self._fail(self._close_fault(exc))
                    raise
                return why
            finally:
                await self._stop_sending(sender, stop)
                with self._lock:
                    self._session = None
        raise AssertionError("unreachable")  # for mypy: the block returns or raises

    async def _connect(
        self, stack: contextlib.AsyncExitStack, client: Any, config: Any, resume: str | None
    ) -> Any:
        """Open a connection and wait for its ``setupComplete`` (a fault when it fails)."""
        if resume is not None:
            from google.genai import types

            config = config.model_copy(
                update={"session_resumption": types.SessionResumptionConfig(handle=resume)}
            )
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                return await stack.enter_async_context(
                    client.aio.live.connect(model=self.model, config=config)
                )
        except Exception as exc:
            why = (
                f"no setupComplete within {self.connect_timeout_s:g} s"
                if isinstance(exc, TimeoutError)
                else _describe(exc)
            )
            if resume is not None:
                why = f"resuming the session (handle {resume}) failed: {why}"
            raise GeminiLiveFault(why) from exc

    async def _receive(self, session: Any) -> str:
        """Read the connection until a goAway comes with a handle to resume: why to go."""
        while True:
            async for message in session.receive():
                self._take(message)
                with self._lock:
                    if self._going_away is not None and self._handle is not None:
                        self._reconnecting = True
                        return f"goAway, {self._going_away} left"

    def _resumable(self, exc: BaseException) -> str | None:
        """Why to resume after the connection ended with ``exc``; None when it is a fault."""
        code = _close_code(exc)
        with self._lock:
            if code is None or self._handle is None:
                return None
            if self._going_away is None and code not in NORMAL_CLOSES:
                return None
            self._reconnecting = True
            if self._going_away is not None:
                return f"closed ({code}) after goAway, {self._going_away} left"
            return f"closed ({code})"

    def _close_fault(self, exc: BaseException) -> str:
        why = _describe(exc)
        if _close_code(exc) is not None and self._handle is None:
            after = " after goAway" if self._going_away is not None else ""
            why += f" (closed{after} with no resumption handle to resume the session with)"
        return why

    async def _send_loop(self, session: Any, stop: asyncio.Event) -> None:
        """Send the outbox in order; a message the connection's end cuts off goes again."""
        from websockets.exceptions import ConnectionClosed

        assert self._outbox is not None
        while not stop.is_set():
            if self._carry is None:
                self._carry = await self._outbox.get()
            kind, payload = self._carry
            try:
                if kind == "audio":
                    await session.send_realtime_input(audio=payload)
                else:
                    await session.send_tool_response(function_responses=payload)
            except ConnectionClosed:
                return  # the receiving side hears the close: it resumes, or it fails the call
            except Exception as exc:
                self._fail(f"sending {kind} failed: {_describe(exc)}")
                return
            self._carry = None
            with self._lock:
                if self._unsent:
                    self._unsent.popleft()

    async def _stop_sending(self, sender: asyncio.Task[None], stop: asyncio.Event) -> None:
        """Stop the sender between messages (one cut off mid-send goes again, maybe twice)."""
        stop.set()
        if not sender.done() and self._carry is not None:  # mid-send: let it end
            await asyncio.wait({sender}, timeout=self.send_timeout_s)
        sender.cancel()  # waiting on the outbox: its next message stays there
        await asyncio.gather(sender, return_exceptions=True)

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
            update = message.session_resumption_update
            if update is not None and update.resumable and update.new_handle:
                self._handle = update.new_handle
            if message.go_away is not None:
                self._going_away = str(message.go_away.time_left or "an unknown time")
                self.log.append({"time_s": self._now(), "go_away": self._going_away})

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
            # Between connections there is no session and no server to hear from: the
            # reconnection is bounded by its own timeouts (send, close, connect_timeout_s).
            between = self._reconnecting
            if fault is None and not between and self._session is None:
                fault = (
                    "no session: call reset(info) first"
                    if self._main is None
                    else ("the session has ended")
                )
            if fault is None and not between and now - self._heard_at > self.idle_timeout_s:
                fault = f"no message from the server for {self.idle_timeout_s:g} s"
            if (
                fault is None
                and not between
                and self._unsent
                and now - self._unsent[0] > self.send_timeout_s
            ):
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


def _close_code(exc: BaseException) -> int | None:
    """The WebSocket close code of a connection's end (1006 when lost), None if not a close."""
    from websockets.exceptions import ConnectionClosed

    if isinstance(exc, ConnectionClosed):
        return exc.rcvd.code if exc.rcvd is not None else LOST
    code = getattr(exc, "code", None)  # the SDK raises APIError(code) for a close it read
    return code if isinstance(code, int) and code >= 1000 else None


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


__all__ = [
    "DEFAULT_MODEL",
    "MAX_RECONNECTS",
    "OPENING",
    "GeminiLiveAgent",
    "GeminiLiveFault",
    "LiveUsage",
]
