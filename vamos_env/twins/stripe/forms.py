"""Decoding Stripe's form encoding (bracket notation) into nested dicts and lists.

The SDK sends ``metadata[key]=v``, ``items[0][price]=p``, ``address[line1]=...`` and
(for GET) ``expand[0]=customer``; other clients send ``expand[]=customer``. This module
turns those pairs into plain nested values, all leaves strings. Index keys such as
``items[0]`` stay dict keys here: only the parameter schema knows whether ``x[0]`` is the
first element of a list or a metadata key named "0", so it converts them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from vamos_env.twins.stripe.errors import StripeError, invalid_request

_APPEND = ""  # the part a trailing "[]" produces


def decode_form(raw: str) -> dict[str, Any]:
    """``a[b][c]=1&d[]=x`` -> ``{"a": {"b": {"c": "1"}}, "d": ["x"]}``.

    A key whose brackets do not form clean ``[...]`` groups is kept whole as a plain name,
    so it reaches the schema (and its "unknown parameter" refusal) instead of failing here.
    """
    root: dict[str, Any] = {}
    if not raw:
        return root
    for key, value in parse_qsl(raw, keep_blank_values=True):
        _assign(root, _split_key(key), value)
    return root


def _split_key(key: str) -> list[str]:
    start = key.find("[")
    if start <= 0 or not key.endswith("]"):
        return [key]
    parts = [key[:start]]
    inner = key[start + 1 : -1]
    pieces = inner.split("][")
    for piece in pieces:
        if "[" in piece or "]" in piece:
            return [key]
        parts.append(piece)
    # "[]" is only an append marker in the last position; elsewhere it is malformed.
    if any(piece == _APPEND for piece in parts[1:-1]):
        return [key]
    return parts


def _assign(root: dict[str, Any], parts: list[str], value: str) -> None:
    node: Any = root
    last = len(parts) - 1
    for depth in range(last):
        part = parts[depth]
        wants_list = depth + 1 == last and parts[last] == _APPEND
        child = node.get(part)
        if child is None:
            child = [] if wants_list else {}
            node[part] = child
        elif not isinstance(child, list if wants_list else dict):
            raise _conflict(parts, depth)
        node = child
    if isinstance(node, list):
        node.append(value)
        return
    current = node.get(parts[last])
    if isinstance(current, (dict, list)):
        raise _conflict(parts, last)
    node[parts[last]] = value


def _conflict(parts: list[str], depth: int) -> StripeError:
    name = parts[0] + "".join(f"[{p}]" for p in parts[1 : depth + 1])
    return invalid_request(
        f"Invalid value for {name}: it was sent both as a plain value and with nested keys.",
        param=name,
    )
