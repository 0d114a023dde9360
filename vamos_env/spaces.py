"""A text space for speech and JSON actions.

Gymnasium's ``Text`` space only admits a fixed character set, and ordinary speech
("$65.52 - isn't that right?") falls outside it. ``TextSpace`` admits any string
up to a length; ``sample()`` draws printable text from the space's generator, so
seeded sampling is reproducible.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium.spaces import Space

_PRINTABLE = np.array(list(string.printable[:-5]))  # without \t\n\r\x0b\x0c


class TextSpace(Space[str]):
    """Any ``str`` of at most ``max_length`` characters."""

    def __init__(self, max_length: int = 100_000, seed: int | np.random.Generator | None = None):
        if max_length < 1:
            raise ValueError(f"expected max_length >= 1, got {max_length}")
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        length = int(self.np_random.integers(0, min(self.max_length, 64) + 1))
        return "".join(self.np_random.choice(_PRINTABLE, size=length))

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"TextSpace(max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextSpace) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return hash(("TextSpace", self.max_length))

    def to_jsonable(self, sample_n: Any) -> list[str]:
        return list(sample_n)

    def from_jsonable(self, sample_n: list[str]) -> list[str]:
        return list(sample_n)
