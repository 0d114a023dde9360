"""Immutable stored records: the reason cloning a billing snapshot costs almost nothing.

Every object the state stores is frozen: dicts become ``FrozenDict`` and lists become
tuples, all the way down. A write never edits a record; it builds a new one and replaces
the dict entry. So a clone copies only the top-level id -> record dicts, and no caller
(route, grader, test) can change a record that other clones share. ``FrozenDict`` is a real
``dict`` subclass, so ``json.dumps`` and ``dict(...)`` accept it unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn


class FrozenDict(dict[str, Any]):
    """A dict that refuses every mutation (copy it with ``dict(record)`` to edit)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("stored Stripe records are immutable; copy with dict(record) first")

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        # pickle/copy would otherwise rebuild through __setitem__ (Ray ships snapshots).
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


def freeze(value: Any) -> Any:
    """A deeply immutable copy: dicts -> FrozenDict, lists -> tuples (frozen parts reused)."""
    if type(value) is FrozenDict:
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy (dicts and lists) of a frozen record."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value
