"""What an agent may do in a call, and how loosely-shaped actions become one.

Three actions: ``say`` (words to the caller), ``tool_call`` (one of the domain's
tools with JSON arguments) and ``end_call``. ``parse_action`` accepts a dict, a
JSON string of one, or an OpenAI-style assistant message (``content`` and/or
``tool_calls``). Anything else is an ``ActionError`` that the environment turns
into an error observation: an agent's bad action never ends the call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

MAX_TEXT = 20_000  # characters of one utterance; longer speech is refused, not truncated


@dataclass(frozen=True, slots=True)
class Say:
    text: str
    type: Literal["say"] = "say"


@dataclass(frozen=True, slots=True)
class ToolCallAction:
    name: str
    arguments: Any  # a dict, or the raw string the agent sent (the session validates it)
    call_id: str | None = None  # the agent's own id (OpenAI tool_call id), echoed back
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class EndCall:
    type: Literal["end_call"] = "end_call"


Action = Say | ToolCallAction | EndCall


@dataclass(frozen=True, slots=True)
class ActionError:
    """Why an action could not be understood, in words the agent can act on."""

    message: str
    received: str = ""


@dataclass(frozen=True, slots=True)
class ParsedActions:
    """An assistant message may say something and call several tools at once."""

    actions: tuple[Action, ...] = field(default_factory=tuple)


def _shown(raw: Any) -> str:
    text = raw if isinstance(raw, str) else repr(raw)
    return text if len(text) <= 120 else text[:117] + "..."


def _from_openai_message(message: Mapping[str, Any]) -> ParsedActions | ActionError:
    actions: list[Action] = []
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = " ".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        )
    if content is not None and not isinstance(content, str):
        return ActionError(
            "expected 'content' to be a string or a list of text parts", _shown(content)
        )
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        return ActionError("expected 'tool_calls' to be a list", _shown(tool_calls))
    for i, call in enumerate(tool_calls):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return ActionError(
                f"expected tool_calls[{i}] to be {{'id', 'type': 'function', 'function': "
                "{'name', 'arguments'}}",
                _shown(call),
            )
        call_id = call.get("id")
        actions.append(
            ToolCallAction(
                function["name"],
                function.get("arguments", "{}"),
                call_id if isinstance(call_id, str) else None,
            )
        )
    if content and content.strip():
        if len(content) > MAX_TEXT:
            return ActionError(
                f"expected at most {MAX_TEXT} characters of speech", f"{len(content)}"
            )
        # Speech first, then tools: the caller hears the words while the tools run.
        actions.insert(0, Say(content))
    if not actions:
        return ActionError(
            "the assistant message had neither content nor tool_calls", _shown(message)
        )
    return ParsedActions(tuple(actions))


def parse_action(raw: Any) -> ParsedActions | ActionError:
    """Turn whatever the agent sent into actions, or say exactly what was wrong."""
    if isinstance(raw, (Say, ToolCallAction, EndCall)):
        return ParsedActions((raw,))
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = raw.decode()
        except UnicodeDecodeError:
            return ActionError("expected UTF-8 text or a dict", _shown(raw))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            return ActionError(
                'expected a JSON object such as {"type": "say", "text": "..."}', _shown(raw)
            )
    if not isinstance(raw, Mapping):
        return ActionError("expected an action object (dict) or its JSON", _shown(raw))
    if raw.get("role") == "assistant" or "tool_calls" in raw:
        return _from_openai_message(raw)
    kind = raw.get("type")
    if kind == "say":
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            return ActionError(
                "expected 'text' to be a non-empty string for a say action", _shown(text)
            )
        if len(text) > MAX_TEXT:
            return ActionError(f"expected at most {MAX_TEXT} characters of speech", f"{len(text)}")
        return ParsedActions((Say(text),))
    if kind == "tool_call":
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            return ActionError("expected 'name' to be the tool's name", _shown(name))
        call_id = raw.get("call_id")
        return ParsedActions(
            (
                ToolCallAction(
                    name, raw.get("arguments", {}), call_id if isinstance(call_id, str) else None
                ),
            )
        )
    if kind == "end_call":
        return ParsedActions((EndCall(),))
    return ActionError("expected 'type' to be one of say, tool_call, end_call", _shown(kind))
