"""Stripe's search query language, enough of it for ``/v1/<resource>/search``.

A query is clauses joined by spaces, ``AND`` or ``OR`` (one kind per query, as Stripe
requires), at most ten. A clause is ``[-]field op value``:

- ``field`` is a plain name (``email``, ``status``, ``total``) or ``metadata['key']``
  (either quote style); each resource declares which fields it searches;
- ``op`` is ``:`` (exact match), ``~`` (substring, at least three characters), or a
  numeric comparison ``>``, ``<``, ``>=``, ``<=`` for number fields;
- ``value`` is a quoted string (``'x'`` or ``"x"``), a bare number, or ``null``
  (``metadata['k']:null`` matches when the key is absent).

Exact match on plain string fields ignores case, as Stripe documents; metadata values
match exactly (the account number lookup relies on that).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from vamos_env.twins.stripe.errors import StripeError, invalid_request

MAX_CLAUSES = 10

# Field kinds: "string" (case-insensitive exact, substring), "token" (exact, case-sensitive,
# e.g. ids and statuses), "number" (comparisons).
SEARCH_FIELDS: dict[str, dict[str, str]] = {
    "customer": {"email": "string", "name": "string", "phone": "string", "created": "number"},
    "invoice": {
        "customer": "token",
        "status": "token",
        "number": "token",
        "total": "number",
        "created": "number",
        "currency": "token",
    },
    "subscription": {"status": "token", "created": "number"},
    "charge": {
        "customer": "token",
        "status": "token",
        "amount": "number",
        "created": "number",
        "payment_method_details.card.last4": "token",
    },
}


def _bad(detail: str) -> StripeError:
    return invalid_request(f"Invalid query: {detail}", param="query")


@dataclass(frozen=True, slots=True)
class Clause:
    field: str  # plain field name, or the key when ``metadata`` is set
    metadata: bool
    op: str
    value: str | int | None
    negated: bool

    def matches(self, record: Mapping[str, Any], kind: str) -> bool:
        hit = self._test(record, kind)
        return not hit if self.negated else hit

    def _test(self, record: Mapping[str, Any], kind: str) -> bool:
        if self.metadata:
            actual = (record.get("metadata") or {}).get(self.field)
        else:
            actual = _dig(record, self.field)
        if self.value is None:
            return actual is None or actual == ""
        if actual is None:
            return False
        if kind == "number":
            if not isinstance(actual, int) or not isinstance(self.value, int):
                return False
            return _COMPARE[self.op](actual, self.value)
        text = str(actual)
        wanted = str(self.value)
        if self.op == "~":
            return wanted.lower() in text.lower()
        if kind == "string":
            return text.lower() == wanted.lower()
        return text == wanted


_COMPARE: dict[str, Callable[[int, int], bool]] = {
    ":": lambda a, b: a == b,
    "=": lambda a, b: a == b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}


def _dig(record: Mapping[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


@dataclass(frozen=True, slots=True)
class Query:
    clauses: tuple[Clause, ...]
    any_of: bool  # True when joined with OR
    resource: str

    def matches(self, record: Mapping[str, Any]) -> bool:
        fields = SEARCH_FIELDS[self.resource]
        results = (
            c.matches(record, "token" if c.metadata else fields[c.field]) for c in self.clauses
        )
        return any(results) if self.any_of else all(results)


def parse_query(text: str, resource: str) -> Query:
    """Parse ``text`` for ``resource`` ("customer", "invoice", ...) or raise a Stripe 400."""
    fields = SEARCH_FIELDS[resource]
    scanner = _Scanner(text)
    clauses: list[Clause] = []
    joiners: set[str] = set()
    scanner.skip_space()
    if scanner.done():
        raise _bad("the query is empty.")
    while True:
        clauses.append(_clause(scanner, fields))
        had_space = scanner.skip_space()
        if scanner.done():
            break
        word = scanner.peek_word()
        if word.upper() in ("AND", "OR"):
            scanner.advance(len(word))
            if not scanner.skip_space():
                raise _bad(f"expected a space after {word}.")
            joiners.add(word.upper())
        elif not had_space:
            raise _bad(f"unexpected character {scanner.peek()!r} at position {scanner.pos}.")
        else:
            joiners.add("AND")
    if len(joiners) > 1:
        raise _bad("AND and OR cannot be combined in the same query.")
    if len(clauses) > MAX_CLAUSES:
        raise _bad(f"a query can have at most {MAX_CLAUSES} clauses.")
    return Query(tuple(clauses), joiners == {"OR"}, resource)


def _clause(scanner: _Scanner, fields: Mapping[str, str]) -> Clause:
    negated = scanner.take("-")
    name = scanner.name()
    if not name:
        raise _bad(f"expected a field name at position {scanner.pos}.")
    metadata = False
    if name == "metadata":
        if not scanner.take("["):
            raise _bad("metadata fields are written metadata['key'].")
        key = scanner.quoted()
        if key is None or not scanner.take("]"):
            raise _bad("metadata fields are written metadata['key'].")
        name, metadata = key, True
    elif name not in fields:
        allowed = ", ".join(sorted([*fields, "metadata"]))
        raise _bad(f"the field {name!r} is not searchable here (searchable: {allowed}).")
    op = scanner.operator()
    if op is None:
        raise _bad(f"expected an operator (:, ~, >, <, >=, <=) after {name!r}.")
    kind = "token" if metadata else fields[name]
    value: str | int | None
    quoted = scanner.quoted()
    if quoted is not None:
        value = quoted
    else:
        bare = scanner.bare()
        if bare == "null" and op == ":":
            value = None
        elif bare.lstrip("-").isdigit() and bare.isascii():
            value = int(bare)
        else:
            raise _bad(f"the value for {name!r} must be quoted.")
    if op == "~":
        if kind != "string" or not isinstance(value, str):
            raise _bad(f"substring search (~) is not supported for {name!r}.")
        if len(value) < 3:
            raise _bad("substring search (~) needs at least 3 characters.")
    elif op != ":":
        if kind != "number" or not isinstance(value, int):
            raise _bad(f"the comparison {op} needs a number field and a number value.")
    elif kind == "number" and isinstance(value, str):
        if not (value.lstrip("-").isdigit() and value.isascii()):
            raise _bad(f"{name!r} takes a number.")
        value = int(value)
    return Clause(name, metadata, op, value, negated)


class _Scanner:
    __slots__ = ("pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def done(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def advance(self, n: int) -> None:
        self.pos += n

    def skip_space(self) -> bool:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.pos > start

    def take(self, literal: str) -> bool:
        if self.text.startswith(literal, self.pos):
            self.pos += len(literal)
            return True
        return False

    def peek_word(self) -> str:
        end = self.pos
        while end < len(self.text) and self.text[end].isalpha():
            end += 1
        return self.text[self.pos : end]

    def name(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and (
            self.text[self.pos].isalnum() or self.text[self.pos] in "_."
        ):
            self.pos += 1
        return self.text[start : self.pos]

    def operator(self) -> str | None:
        for op in (">=", "<=", ":", "~", ">", "<", "="):
            if self.take(op):
                return op
        return None

    def quoted(self) -> str | None:
        quote = self.peek()
        if quote not in ("'", '"'):
            return None
        chars: list[str] = []
        pos = self.pos + 1
        while pos < len(self.text):
            char = self.text[pos]
            if char == "\\" and pos + 1 < len(self.text):
                chars.append(self.text[pos + 1])
                pos += 2
                continue
            if char == quote:
                self.pos = pos + 1
                return "".join(chars)
            chars.append(char)
            pos += 1
        raise _bad("a quoted value is not closed.")

    def bare(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and not self.text[self.pos].isspace():
            self.pos += 1
        return self.text[start : self.pos]
