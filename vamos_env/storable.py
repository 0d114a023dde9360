"""Text and JSON made storable where they enter a call, so one bad reply never costs a run.

Everything a call records ends up in one JSON line of the results store, so whatever
enters a call (the agent's words and tool arguments, a model's reply, the caller's and
the channel's text) must survive ``json`` and UTF-8 encoding:

- ``storable_text`` replaces code points that UTF-8 cannot encode (lone surrogates, as a
  model that splits an emoji produces) with U+FFFD and says how many it replaced;
- ``storable_json`` checks an agent's tool arguments against ``ArgumentLimits`` (nesting
  depth, total size, JSON value types) and returns a clean copy, or a ``LimitExceeded``
  naming the limit, which the episode turns into the tool's error result.

Both are pure functions; the common case (clean text) costs one ``str.isascii`` or one
failed ``encode``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATES = re.compile("[\ud800-\udfff]")


def storable_text(text: str) -> tuple[str, int]:
    """``text`` with every code point UTF-8 cannot encode replaced; how many were replaced."""
    if text.isascii():
        return text, 0
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        replaced = len(_SURROGATES.findall(text))
        return _SURROGATES.sub(REPLACEMENT, text), replaced
    return text, 0


@dataclass(frozen=True, slots=True)
class ArgumentLimits:
    """What one tool call's arguments may be: far above any of the 16 tools' real needs."""

    max_depth: int = 16  # nesting levels of objects and arrays (the tools' are flat: 1)
    max_bytes: int = 32_768  # the arguments' size, counted as their JSON text
    max_items: int = 2_000  # values of all kinds, keys included


DEFAULT_LIMITS = ArgumentLimits()


@dataclass(frozen=True, slots=True)
class LimitExceeded:
    """Why arguments were refused, in words for the agent: the limit and what arrived."""

    message: str


class _Refused(Exception):
    def __init__(self, message: str) -> None:
        self.message = message


class _Walk:
    def __init__(self, limits: ArgumentLimits) -> None:
        self.limits = limits
        self.items = 0
        self.size = 0
        self.replaced = 0

    def text(self, value: str) -> str:
        clean, replaced = storable_text(value)
        self.replaced += replaced
        self.size += len(clean) + 2
        return clean

    def count(self) -> None:
        self.items += 1
        if self.items > self.limits.max_items:
            raise _Refused(
                f"tool arguments may hold at most {self.limits.max_items} values "
                f"(max_items); these hold more"
            )
        if self.size > self.limits.max_bytes:
            raise _Refused(
                f"tool arguments may be at most {self.limits.max_bytes} bytes of JSON "
                f"(max_bytes); these are larger"
            )

    def value(self, value: Any, depth: int) -> Any:
        self.count()
        if value is None or isinstance(value, bool):
            self.size += 5
            return value
        if isinstance(value, int):
            if abs(value) >= 10**18:
                raise _Refused(
                    "tool arguments may hold integers of at most 18 digits; got a longer one"
                )
            self.size += 20
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _Refused(f"tool arguments must be JSON numbers; got {value!r}")
            self.size += 24
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping | list | tuple):
            if depth >= self.limits.max_depth:
                raise _Refused(
                    f"tool arguments may nest at most {self.limits.max_depth} levels deep "
                    f"(max_depth); these nest deeper"
                )
            if isinstance(value, Mapping):
                out: dict[str, Any] = {}
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise _Refused(
                            f"tool argument names must be strings; got {type(key).__name__}"
                        )
                    out[self.text(key)] = self.value(item, depth + 1)
                return out
            return [self.value(item, depth + 1) for item in value]
        raise _Refused(
            "tool arguments must be JSON values (objects, arrays, strings, numbers, "
            f"true/false/null); got {type(value).__name__}"
        )


def storable_json(
    value: Any, limits: ArgumentLimits = DEFAULT_LIMITS
) -> tuple[Any, int] | LimitExceeded:
    """A clean copy of a JSON-like value and the code points replaced in it, or why not."""
    walk = _Walk(limits)
    try:
        return walk.value(value, 0), walk.replaced
    except _Refused as refused:
        return LimitExceeded(refused.message)
    except RecursionError:
        return LimitExceeded(
            f"tool arguments may nest at most {limits.max_depth} levels deep (max_depth)"
        )
    except Exception as exc:  # a mapping or sequence whose reading raises is no JSON value
        return LimitExceeded(
            "tool arguments must be JSON values that can be read; reading them raised "
            f"{type(exc).__name__}"
        )
