"""Simulated callers: the protocol, the scripted caller, LLM callers, personas and casting.

A caller plays one task's brief. The scripted caller is the offline, seeded
default; ``OpenAICaller`` and ``GeminiCaller`` put a chat model in the caller's
seat (their SDKs are the optional ``llm`` extra, imported only when one is built).
"""

from __future__ import annotations

from vamos_env.callers.base import Caller, Deviation, HangUp, HangUpReason, Utterance
from vamos_env.callers.casting import BENCHMARK_PERSONAS, CASTING_SEED, Casting, cast, tally
from vamos_env.callers.deviation import BriefMonitor
from vamos_env.callers.llm import GeminiCaller, LLMCaller, OpenAICaller, caller_prompt
from vamos_env.callers.persona import SHIPPED_PERSONAS, Persona, load_persona, load_persona_file
from vamos_env.callers.scripted import DEFAULT_STALL_LIMIT, ScriptedCaller

__all__ = [
    "BENCHMARK_PERSONAS",
    "CASTING_SEED",
    "DEFAULT_STALL_LIMIT",
    "SHIPPED_PERSONAS",
    "BriefMonitor",
    "Caller",
    "Casting",
    "Deviation",
    "GeminiCaller",
    "HangUp",
    "HangUpReason",
    "LLMCaller",
    "OpenAICaller",
    "Persona",
    "ScriptedCaller",
    "Utterance",
    "caller_prompt",
    "cast",
    "load_persona",
    "load_persona_file",
    "tally",
]
