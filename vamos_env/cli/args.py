"""What every ``vamos`` command shares: argument types that say expected versus actual, and
one-line errors.

A usage error is one line on stderr, ``vamos <command>: <argument>: expected ..., got ...``,
and exit status 2: argparse's own errors (an unknown option, a missing argument, a value
its type refuses) are rewritten to that shape by ``CommandLineParser``, and the commands'
own checks (a stack that cannot be imported, a task file the world does not know) go
through ``fail``. Types are checked when the arguments are parsed, before any work starts.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

USAGE_ERROR = 2
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

_INVALID_CHOICE = re.compile(r"invalid choice: (?P<got>.+?) \(choose from (?P<choices>.+)\)$")
_REQUIRED = "the following arguments are required: "
_UNKNOWN = "unrecognized arguments: "


def one_line(message: object) -> str:
    """A message on one line: a multi-line explanation (pydantic's) joined with '; '."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    return "; ".join(lines)


def fail(command: str, message: object) -> int:
    """Print a usage error as one line; return the exit status for it."""
    print(f"{command}: {one_line(message)}", file=sys.stderr)
    return USAGE_ERROR


class CommandLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line naming the argument."""

    def error(self, message: str) -> NoReturn:
        match = _INVALID_CHOICE.search(message)
        if match:
            head = message[: match.start()].rstrip()
            message = f"{head} expected one of {match['choices']}, got {match['got']}"
        if message.startswith(_REQUIRED):
            names = message[len(_REQUIRED) :]
            message = f"{names}: expected a value (required), got none"
        elif message.startswith(_UNKNOWN):
            extra = message[len(_UNKNOWN) :]
            message = f"{extra}: expected the options of {self.prog} (see --help), got unknown ones"
        elif message.startswith("argument "):
            message = message[len("argument ") :]
        self.exit(USAGE_ERROR, f"{self.prog}: {one_line(message)}\n")


def _typed(name: str, convert: Callable[[str], Any]) -> Callable[[str], Any]:
    convert.__name__ = name  # argparse names the type in some messages
    return convert


def integer(low: int, high: int) -> Callable[[str], int]:
    """An integer from ``low`` to ``high`` inclusive."""

    def convert(raw: str) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high:,}, got {raw!r}"
            )
        return value

    return _typed("integer", convert)


def seconds(high: float = 7 * 24 * 3600.0) -> Callable[[str], float]:
    """A finite number of seconds above 0 (``nan`` and ``inf`` are refused)."""

    def convert(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not 0 < value <= high:
            raise argparse.ArgumentTypeError(
                f"expected a number of seconds above 0 and at most {high:g}, got {raw!r}"
            )
        return value

    return _typed("seconds", convert)


def share(raw: str) -> float:
    """A share from 0 to 1."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:  # nan fails both comparisons
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {raw!r}")
    return value


def port(raw: str) -> int:
    """A TCP port (0: any free one)."""
    return integer(0, 65535)(raw)


def loopback_host(raw: str) -> str:
    """A loopback name or address: the twins are a test double, never served to a network."""
    host = raw.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host not in LOOPBACK_HOSTS:
        raise argparse.ArgumentTypeError(
            f"expected a loopback host ({', '.join(LOOPBACK_HOSTS)}), got {raw!r}"
        )
    return host


def level_db(raw: str) -> float:
    """A background level of the text channel's parameter file."""
    from vamos_env.channel.parameters import shipped_parameters

    levels = sorted(
        {float(level) for b in shipped_parameters().backgrounds.values() for level in b.levels},
        reverse=True,
    )
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if value not in levels:
        shown = ", ".join(f"{level:g}" for level in levels)
        raise argparse.ArgumentTypeError(
            f"expected a level of the channel's parameter file ({shown} dB), got {raw!r}"
        )
    return value


def text(name: str, max_length: int = 200) -> Callable[[str], str]:
    """A non-empty text of at most ``max_length`` characters."""

    def convert(raw: str) -> str:
        if not raw.strip() or len(raw) > max_length:
            raise argparse.ArgumentTypeError(
                f"expected a non-empty {name} of at most {max_length} characters, "
                f"got {len(raw)} characters"
            )
        return raw

    return _typed(name, convert)
