"""The agent protocol every stack implements, and the registry of named stacks.

An agent meets a call through the environment's ``reset`` info (system prompt,
tool schemas, task id, persona, background; never the answers) and then answers
each observation with an action: ``{"type": "say", "text"}``, ``{"type":
"tool_call", "name", "arguments"}`` or ``{"type": "end_call"}`` (an OpenAI-style
assistant message is accepted too). LLM-bound agents also offer ``aact`` so that
many calls can wait on a model at once without a process each.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Action = dict[str, Any]


@runtime_checkable
class Agent(Protocol):
    def reset(self, info: Mapping[str, Any]) -> None:
        """A new call begins; ``info`` is the environment's reset info."""
        ...

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> Action:
        """The next action, given what the agent just received."""
        ...


@runtime_checkable
class AsyncAgent(Protocol):
    async def areset(self, info: Mapping[str, Any]) -> None: ...

    async def aact(self, observation: str, info: Mapping[str, Any] | None = None) -> Action: ...


@dataclass
class Usage:
    """What an LLM-bound agent spent on one call (zero for scripted agents)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    latencies_s: list[float] = field(default_factory=list)

    def add(self, prompt: int, completion: int, latency_s: float) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.requests += 1
        self.latencies_s.append(latency_s)


class ModelAgent:
    """The turn loop shared by agents backed by a chat model (OpenAI, Gemini).

    A subclass keeps the vendor's conversation (``_absorb`` adds what the agent just
    received), asks the model (``_complete`` / ``_acomplete``), and turns a reply into
    an action (``_take``; ``None`` for an empty reply, which is asked again
    ``empty_retries`` times before the agent ends the call). Vendor errors become the
    subclass's ``_failure`` exception so the runner can tell them from agent faults.
    """

    empty_retries: int
    _end_next: bool

    def _absorb(self, observation: str, info: Mapping[str, Any] | None) -> None:
        raise NotImplementedError

    def _complete(self) -> Any:
        raise NotImplementedError

    async def _acomplete(self) -> Any:
        raise NotImplementedError

    def _take(self, reply: Any, latency_s: float) -> Action | None:
        raise NotImplementedError

    def _failure(self, exc: Exception) -> Exception:
        raise NotImplementedError

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> Action:
        if self._end_next:
            return {"type": "end_call"}
        self._absorb(observation, info)
        for _ in range(1 + self.empty_retries):
            started = time.perf_counter()
            try:
                reply = self._complete()
            except Exception as exc:  # the SDKs raise their API errors and several others
                raise self._failure(exc) from exc
            action = self._take(reply, time.perf_counter() - started)
            if action is not None:
                return action
        return {"type": "end_call"}

    async def aact(self, observation: str, info: Mapping[str, Any] | None = None) -> Action:
        if self._end_next:
            return {"type": "end_call"}
        self._absorb(observation, info)
        for _ in range(1 + self.empty_retries):
            started = time.perf_counter()
            try:
                reply = await self._acomplete()
            except Exception as exc:  # the SDKs raise their API errors and several others
                raise self._failure(exc) from exc
            action = self._take(reply, time.perf_counter() - started)
            if action is not None:
                return action
        return {"type": "end_call"}

    async def areset(self, info: Mapping[str, Any]) -> None:
        self.reset(info)

    def reset(self, info: Mapping[str, Any]) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class StackSpec:
    name: str
    entry_point: str  # "module:factory"
    description: str
    offline: bool  # runs with no key and no network
    duplex: bool = False  # speaks audio frames: runs only in duplex calls (docs/duplex.md)


_STACKS: dict[str, StackSpec] = {}


def register_stack(
    name: str, entry_point: str, description: str, *, offline: bool, duplex: bool = False
) -> None:
    """Register a named stack; a second registration of the same name is an error."""
    if name in _STACKS:
        raise ValueError(f"stack {name!r} is already registered ({_STACKS[name].entry_point})")
    if ":" not in entry_point:
        raise ValueError(f"expected an entry point 'module:attribute', got {entry_point!r}")
    _STACKS[name] = StackSpec(name, entry_point, description, offline, duplex)


def stacks() -> dict[str, StackSpec]:
    return dict(_STACKS)


def make_agent(name: str, **kwargs: Any) -> Any:
    """Build a registered stack's agent (imported lazily)."""
    spec = _STACKS.get(name)
    if spec is None:
        raise KeyError(f"unknown stack {name!r}; expected one of {sorted(_STACKS)}")
    module_name, attribute = spec.entry_point.split(":", 1)
    factory: Callable[..., Any] = getattr(importlib.import_module(module_name), attribute)
    return factory(**kwargs)
