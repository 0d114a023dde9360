"""``TranscriptRig``: the call as plain text in and plain text out, with no speech in the path.

This is the cheap iteration loop of the red-teaming rig (DOMAIN.md section 10): the
agent keeps its prompt, tools and model, but the channel is the clean room (the
identity: the caller hears every word and the agent receives every word), and both
sides of the step are text a person or a text-only model can read and write.

The action contract (one string; lines are read top to bottom):

- a line starting with ``/tool NAME`` calls the tool ``NAME``; the rest of the line is
  its JSON arguments (``{}`` when absent). Arguments that are not a JSON object are
  passed on as written, and the tool answers with an error saying why;
- a line that is exactly ``/end`` ends the call, after everything else in the action;
- every other non-blank line is speech; all speech lines are said together, first,
  joined by spaces (the caller hears the words while the tools run);
- any other line starting with ``/`` is an unknown command, and a blank action is
  empty: both are answered with an ``/error`` line, count as malformed actions, and
  do nothing else.

The observation contract (one string):

- first the caller's words as the agent received them (absent when the caller said
  nothing this step, e.g. after a tool call);
- then one line ``/result NAME {json}`` per tool result, in call order;
- or a single line ``/error WHY`` when the action was not understood.

Anything that is not a string passes to the environment unchanged (a dict action
still works); its observation is presented in the same text form. ``info`` is the
environment's, untouched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, SupportsFloat

import gymnasium as gym

from vamos_env.wrappers.outcome import StepParts, split_step, step_with_end

TOOL = "/tool"
END = "/end"
RESULT = "/result"
ERROR = "/error"


@dataclass(frozen=True, slots=True)
class TextAction:
    """One text action, parsed: speech, tool calls in order, and whether the call ends."""

    speech: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any] | str], ...] = ()
    end: bool = False

    def to_env_action(self) -> dict[str, Any] | None:
        """The base environment's action for the speech and tools (``None`` when neither)."""
        if not self.tool_calls:
            return {"type": "say", "text": self.speech} if self.speech else None
        if not self.speech and len(self.tool_calls) == 1:
            name, arguments = self.tool_calls[0]
            return {"type": "tool_call", "name": name, "arguments": arguments}
        # Speech and several tools at once: the assistant-message form says first, then calls.
        # No ids: the session numbers the calls (call_1, call_2, ...) uniquely across the call.
        return {
            "role": "assistant",
            "content": self.speech or None,
            "tool_calls": [
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for name, args in self.tool_calls
            ],
        }


@dataclass(frozen=True, slots=True)
class TextActionError:
    message: str


def parse_text_action(text: str) -> TextAction | TextActionError:
    """Read one action written in the rig's text contract (see the module docstring)."""
    speech: list[str] = []
    tools: list[tuple[str, dict[str, Any] | str]] = []
    end = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("/"):
            speech.append(line)
            continue
        command, _, rest = line.partition(" ")
        if command == END and not rest.strip():
            end = True
        elif command == TOOL:
            name, _, arguments = rest.strip().partition(" ")
            if not name:
                return TextActionError(f"expected '{TOOL} NAME {{json}}', got {line!r}")
            tools.append((name, _arguments(arguments.strip())))
        else:
            return TextActionError(
                f"unknown command {command!r}: expected '{TOOL} NAME {{json}}' or '{END}' "
                "(lines without a leading '/' are speech)"
            )
    if not speech and not tools and not end:
        return TextActionError("the action was empty: type words to say, a /tool line, or /end")
    return TextAction(" ".join(speech), tuple(tools), end)


def _arguments(text: str) -> dict[str, Any] | str:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text  # the tool session explains what is wrong with it
    return value if isinstance(value, dict) else text


def format_observation(parts: StepParts) -> str:
    """A step's parts as the rig's observation text."""
    if parts.error is not None:
        return f"{ERROR} {parts.error}"
    lines = [parts.caller] if parts.caller else []
    lines += [
        f"{RESULT} {r['name']} {json.dumps(r['result'], ensure_ascii=False)}"
        for r in parts.tool_results
    ]
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class TextObservation:
    """A rig observation read back: the caller's words, ``(tool, result)`` pairs, an error."""

    caller: str | None
    results: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None


def read_observation(text: str) -> TextObservation:
    """The inverse of ``format_observation`` (tool call ids are not part of the text)."""
    if text.startswith(ERROR + " "):
        return TextObservation(None, error=text[len(ERROR) + 1 :])
    words: list[str] = []
    results: list[tuple[str, dict[str, Any]]] = []
    for line in text.split("\n"):
        if line.startswith(RESULT + " "):
            name, _, payload = line[len(RESULT) + 1 :].partition(" ")
            results.append((name, json.loads(payload)))
        else:
            words.append(line)
    caller = "\n".join(words)
    return TextObservation(caller or None, results)


class TranscriptRig(gym.Wrapper[str, Any, str, Any], gym.utils.RecordConstructorArgs):
    """Text in, text out, clean channel: the cheap loop for iterating on an agent."""

    def __init__(self, env: gym.Env[str, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        chosen = dict(options or {})
        background = chosen.get("background")
        if background not in (None, "clean"):
            raise ValueError(
                "TranscriptRig runs in the clean channel (no speech in the path); "
                f"expected options.background to be absent or 'clean', got {background!r}"
            )
        chosen["background"] = "clean"
        # Text in, text out: no recogniser either (the clean room otherwise has one).
        chosen.setdefault("recogniser", "ideal")
        return self.env.reset(seed=seed, options=chosen)

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        if not isinstance(action, str):
            observation, reward, terminated, truncated, info = self.env.step(action)
            return _text(observation, info), reward, terminated, truncated, info
        parsed = parse_text_action(action)
        if isinstance(parsed, TextActionError):
            # The text starts with "/" or is blank, so it is never a JSON action: the
            # environment counts it as malformed (and towards the turn limit).
            _, reward, terminated, truncated, info = self.env.step(action)
            info = {**info, "action_error": parsed.message}
            text = format_observation(StepParts(None, error=parsed.message))
            return text, reward, terminated, truncated, info
        env_action = parsed.to_env_action()
        if parsed.end:
            observation, reward, terminated, truncated, info = step_with_end(self.env, env_action)
        else:
            observation, reward, terminated, truncated, info = self.env.step(env_action)
        return _text(observation, info), reward, terminated, truncated, info


def _text(observation: Any, info: Mapping[str, Any]) -> str:
    return format_observation(split_step(str(observation), info))
