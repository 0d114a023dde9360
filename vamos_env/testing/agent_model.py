"""A text agent of the registry played as a chat model, for ``FakeOpenAIServer``.

``AgentModel("reference")`` is a script for ``FakeOpenAIServer``: each chat-completions
request is answered with what the agent would do next in that conversation. So a
framework that drives an OpenAI-compatible model by itself (Pipecat's
``OpenAILLMService``: its own context, its own tool handlers) can run with the reference
solver's decisions where a hosted model would sit, offline, and a whole call then tests
the framework's part rather than a small local model's.

The model is stateless, as a chat model is: every request rebuilds the agent from the
messages it carries.

- The ``system`` (or ``developer``) message is the agent's ``system_prompt``, the
  request's ``tools`` its tools.
- Each ``user`` message is one observation: what the framework's ears heard of one caller
  turn. A run of ``tool`` messages is one observation, the tools' results, as a text call
  gives them (``duplex.engine.tool_observation``).
- ``assistant`` messages are what the agent did. Before the first ``user`` message (a
  greeting the framework spoke by itself) they are not the agent's; the agent's first
  reply leaves out the sentences that greeting already said (the reference opens with
  "Thank you for calling Acme Energy, this is Rory.", as the framework's greeting does),
  as a model that sees its greeting in the context does not say it twice. Where the
  framework kept fewer words of a reply than the agent said (it was cut off when the
  caller talked over it), or none, the next observation carries ``agent_cut``, as the
  cascade tells the agent (``duplex/cascade.py``).
- The agent's answer to the last observation is the reply: its words as ``content``, a
  tool call as one of ``tool_calls``, ``end_call`` as an empty turn (the framework, not
  the model, ends a call).

Determinism makes the replay exact: the agents of the registry that run offline decide
only from their inputs. A conversation the agent would not have held (a tool result where
it said words, or the reverse) is replayed all the same; the agent answers what it is
given, as a model does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vamos_env.actions import EndCall, Say, ToolCallAction, parse_action
from vamos_env.duplex.engine import tool_observation
from vamos_env.testing.server import Call, Failure, RecordedRequest, Reply, Scripted


def message_text(content: Any) -> str:
    """A message's words: its string, or the text parts of a content array."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


@dataclass
class _Observation:
    """One thing the agent was given, and what the framework kept of its answer."""

    text: str
    said: list[str] = field(default_factory=list)  # assistant words that followed it
    called: bool = False  # an assistant tool call followed it


def observations(messages: Sequence[Any]) -> tuple[str, list[_Observation]]:
    """The conversation's system prompt and its observations, in order."""
    prompt = ""
    names: dict[str, str] = {}  # tool_call_id -> tool name
    out: list[_Observation] = []
    results: list[dict[str, Any]] = []

    def close_results() -> None:
        if results:
            out.append(_Observation(tool_observation(list(results))))
            results.clear()

    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            prompt = prompt or message_text(message.get("content"))
        elif role == "user":
            close_results()
            out.append(_Observation(message_text(message.get("content"))))
        elif role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            text = message_text(message.get("content"))
            try:
                result: Any = json.loads(text)
            except ValueError:
                result = {"error": text}
            results.append({"call_id": call_id, "name": names.get(call_id, ""), "result": result})
        elif role == "assistant":
            close_results()
            for call in message.get("tool_calls") or []:
                if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
                    names[str(call.get("id", ""))] = str(call["function"].get("name", ""))
            if not out:  # the framework's own greeting, before the caller said anything
                continue
            words = message_text(message.get("content")).strip()
            if words:
                out[-1].said.append(words)
            out[-1].called = out[-1].called or bool(message.get("tool_calls"))
    close_results()
    return prompt, out


def greeting(messages: Sequence[Any]) -> str:
    """What the framework said before the caller's first message."""
    said: list[str] = []
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") == "user":
            break
        if message.get("role") == "assistant":
            said.append(message_text(message.get("content")).strip())
    return " ".join(w for w in said if w)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _plain(sentence: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]", " ", sentence.lower()).split())


def _not_greeted(text: str, greeted: str) -> str:
    """``text`` without the sentences ``greeted`` already said."""
    known = {_plain(s) for s in _sentences(greeted)}
    return " ".join(s for s in _sentences(text) if _plain(s) not in known)


class AgentModel:
    """A ``FakeOpenAIServer`` script: the registry's ``inner`` agent (or one that ``inner``
    builds) answers each request."""

    def __init__(self, inner: str | Callable[[], Any] = "reference") -> None:
        from vamos_env.agents.base import make_agent

        if isinstance(inner, str):
            make_agent(inner)  # an unknown name fails here, not at the first request
            self.inner = inner
            self._make: Callable[[], Any] = lambda: make_agent(inner)
        else:
            self.inner = getattr(inner, "__name__", "agent")
            self._make = inner

    def __call__(self, request: RecordedRequest) -> Scripted:
        body = request.body if isinstance(request.body, Mapping) else {}
        messages = body.get("messages") or []
        prompt, seen = observations(messages)
        greeted = greeting(messages)
        if not seen:
            return Failure(400, "agent model: the conversation has no user or tool message yet")
        agent = self._make()
        base = {
            "system_prompt": prompt,
            "tools": list(body.get("tools") or []),
            "channel": "duplex",
        }
        agent.reset(base)
        cut: str | None = None
        for number, observation in enumerate(seen):
            info = dict(base) if cut is None else {**base, "agent_cut": cut}
            parsed = parse_action(agent.act(observation.text, info))
            actions = getattr(parsed, "actions", ())
            if number == 0 and greeted:
                actions = [
                    Say(_not_greeted(a.text, greeted)) if isinstance(a, Say) else a for a in actions
                ]
                actions = [a for a in actions if not isinstance(a, Say) or a.text]
            if number == len(seen) - 1:
                return _reply(actions)
            said = " ".join(a.text for a in actions if isinstance(a, Say)).split()
            kept = " ".join(observation.said).split()
            # Cut off: the framework kept fewer of the words than the agent said.
            cut = " ".join(kept) if said and len(kept) < len(said) else None
        raise AssertionError("unreachable: the last observation returns")


def _reply(actions: Sequence[Any]) -> Reply:
    words = " ".join(a.text for a in actions if isinstance(a, Say)) or None
    calls = tuple(
        Call(a.name, a.arguments if isinstance(a.arguments, str) else dict(a.arguments))
        for a in actions
        if isinstance(a, ToolCallAction)
    )
    if not calls and any(isinstance(a, EndCall) for a in actions):
        return Reply(words, finish_reason="stop")
    return Reply(words, calls)


__all__ = ["AgentModel", "greeting", "message_text", "observations"]
