"""What every finder returns: a value with the exact characters it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from vamos_env.speech.numbers import Analysis
from vamos_env.speech.vocabulary import Unit

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Mention(Generic[T]):
    """A value found in text, with the characters it came from: ``text == source[start:end]``."""

    value: T
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Count:
    n: int
    unit: Unit


def mention(a: Analysis, value: T, first: int, last: int) -> Mention[T]:
    """The mention of ``value`` said by tokens ``first`` .. ``last - 1``."""
    start, end = a.span(first, last)
    return Mention(value, start, end, a.text[start:end])
