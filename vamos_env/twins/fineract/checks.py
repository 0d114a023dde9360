"""Per-parameter checks with Fineract's ``DataValidatorBuilder`` codes and messages.

Each failed check appends one ``ApiParameterError``; ``raise_if_any`` raises them
together as one 400, the way Fineract's validators collect errors before throwing.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from vamos_env.twins.fineract.errors import ApiParameterError, ValidationProblem, mandatory, rule


class ParameterChecks:
    """Collects validation errors for one resource (``validation.msg.<resource>.*``)."""

    def __init__(self, resource: str) -> None:
        self.resource = resource
        self.errors: list[ApiParameterError] = []

    def add(self, error: ApiParameterError) -> None:
        self.errors.append(error)

    def not_null(self, parameter: str, value: Any) -> bool:
        if value is None:
            self.errors.append(mandatory(self.resource, parameter))
            return False
        return True

    def not_blank(self, parameter: str, value: str | None) -> bool:
        if value is None or not value.strip():
            self.errors.append(mandatory(self.resource, parameter))
            return False
        return True

    def max_length(self, parameter: str, value: str | None, limit: int) -> None:
        if value is not None and len(value.strip()) > limit:
            self.errors.append(
                rule(
                    self.resource,
                    parameter,
                    "exceeds.max.length",
                    f"The parameter `{parameter}` exceeds max length of {limit}.",
                    limit,
                    value,
                )
            )

    def in_range(self, parameter: str, value: int | None, low: int, high: int) -> None:
        if value is not None and not low <= value <= high:
            self.errors.append(
                rule(
                    self.resource,
                    parameter,
                    "is.not.within.expected.range",
                    f"The parameter `{parameter}` must be between {low} and {high}.",
                    value,
                    low,
                    high,
                )
            )

    def greater_than_zero(self, parameter: str, value: int | Decimal | None) -> None:
        if value is not None and value <= 0:
            self.errors.append(
                rule(
                    self.resource,
                    parameter,
                    "not.greater.than.zero",
                    f"The parameter `{parameter}` must be greater than 0.",
                    _number(value),
                    0,
                )
            )

    def zero_or_greater(self, parameter: str, value: int | Decimal | None) -> None:
        if value is not None and value < 0:
            self.errors.append(
                rule(
                    self.resource,
                    parameter,
                    "not.zero.or.greater",
                    f"The parameter `{parameter}` must be greater than or equal to 0.",
                    _number(value),
                    0,
                )
            )

    def one_of(self, parameter: str, value: Any, options: Sequence[Any]) -> None:
        """``isOneOfTheseValues``: like Fineract, a null value fails too."""
        if value is None or value not in options:
            listed = ", ".join(str(o).lower() if isinstance(o, bool) else str(o) for o in options)
            self.errors.append(
                rule(
                    self.resource,
                    parameter,
                    "is.not.one.of.expected.enumerations",
                    f"The parameter `{parameter}` must be one of [ {listed} ] .",
                    value,
                    *options,
                )
            )

    def amount_range(
        self, parameter: str, value: Decimal | None, low: Decimal | None, high: Decimal | None
    ) -> None:
        if value is None:
            return
        if low is not None and high is not None:
            if not low <= value <= high:
                self.errors.append(
                    rule(
                        self.resource,
                        parameter,
                        "amount.is.not.within.min.max.range",
                        f"The parameter `{parameter}` amount {value} must be between {low} and "
                        f"{high} .",
                        _number(value),
                        _number(low),
                        _number(high),
                    )
                )
        elif low is not None and value < low:
            self.errors.append(
                rule(
                    self.resource,
                    parameter,
                    "is.less.than.min",
                    f"The parameter `{parameter}` value {value} must not be less than the minimum "
                    f"value {low}",
                    _number(value),
                    _number(low),
                )
            )
        elif high is not None and value > high:
            self.errors.append(
                rule(
                    self.resource,
                    parameter,
                    "is.greater.than.max",
                    f"The parameter `{parameter}` value {value} must not be more than maximum "
                    f"value {high}",
                    _number(value),
                    _number(high),
                )
            )

    def fail(self, parameter: str, code: str, *args: Any) -> None:
        """``failWithCode``."""
        self.errors.append(
            rule(self.resource, parameter, code, f"Failed data validation due to: {code}.", *args)
        )

    def raise_if_any(self) -> None:
        if self.errors:
            raise ValidationProblem(self.errors)


def _number(value: int | Decimal) -> int | float:
    return value if isinstance(value, int) else float(value)
