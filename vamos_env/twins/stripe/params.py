"""Parameter schemas: decoded form values in, typed Python values (or a Stripe 400) out.

Each endpoint declares a ``Spec`` of named ``Kind``s once, at import time; parsing a
request walks the decoded form against it. Refusals use Stripe's wording and name the
offending parameter in bracket notation (``address[line1]``, ``items[0][price]``).

Conventions the state relies on:

- a parameter that was not sent is absent from the parsed dict;
- an empty string sent to a parameter that may be unset parses to ``None``;
- metadata parses to ``{key: value-or-None}`` (``None`` removes that key on update), or
  to ``CLEAR`` when the whole parameter was sent as an empty string.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from vamos_env.twins.stripe.errors import (
    empty_string,
    invalid_boolean,
    invalid_choice,
    invalid_integer,
    invalid_request,
    missing_param,
    unknown_param,
)


class _Clear:
    """Marker: ``metadata=""`` was sent, which clears every key."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "CLEAR"


CLEAR: Final = _Clear()

_INT64_DIGITS = 19


class Kind(Protocol):
    def parse(self, value: Any, param: str) -> Any: ...


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a hash"
    if isinstance(value, list):
        return "an array"
    return repr(value)


@dataclass(frozen=True, slots=True)
class Text:
    emptyable: bool = False
    max_length: int = 5000

    def parse(self, value: Any, param: str) -> str | None:
        if not isinstance(value, str):
            raise invalid_request(f"Invalid string: {_describe(value)}", param=param)
        if value == "":
            if self.emptyable:
                return None
            raise empty_string(param)
        if len(value) > self.max_length:
            raise invalid_request(
                f"Invalid string: {value[:20]}...; must be at most {self.max_length} characters",
                param=param,
            )
        return value


@dataclass(frozen=True, slots=True)
class Email:
    """A string that must look like an address (Stripe checks the shape, not the mailbox)."""

    emptyable: bool = True

    def parse(self, value: Any, param: str) -> str | None:
        text = Text(self.emptyable, 512).parse(value, param)
        if text is None:
            return None
        local, at, domain = text.partition("@")
        if not at or not local or "." not in domain or " " in text:
            raise invalid_request(
                f"Invalid email address: {text}", param=param, code="email_invalid"
            )
        return text


@dataclass(frozen=True, slots=True)
class Prefix:
    """An invoice prefix: 3-12 upper-case letters or digits."""

    def parse(self, value: Any, param: str) -> str:
        text = Text().parse(value, param)
        assert text is not None
        if not 3 <= len(text) <= 12 or not all(c.isdigit() or "A" <= c <= "Z" for c in text):
            raise invalid_request(
                f"Invalid {param}: must be 3 to 12 uppercase letters or numbers", param=param
            )
        return text


@dataclass(frozen=True, slots=True)
class Integer:
    minimum: int | None = None
    maximum: int | None = None
    emptyable: bool = False

    def parse(self, value: Any, param: str) -> int | None:
        if not isinstance(value, str):
            raise invalid_integer(param, _describe(value))
        if value == "" and self.emptyable:
            return None
        digits = value[1:] if value[:1] == "-" else value
        if not digits or not digits.isascii() or not digits.isdigit():
            raise invalid_integer(param, value)
        if len(digits.lstrip("0")) > _INT64_DIGITS:
            raise invalid_integer(param, value)
        number = int(value)
        if self.minimum is not None and number < self.minimum:
            raise invalid_request(
                f"This value must be greater than or equal to {self.minimum}.", param=param
            )
        if self.maximum is not None and number > self.maximum:
            raise invalid_request(
                f"This value must be less than or equal to {self.maximum}.", param=param
            )
        return number


@dataclass(frozen=True, slots=True)
class Boolean:
    def parse(self, value: Any, param: str) -> bool:
        if value == "true":
            return True
        if value == "false":
            return False
        raise invalid_boolean(param, value if isinstance(value, str) else _describe(value))


@dataclass(frozen=True, slots=True)
class Choice:
    choices: tuple[str, ...]
    emptyable: bool = False

    def parse(self, value: Any, param: str) -> str | None:
        if value == "" and self.emptyable:
            return None
        if not isinstance(value, str) or value not in self.choices:
            raise invalid_choice(param, self.choices)
        return value


@dataclass(frozen=True, slots=True)
class Hash:
    fields: Mapping[str, Kind]
    required: tuple[str, ...] = ()
    emptyable: bool = False

    def parse(self, value: Any, param: str) -> dict[str, Any] | None:
        if value == "" and self.emptyable:
            return None
        if not isinstance(value, dict):
            raise invalid_request("Invalid hash", param=param)
        out: dict[str, Any] = {}
        for key, raw in value.items():
            kind = self.fields.get(key)
            if kind is None:
                raise unknown_param(f"{param}[{key}]")
            out[key] = kind.parse(raw, f"{param}[{key}]")
        for key in self.required:
            if key not in value:
                raise missing_param(f"{param}[{key}]")
        return out


@dataclass(frozen=True, slots=True)
class Metadata:
    """Stripe metadata: up to 50 string pairs; keys at most 40 chars, values at most 500."""

    def parse(self, value: Any, param: str) -> dict[str, str | None] | _Clear:
        if value == "":
            return CLEAR
        if not isinstance(value, dict):
            raise invalid_request("Invalid hash", param=param)
        if len(value) > 50:
            raise invalid_request(
                "Invalid metadata: metadata can have a maximum of 50 keys.", param=param
            )
        out: dict[str, str | None] = {}
        for key, raw in value.items():
            name = f"{param}[{key}]"
            if not isinstance(raw, str):
                raise invalid_request(
                    "Invalid metadata: metadata values must be strings.", param=name
                )
            if len(key) > 40:
                raise invalid_request(
                    "Invalid metadata: metadata keys can be at most 40 characters long.",
                    param=name,
                )
            if len(raw) > 500:
                raise invalid_request(
                    "Invalid metadata: metadata values can be at most 500 characters long.",
                    param=name,
                )
            out[key] = raw if raw != "" else None
        return out


@dataclass(frozen=True, slots=True)
class ListOf:
    item: Kind
    max_items: int = 100
    emptyable: bool = False

    def parse(self, value: Any, param: str) -> list[Any] | None:
        if value == "" and self.emptyable:
            return None
        if isinstance(value, dict):
            # The SDK always indexes arrays (items[0][price]); the indices must be 0..n-1.
            if not all(k.isascii() and k.isdigit() for k in value):
                raise invalid_request("Invalid array", param=param)
            ordered = sorted(value.items(), key=lambda kv: int(kv[0]))
            if [int(k) for k, _ in ordered] != list(range(len(ordered))):
                raise invalid_request("Invalid array", param=param)
            items = [v for _, v in ordered]
        elif isinstance(value, list):
            items = value
        else:
            raise invalid_request("Invalid array", param=param)
        if len(items) > self.max_items:
            raise invalid_request(
                f"Invalid array: must have at most {self.max_items} elements", param=param
            )
        return [self.item.parse(v, f"{param}[{i}]") for i, v in enumerate(items)]


@dataclass(frozen=True, slots=True)
class Range:
    """A list filter such as ``created``: an exact timestamp or ``gt/gte/lt/lte`` bounds."""

    def parse(self, value: Any, param: str) -> dict[str, int]:
        if isinstance(value, dict):
            bounds = Hash({op: Integer() for op in ("gt", "gte", "lt", "lte")}).parse(value, param)
            return {k: v for k, v in (bounds or {}).items() if v is not None}
        exact = Integer().parse(value, param)
        assert exact is not None
        return {"gte": exact, "lte": exact}


EXPAND: Final = ListOf(Text(max_length=500), max_items=50)


@dataclass(frozen=True)
class Spec:
    """The parameters one endpoint accepts (``expand`` is always accepted)."""

    fields: Mapping[str, Kind] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if "expand" not in self.fields:
            object.__setattr__(self, "fields", {**self.fields, "expand": EXPAND})

    def parse(self, form: Mapping[str, Any]) -> dict[str, Any]:
        fields = self.fields
        out: dict[str, Any] = {}
        for name, raw in form.items():
            kind = fields.get(name)
            if kind is None:
                raise unknown_param(name)
            out[name] = kind.parse(raw, name)
        for name in self.required:
            if name not in form:
                raise missing_param(name)
        return out


def require(parsed: Mapping[str, Any], *names: str) -> None:
    """Refuse when a parameter the call needs is absent (or was sent empty)."""
    for name in names:
        if parsed.get(name) is None:
            raise missing_param(name)


__all__ = [
    "CLEAR",
    "EXPAND",
    "Boolean",
    "Choice",
    "Email",
    "Hash",
    "Integer",
    "Kind",
    "ListOf",
    "Metadata",
    "Prefix",
    "Range",
    "Spec",
    "Text",
    "require",
]
