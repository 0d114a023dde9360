"""What an agent may do in a call, and how loosely-shaped actions become one.

Three actions: ``say`` (words to the caller), ``tool_call`` (one of the domain's
tools with JSON arguments) and ``end_call``. ``parse_action`` accepts a dict, a
JSON string of one, or an OpenAI-style assistant message (``content`` and/or
``tool_calls``). Anything else is an ``ActionError`` that the environment turns
into an error observation: an agent's bad action never ends the call, and
``parse_action`` never raises, whatever shape arrives.

This is where the agent's text enters a call, so it is made storable here: code points
UTF-8 cannot encode (a model's half emoji) are replaced and counted in
``ParsedActions.replaced``; a tool name or call id is at most ``MAX_NAME`` characters.
The tool arguments are checked against their limits by the episode (``storable_json``),
because a refusal there is the tool's error result, not a malformed action.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from vamos_env.storable import storable_text

MAX_TEXT = 20_000  # characters of one utterance; longer speech is refused, not truncated
MAX_NAME = 200  # characters of a tool name or a call id
MAX_ACTION = 1_000_000  # characters of an action sent as JSON text


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
    replaced: int = 0  # code points replaced to make the agent's text storable


def shown(raw: Any, limit: int = 120) -> str:
    """A short, storable rendering of whatever arrived (for error observations)."""
    try:
        text = raw if isinstance(raw, str) else repr(raw)
    except Exception:  # a hostile __repr__, or nesting deeper than repr goes
        text = f"<{type(raw).__name__}>"
    if not isinstance(text, str):
        text = f"<{type(raw).__name__}>"
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return storable_text(text)[0]


class _Texts:
    """Cleans the agent's strings and counts what it replaced."""

    def __init__(self) -> None:
        self.replaced = 0

    def __call__(self, text: str) -> str:
        clean, replaced = storable_text(text)
        self.replaced += replaced
        return clean

    def name(self, value: Any) -> str | None:
        """A tool name or call id: a string of at most ``MAX_NAME`` characters, else None."""
        if not isinstance(value, str) or len(value) > MAX_NAME:
            return None
        return self(value)


def _content_text(content: list[Any]) -> str:
    # Content parts: the text ones, in order; a part with a null or non-string text
    # (some servers send {"type": "text", "text": null}) says nothing.
    return " ".join(
        p["text"]
        for p in content
        if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)
    )


def _from_openai_message(message: Mapping[str, Any], texts: _Texts) -> ParsedActions | ActionError:
    actions: list[Action] = []
    content = message.get("content")
    if isinstance(content, list):
        content = _content_text(content)
    if content is not None and not isinstance(content, str):
        return ActionError(
            "expected 'content' to be a string or a list of text parts", shown(content)
        )
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        return ActionError("expected 'tool_calls' to be a list", shown(tool_calls))
    for i, call in enumerate(tool_calls):
        function = call.get("function") if isinstance(call, Mapping) else None
        name = texts.name(function.get("name")) if isinstance(function, Mapping) else None
        if not isinstance(function, Mapping) or name is None:
            return ActionError(
                f"expected tool_calls[{i}] to be {{'id', 'type': 'function', 'function': "
                f"{{'name', 'arguments'}}}} with a name of at most {MAX_NAME} characters",
                shown(call),
            )
        actions.append(
            ToolCallAction(name, function.get("arguments", "{}"), texts.name(call.get("id")))
        )
    if content and content.strip():
        if len(content) > MAX_TEXT:
            return ActionError(
                f"expected at most {MAX_TEXT} characters of speech", f"{len(content)}"
            )
        # Speech first, then tools: the caller hears the words while the tools run.
        actions.insert(0, Say(texts(content)))
    if not actions:
        return ActionError(
            "the assistant message had neither content nor tool_calls", shown(message)
        )
    return ParsedActions(tuple(actions), texts.replaced)


def parse_action(raw: Any) -> ParsedActions | ActionError:
    """Turn whatever the agent sent into actions, or say exactly what was wrong; never raises."""
    try:
        return _parse(raw, _Texts())
    except Exception as exc:  # a hostile mapping (a get() that raises, ...): still an answer
        return ActionError(f"the action could not be read ({type(exc).__name__})", shown(raw))


def _parse(raw: Any, texts: _Texts) -> ParsedActions | ActionError:
    if isinstance(raw, Say):
        return ParsedActions((Say(texts(raw.text)),), texts.replaced)
    if isinstance(raw, (ToolCallAction, EndCall)):
        return ParsedActions((raw,))
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = raw.decode()
        except UnicodeDecodeError:
            return ActionError("expected UTF-8 text or a dict", shown(raw))
    if isinstance(raw, str):
        if len(raw) > MAX_ACTION:
            return ActionError(
                f"expected an action of at most {MAX_ACTION} characters of JSON", f"{len(raw)}"
            )
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):  # bad JSON, a 5,000-digit number, deep nesting
            return ActionError(
                'expected a JSON object such as {"type": "say", "text": "..."}', shown(raw)
            )
    if not isinstance(raw, Mapping):
        return ActionError("expected an action object (dict) or its JSON", shown(raw))
    if raw.get("role") == "assistant" or "tool_calls" in raw:
        return _from_openai_message(raw, texts)
    kind = raw.get("type")
    if kind == "say":
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            return ActionError(
                "expected 'text' to be a non-empty string for a say action", shown(text)
            )
        if len(text) > MAX_TEXT:
            return ActionError(f"expected at most {MAX_TEXT} characters of speech", f"{len(text)}")
        return ParsedActions((Say(texts(text)),), texts.replaced)
    if kind == "tool_call":
        name = texts.name(raw.get("name"))
        if not name:
            return ActionError(
                f"expected 'name' to be the tool's name (at most {MAX_NAME} characters)",
                shown(raw.get("name")),
            )
        return ParsedActions(
            (ToolCallAction(name, raw.get("arguments", {}), texts.name(raw.get("call_id"))),),
            texts.replaced,
        )
    if kind == "end_call":
        return ParsedActions((EndCall(),))
    return ActionError("expected 'type' to be one of say, tool_call, end_call", shown(kind))
