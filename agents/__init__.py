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

__all__ = ["Agent", "AsyncAgent", "StackSpec", "Usage", "make_agent", "register_stack", "stacks"]
