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
