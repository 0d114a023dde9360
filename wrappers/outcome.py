"""Reading one step of ``VamosEnergy-v0`` back into its parts, for wrappers that re-present it.

The environment's observation is a single string whose shape depends on the action:
the caller's words after speech, a tool's JSON result after one tool call, or a JSON
object ``{"caller"?, "tool_results"}`` when an action did several things. Wrappers that
show the step differently (plain text lines, chat messages) need the parts back:
``split_step`` recovers them from the observation and ``info`` without parsing speech.

``step_with_end`` runs an action followed by ``end_call``: the environment's actions
cannot end a call in the same message that speaks or calls tools, but a person typing
"Goodbye.\\n/end" or a model calling an ``end_call`` function means exactly that.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, SupportsFloat

import gymnasium as gym


@dataclass(frozen=True, slots=True)
class StepParts:
    """What one step produced: the caller's words (if any), tool results, an action error."""

    caller: str | None
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


def split_step(observation: str, info: Mapping[str, Any]) -> StepParts:
    """The parts of one step of the base environment, from its observation and ``info``."""
    error = info.get("action_error")
    if error is not None:
        return StepParts(caller=None, error=str(error))
    results = [dict(r) for r in info.get("tool_results") or []]
    if not results:
        return StepParts(caller=observation or None)
    if len(results) == 1 and observation == json.dumps(results[0]["result"]):
        return StepParts(caller=None, tool_results=results)
    try:
        payload = json.loads(observation)
    except json.JSONDecodeError:
        payload = None
    if isinstance(payload, dict) and "tool_results" in payload:
        caller = payload.get("caller")
        return StepParts(caller=caller or None, tool_results=results)
    # Tools ran, then the call ended (end_call after tools): the observation is the words.
    return StepParts(caller=observation or None, tool_results=results)


StepReturn = tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]


def step_with_end(env: gym.Env[Any, Any], action: Any | None) -> StepReturn:
    """Step ``action`` (if any), then ``end_call`` unless the call already ended.

    The two steps' tool results are merged into the returned ``info``; the observation
    is the first step's (the end of a call adds nothing to hear). An action the
    environment could not understand does not end the call: the agent gets to fix it.
    """
    if action is None:
        return env.step({"type": "end_call"})
    observation, reward, terminated, truncated, info = env.step(action)
    if terminated or truncated or "action_error" in info:
        return observation, reward, terminated, truncated, info
    results = list(info.get("tool_results") or [])
    _, reward, terminated, truncated, info = env.step({"type": "end_call"})
    return observation, reward, terminated, truncated, {**info, "tool_results": results}
