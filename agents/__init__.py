"""Agent stacks: the reference solver, flawed baselines, and LLM tool-calling agents."""

from __future__ import annotations

from vamos_env.agents.base import (
    Agent,
    AsyncAgent,
    StackSpec,
    Usage,
    make_agent,
    register_stack,
    stacks,
)

register_stack(
    "reference",
    "vamos_env.agents.reference:ReferenceAgent",
    "Scripted policy-following solver: the exam's solvability proof",
    offline=True,
)
for _name, _flaw in (
    ("leaky", "discloses the balance before verification (gate)"),
    ("eager", "acts without waiting for consent (requirements)"),
    ("promiser", "books a promised payment; claims a declined payment went through"),
    ("sloppy", "speaks wrong amounts (requirements)"),
    ("naive", "handles only the first request"),
):
    register_stack(
        _name,
        f"vamos_env.agents.flawed:{_name.capitalize()}Agent",
        f"Flawed baseline: {_flaw}",
        offline=True,
    )
register_stack(
    "cascade",
    "vamos_env.duplex.cascade:CascadeAgent",
    "Local voice stack for duplex calls: Silero, Whisper, the reference solver, Piper "
    "(cascade:<stack> puts another text agent behind the same ears and voice)",
    offline=True,
    duplex=True,
)
for _name, _entry, _what in (
    (
        "realtime",
        "vamos_env.bridges.realtime:RealtimeAgent",
        "OpenAI Realtime speech-to-speech session over the official SDK (GA WebSocket); "
        "OPENAI_REALTIME_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY",
    ),
    (
        "gemini-live",
        "vamos_env.bridges.gemini_live:GeminiLiveAgent",
        "Gemini Live speech-to-speech session (google-genai live API); GEMINI_LIVE_MODEL, "
        "GOOGLE_API_KEY, GEMINI_LIVE_BASE_URL",
    ),
    (
        "twilio-stream",
        "vamos_env.bridges.mediastream:TwilioStreamAgent",
        "Outside agent behind a Twilio bidirectional Media Stream, its own tools against the "
        "call's served twins (URL: VAMOS_TWILIO_STREAM_URL)",
    ),
    (
        "voice-ws",
        "vamos_env.bridges.mediastream:PCMStreamAgent",
        "Outside agent behind rory-agent's WS /voice (PCM16 24 kHz), its own tools against "
        "the call's served twins (URL: VAMOS_VOICE_WS_URL, twins port: VAMOS_TWINS_PORT)",
    ),
):
    register_stack(_name, _entry, _what, offline=False, duplex=True)
    register_stack(
        f"{_name}-local",
        f"vamos_env.bridges.local:{_name.replace('-', '_')}_local",
        f"The {_name} bridge against its local server in vamos_env.testing (the cascade "
        "behind that wire protocol): the bridge's offline proof",
        offline=True,
        duplex=True,
    )
register_stack(
    "pipecat-local",
    "vamos_env.bridges.local:pipecat_local",
    "A voice bot built on the Pipecat framework (Twilio serializer, Silero, Whisper, Piper, "
    "the local LLM server or VAMOS_PIPECAT_LLM_URL) behind the twilio-stream bridge, its "
    "tools over HTTP against the call's served twins (needs the pipecat extra)",
    offline=True,
    duplex=True,
)
register_stack(
    "pipecat-reference",
    "vamos_env.bridges.local:pipecat_reference",
    "The Pipecat bot of pipecat-local with the reference solver's decisions as its model "
    "(an OpenAI-compatible server on loopback, vamos_env.testing.agent_model): the "
    "framework's part of a call measured apart from a model's (needs the pipecat extra)",
    offline=True,
    duplex=True,
)

register_stack(
    "openai",
    "vamos_env.agents.openai_agent:OpenAIAgent",
    "OpenAI-compatible chat-completions tool-calling agent (model and base_url configurable)",
    offline=False,
)
register_stack(
    "local",
    "vamos_env.llm.roles:LocalAgent",
    "The OpenAI-compatible agent on the local llama.cpp server (vamos llm serve; docs/llm.md)",
    offline=False,
)
register_stack(
    "gemini",
    "vamos_env.agents.gemini_agent:GeminiAgent",
    "Gemini function-calling agent (google-genai)",
    offline=False,
)

__all__ = ["Agent", "AsyncAgent", "StackSpec", "Usage", "make_agent", "register_stack", "stacks"]
