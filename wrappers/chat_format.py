"""``ChatFormat``: the call as OpenAI chat messages in and out, for LLM trainers.

Observations are the whole conversation so far as a list of OpenAI chat messages,
ready to send to a chat-completions endpoint with ``info["tools"]``:

- ``{"role": "system", "content": <system prompt>}`` first;
- the caller's words as ``{"role": "user", "content": ...}``;
- each agent action as the ``{"role": "assistant", ...}`` message it was, with every
  tool call carrying an ``id`` (the environment's call id when the agent gave none);
- each tool result as ``{"role": "tool", "tool_call_id": ..., "content": <JSON>}``,
  right after the assistant message that called it (the pairing OpenAI requires);
- an action the environment could not understand is not added (it is not a valid
  message); a ``{"role": "system", "content": "Action not understood: ..."}`` message
  tells the model what was wrong.

Actions are assistant messages: a dict, or an SDK object with ``model_dump`` (such as
``ChatCompletionMessage``); a plain string is shorthand for an assistant message with
that content. ``{"type": "end_call"}`` ends the call. With ``end_call_tool=True`` the
wrapper also offers an ``end_call`` function in ``info["tools"]`` (the 16 domain tools
stay identical); calling it ends the call after the message's other content and tools.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.spaces import Space

from vamos_env.wrappers.outcome import split_step, step_with_end

Message = dict[str, Any]

END_CALL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "end_call",
        "description": (
            "End the phone call. Say your closing words first (in the same message's "
            "content); nothing can be said or done after this."
        ),
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}


def chat_problems(messages: Any) -> list[str]:
    """Why ``messages`` is not a valid OpenAI chat conversation (empty when it is).

    Checks each message's shape for its role, and that every ``tool`` message answers a
    tool call of the assistant message before it, and every tool call is answered
    before the next non-tool message.
    """
    if not isinstance(messages, list):
        return [f"expected a list of messages, got {type(messages).__name__}"]
    problems: list[str] = []
    open_ids: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            problems.append(f"{where}: expected a dict, got {type(message).__name__}")
            continue
        role = message.get("role")
        if role != "tool" and open_ids:
            problems.append(f"{where}: tool calls {open_ids} were not answered before it")
            open_ids = []
        if role in ("system", "user"):
            if not isinstance(message.get("content"), str):
                problems.append(f"{where}: expected string content for a {role} message")
        elif role == "assistant":
            problems += _assistant_problems(where, message)
            calls = message.get("tool_calls")
            open_ids = [
                c["id"]
                for c in (calls if isinstance(calls, list) else [])
                if isinstance(c, Mapping) and isinstance(c.get("id"), str)
            ]
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                problems.append(f"{where}: tool_call_id {call_id!r} answers no open tool call")
            else:
                open_ids.remove(call_id)
            if not isinstance(message.get("content"), str):
                problems.append(f"{where}: expected string content for a tool message")
        else:
            problems.append(f"{where}: unknown role {role!r}")
    return problems


def _assistant_problems(where: str, message: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    content = message.get("content")
    calls = message.get("tool_calls")
    if content is not None and not isinstance(content, str):
        problems.append(f"{where}: expected string or null content")
    if calls is not None and not isinstance(calls, list):
        problems.append(f"{where}: expected tool_calls to be a list")
        calls = None
    if not content and not calls:
        problems.append(f"{where}: an assistant message needs content or tool_calls")
    for j, call in enumerate(calls or []):
        function = call.get("function") if isinstance(call, Mapping) else None
        if (
            not isinstance(call, Mapping)
            or not isinstance(call.get("id"), str)
            or call.get("type") != "function"
            or not isinstance(function, Mapping)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("arguments"), str)
        ):
            problems.append(
                f"{where}.tool_calls[{j}]: expected {{'id': str, 'type': 'function', "
                "'function': {'name': str, 'arguments': str}}"
            )
    return problems


class ChatMessagesSpace(Space[list[Message]]):
    """Valid OpenAI chat conversations (see ``chat_problems``)."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> list[Message]:
        words = "".join(self.np_random.choice(list("abcdefgh "), size=12))
        return [{"role": "system", "content": "sample"}, {"role": "user", "content": words}]

    def contains(self, x: Any) -> bool:
        return not chat_problems(x)

    def __repr__(self) -> str:
        return "ChatMessagesSpace()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatMessagesSpace)

    def __hash__(self) -> int:
        return hash("ChatMessagesSpace")


class ChatFormat(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """OpenAI chat messages in and out (see the module docstring for the contract)."""

    def __init__(self, env: gym.Env[str, Any], *, end_call_tool: bool = False) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, end_call_tool=end_call_tool)
        gym.Wrapper.__init__(self, env)
        self.end_call_tool = end_call_tool
        self.observation_space = ChatMessagesSpace()
        self._messages: list[Message] = []

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (a deep copy: callers may append to it freely)."""
        return copy.deepcopy(self._messages)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[Message], dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        if self.end_call_tool:
            info = {**info, "tools": [*info.get("tools", []), END_CALL_TOOL]}
        self._messages = [{"role": "system", "content": str(info.get("system_prompt", ""))}]
        self._add_caller(observation)
        return self.messages, info

    def step(self, action: Any) -> tuple[list[Message], SupportsFloat, bool, bool, dict[str, Any]]:
        message = _as_message(action)
        if message is None:  # {"type": "end_call"} or anything else the environment judges
            observation, reward, terminated, truncated, info = self.env.step(action)
            self._record(None, observation, info)
            return self.messages, reward, terminated, truncated, info
        ends: list[Message] = []
        if self.end_call_tool:
            for n, call in enumerate(c for c in _calls(message) if _call_name(c) == "end_call"):
                call_id = call.get("id") if isinstance(call.get("id"), str) else None
                ends.append({"id": call_id or f"end_call_{n + 1}", "original": call})
        if ends:
            rest = [c for c in _calls(message) if _call_name(c) != "end_call"]
            inner: Message | None = {**message, "tool_calls": rest} if rest else None
            if inner is None and message.get("content"):
                inner = {"role": "assistant", "content": message["content"]}
            observation, reward, terminated, truncated, info = step_with_end(self.env, inner)
        else:
            observation, reward, terminated, truncated, info = self.env.step(message)
        self._record(message, observation, info, ended_by=ends)
        return self.messages, reward, terminated, truncated, info

    # -- building the conversation ---------------------------------------------------------
    def _add_caller(self, words: Any) -> None:
        if isinstance(words, str) and words:
            self._messages.append({"role": "user", "content": words})

    def _record(
        self,
        message: Message | None,
        observation: Any,
        info: Mapping[str, Any],
        ended_by: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        parts = split_step(str(observation), info)
        if parts.error is not None:
            self._messages.append(
                {"role": "system", "content": f"Action not understood: {parts.error}"}
            )
            return
        if message is not None:
            kept = _normalised(message, parts.tool_results, ended_by)
            self._messages.append(kept)
            for result in parts.tool_results:
                self._messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(result["tool_call_id"]),
                        "content": json.dumps(result["result"], ensure_ascii=False),
                    }
                )
            for call in ended_by:
                self._messages.append(
                    {"role": "tool", "tool_call_id": str(call["id"]), "content": '{"ended": true}'}
                )
        self._add_caller(parts.caller)


def _as_message(action: Any) -> Message | None:
    if isinstance(action, str):
        return {"role": "assistant", "content": action}
    dump = getattr(action, "model_dump", None)
    if callable(dump):
        action = dump(exclude_none=True)
    if isinstance(action, Mapping) and (
        action.get("role") == "assistant" or "tool_calls" in action
    ):
        return dict(action)
    return None


def _calls(message: Mapping[str, Any]) -> list[Any]:
    calls = message.get("tool_calls")
    return list(calls) if isinstance(calls, list) else []


def _call_name(call: Any) -> str | None:
    function = call.get("function") if isinstance(call, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else None


def _normalised(
    message: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    ended_by: Sequence[Mapping[str, Any]],
) -> Message:
    """The assistant message as history keeps it: only chat fields, every call with an id.

    Results come back in call order, so the n-th tool call gets the n-th result's id
    (the agent's own id when it gave one, else the environment's). Calls that never ran
    (the caller hung up on the words said before them) are left out, so every call in
    the history has its answer.
    """
    content = message.get("content")
    if isinstance(content, list):  # content parts: the text ones, as the environment reads them
        content = " ".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        )
    calls: list[Message] = []
    ending = [e["original"] for e in ended_by]
    domain_calls = [c for c in _calls(message) if not any(c is e for e in ending)]
    for call, result in zip(domain_calls, results, strict=False):
        function = call.get("function", {})
        arguments = function.get("arguments", "{}")
        calls.append(
            {
                "id": str(result["tool_call_id"]),
                "type": "function",
                "function": {
                    "name": str(function.get("name")),
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    for end in ended_by:
        calls.append(
            {
                "id": str(end["id"]),
                "type": "function",
                "function": {"name": "end_call", "arguments": "{}"},
            }
        )
    out: Message = {"role": "assistant", "content": content if content else None}
    if calls:
        out["tool_calls"] = calls
    return out
