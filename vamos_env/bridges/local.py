"""Each bridge against its local server: the offline proof, as stacks the runner can run.

``realtime-local``, ``gemini-live-local``, ``twilio-stream-local`` and ``voice-ws-local``
build the bridge of the same name and start, beside it, the protocol-faithful local server
of ``vamos_env.testing`` that puts the local voice stack (the cascade: Silero, Whisper,
the reference solver's decisions, Piper) behind that vendor's or contract's wire. So
``vamos eval --mode duplex --stacks cascade,realtime-local,...`` compares each bridge with
the same stack played in process, on the same calls, with no keys and no network.

The server lives as long as its agent (the runner keeps an agent per worker and reuses it
through ``reset``), on a free loopback port. ``voice-ws-local`` also fixes the port the
call's twins are served on: rory-agent's stacks read ``STRIPE_API_BASE`` and
``FINERACT_API_BASE`` once, when they start, so each call's twins are served at that one
address (``twins_port``), one call at a time per agent.
"""

from __future__ import annotations

import socket
from typing import Any

from vamos_env.clients.config import ServiceEndpoints


def free_port(host: str = "127.0.0.1") -> int:
    """A loopback port nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def realtime_local(**options: Any) -> Any:
    """``RealtimeAgent`` against ``FakeRealtimeServer`` (the cascade behind Realtime's wire)."""
    from vamos_env.bridges.realtime import RealtimeAgent
    from vamos_env.testing.fake_realtime import FakeRealtimeServer

    server = FakeRealtimeServer().start()
    agent: Any = RealtimeAgent(base_url=server.base_url, api_key=server.api_key, **options)
    agent.local_server = server
    return agent


def gemini_live_local(**options: Any) -> Any:
    """``GeminiLiveAgent`` against ``FakeGeminiLiveServer`` (TLS on loopback)."""
    from vamos_env.bridges.gemini_live import GeminiLiveAgent
    from vamos_env.testing.fake_gemini_live import FakeGeminiLiveServer

    server = FakeGeminiLiveServer().start()
    agent: Any = GeminiLiveAgent(
        api_key=server.api_key,
        base_url=server.base_url,
        ssl_context=server.ssl_context(),
        **options,
    )
    agent.local_server = server
    return agent


def twilio_stream_local(**options: Any) -> Any:
    """``TwilioStreamAgent`` against ``VoiceAgentServer("twilio")``: the outside agent reads
    its twins from the start message and runs its tools over HTTP."""
    from vamos_env.bridges.mediastream import TwilioStreamAgent
    from vamos_env.testing.voice_agent import VoiceAgentServer

    server = VoiceAgentServer("twilio").start()
    agent: Any = TwilioStreamAgent(server.url, **options)
    agent.local_server = server
    return agent


# A local model on a CPU answers in seconds, not the hosted stacks' fraction of one: the
# Pipecat bot is allowed two minutes for its first answer and between messages.
PIPECAT_TIMEOUT_S = 120.0


def pipecat_local(**options: Any) -> Any:
    """``TwilioStreamAgent`` against ``PipecatBot`` (vamos_env.testing.pipecat_bot): a voice
    bot built on the Pipecat framework (its Twilio serializer and WebSocket server
    transport, Silero, Whisper, Piper, an OpenAI-compatible LLM on the local server), its
    16 tools over HTTP against the call's served twins. Needs the ``pipecat`` extra."""
    from vamos_env.bridges.mediastream import TwilioStreamAgent
    from vamos_env.testing.pipecat_bot import PipecatBot

    bot = PipecatBot().start()
    options.setdefault("answer_timeout_s", PIPECAT_TIMEOUT_S)
    options.setdefault("idle_timeout_s", PIPECAT_TIMEOUT_S)
    agent: Any = TwilioStreamAgent(bot.url, **options)
    agent.local_server = bot
    return agent


class _Servers:
    """Servers that live and stop together (``local_server.stop()`` stops them all)."""

    def __init__(self, *servers: Any) -> None:
        self.servers = servers

    def __getattr__(self, name: str) -> Any:  # the bot's own record (``calls``, ``url``)
        return getattr(self.servers[0], name)

    def stop(self) -> None:
        for server in self.servers:
            (getattr(server, "stop", None) or server.close)()


def pipecat_reference(**options: Any) -> Any:
    """The Pipecat bot of ``pipecat_local`` with the reference solver's decisions as its
    model: ``AgentModel("reference")`` answering chat completions (streamed, as Pipecat
    asks) on a loopback ``FakeOpenAIServer``. Pipecat's context, tool handlers, ears and
    voice are all in the call; only the model is swapped, so a miss is Pipecat's part or
    the reference's, never a small model's. Needs the ``pipecat`` extra."""
    from vamos_env.bridges.mediastream import TwilioStreamAgent
    from vamos_env.testing.agent_model import AgentModel
    from vamos_env.testing.fake_openai import FakeOpenAIServer
    from vamos_env.testing.pipecat_bot import PipecatBot

    model = FakeOpenAIServer(AgentModel("reference"), models=("reference",)).start()
    try:
        bot = PipecatBot(llm_url=model.base_url, llm_model="reference", warm=False).start()
    except BaseException:
        model.close()
        raise
    agent: Any = TwilioStreamAgent(bot.url, **options)
    agent.local_server = _Servers(bot, model)
    return agent


def voice_ws_local(**options: Any) -> Any:
    """``PCMStreamAgent`` against ``VoiceAgentServer("pcm")`` started, as rory-agent's stacks
    are, with fixed service variables: every call's twins are served on that port."""
    from vamos_env.bridges.mediastream import PCMStreamAgent
    from vamos_env.testing.voice_agent import VoiceAgentServer

    port = free_port()
    root = f"http://127.0.0.1:{port}"
    environ = ServiceEndpoints(stripe_api_base=root, fineract_api_base=root).as_env()
    server = VoiceAgentServer("pcm", environ=environ).start()
    agent: Any = PCMStreamAgent(server.url, twins_port=port, **options)
    agent.local_server = server
    return agent


for _factory in (
    realtime_local,
    gemini_live_local,
    twilio_stream_local,
    voice_ws_local,
    pipecat_local,
    pipecat_reference,
):
    setattr(_factory, "offline", True)  # no keys, no network  # noqa: B010
    setattr(_factory, "duplex", True)  # noqa: B010

__all__ = [
    "free_port",
    "gemini_live_local",
    "pipecat_local",
    "pipecat_reference",
    "realtime_local",
    "twilio_stream_local",
    "voice_ws_local",
]
