"""Deterministic, Stripe-shaped object ids (``cus_`` + 14 base62 characters, ...).

An id is a pure function of its prefix and a per-prefix counter held in the state, so two
clones that make the same writes mint the same ids, and no randomness or clock is read.
The counter is scrambled by an invertible affine map modulo 62**length, so consecutive ids
do not look sequential yet can never collide.
"""

from __future__ import annotations

import hashlib
from functools import cache

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# Length of the random part after the prefix, per Stripe's own shapes.
ID_LENGTHS: dict[str, int] = {
    "cus": 14,
    "prod": 14,
    "req": 14,
    "in": 24,
    "il": 24,
    "ii": 24,
    "pm": 24,
    "ch": 24,
    "pi": 24,
    "sub": 24,
    "si": 14,
    "price": 24,
    "clock": 24,
    "txn": 24,
}


@cache
def _offset(prefix: str) -> int:
    return int.from_bytes(hashlib.sha256(prefix.encode()).digest(), "big")


def _multiplier(length: int) -> int:
    """A unit modulo 62**length near the golden ratio of it: consecutive ids land far apart."""
    modulus = 62**length
    candidate = int(modulus * 0.6180339887498949) | 1
    while candidate % 31 == 0:
        candidate += 2
    return candidate


_MULTIPLIERS = {length: _multiplier(length) for length in set(ID_LENGTHS.values())}


def base62(number: int, length: int) -> str:
    chars = []
    for _ in range(length):
        number, digit = divmod(number, 62)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def make_id(prefix: str, counter: int) -> str:
    """The ``counter``-th id for ``prefix`` (counter starts at 1)."""
    length = ID_LENGTHS.get(prefix, 24)
    multiplier = _MULTIPLIERS.get(length) or _multiplier(length)
    scrambled = (counter * multiplier + _offset(prefix)) % 62**length
    return f"{prefix}_{base62(scrambled, length)}"
