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
    "openai",
    "vamos_env.agents.openai_agent:OpenAIAgent",
    "OpenAI-compatible chat-completions tool-calling agent (model and base_url configurable)",
    offline=False,
)
register_stack(
    "gemini",
    "vamos_env.agents.gemini_agent:GeminiAgent",
    "Gemini function-calling agent (google-genai)",
    offline=False,
)

__all__ = ["Agent", "AsyncAgent", "StackSpec", "Usage", "make_agent", "register_stack", "stacks"]
