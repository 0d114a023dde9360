"""The tools' argument models: strict pydantic, the single source of the JSON schemas.

Every model forbids unknown arguments and is strict (an integer is not a string, a
boolean is not the string "true"). Field descriptions are part of the agent's manual:
they end up, word for word, in the function-calling schemas.

``describe_invalid_arguments`` turns a validation failure into one plain sentence per
problem that names the argument and what was expected. It describes what arrived only
by its kind ("a string", "a number with a fraction"), never by its value: an argument
may carry anything, including another account's details, and a refusal must not echo
it back.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ACCOUNT_NUMBER_PATTERN = r"^\d{4}-\d{5}$"
BILL_ID_PATTERN = r"^in_[A-Za-z0-9_]{1,64}$"
PAYMENT_METHOD_ID_PATTERN = r"^pm_[A-Za-z0-9_]{1,64}$"
ISO_DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"

# The three shapes a second factor may take (see SecondFactor in verification.py).
_CARD_LAST4 = re.compile(r"^\d{4}$")
_POSTAL_CODE = re.compile(r"^\d{5}$")
_DOLLARS = re.compile(r"^\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{2})?$")


class ToolArguments(BaseModel):
    """Base of every tool's arguments: strict types, no unknown arguments, stripped text."""

    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=True)


class NoArguments(ToolArguments):
    """A tool that takes no arguments."""


BillId = Annotated[
    str,
    Field(
        pattern=BILL_ID_PATTERN,
        description="A bill id exactly as list_bills returns it, e.g. in_1a2B3c4D5e6F7g.",
    ),
]


class VerifyCallerArguments(ToolArguments):
    account_number: str = Field(
        pattern=ACCOUNT_NUMBER_PATTERN,
        description=(
            "The account number as the caller gave it: four digits, a dash, five digits, "
            "e.g. 4417-90781."
        ),
    )
    name_on_account: str = Field(
        min_length=1,
        max_length=200,
        description=(
            "The account holder's full name as the caller said it, every part: first, any "
            "middle name, and last name(s), e.g. Maria Elena Santos."
        ),
    )
    second_factor: str = Field(
        min_length=1,
        max_length=40,
        description=(
            "Exactly ONE of: the last four digits of a card on file (4 digits); the mailing "
            "postal code (5 digits); or the total of the most recent bill in dollars and cents "
            "(e.g. 123.45 or $123.45; a comma may group thousands)."
        ),
    )

    @field_validator("name_on_account")
    @classmethod
    def _has_letters(cls, value: str) -> str:
        if not any(ch.isalpha() for ch in value):
            raise ValueError("expected a name made of letters")
        return value

    @field_validator("second_factor")
    @classmethod
    def _one_known_shape(cls, value: str) -> str:
        compact = value.replace(" ", "")
        if _CARD_LAST4.match(compact) or _POSTAL_CODE.match(compact):
            return compact
        # An amount must say it is money: a dollar sign or a decimal point.
        if _DOLLARS.match(compact) and ("$" in compact or "." in compact):
            return compact
        raise ValueError(
            "expected 4 digits (a card's last four), 5 digits (the postal code), or a "
            "dollar amount with cents such as 123.45"
        )


class BillArguments(ToolArguments):
    bill_id: BillId


class CompareBillsArguments(ToolArguments):
    bill_id: BillId
    compare_to_bill_id: str = Field(
        pattern=BILL_ID_PATTERN,
        description="A second, different bill id from list_bills to compare against.",
    )


class MakePaymentArguments(ToolArguments):
    bill_id: BillId
    payment_method_id: str = Field(
        pattern=PAYMENT_METHOD_ID_PATTERN,
        description="The id of a card on file, exactly as get_account lists it (pm_...).",
    )
    amount_cents: int = Field(
        gt=0,
        le=100_000_000,
        description=(
            "The amount in integer cents; it must equal the bill's full remaining amount "
            "(amount_remaining_cents), e.g. 12345 for $123.45."
        ),
    )


class InstallmentsArguments(ToolArguments):
    installments: int = Field(
        ge=1,
        le=120,
        description=(
            "The number of monthly instalments the caller asked for. The account's allowed "
            "range is 2 to max_installments from get_account; outside it the answer is a "
            "refusal with the reason."
        ),
    )


class ModifyArrangementArguments(ToolArguments):
    amount_cents: int = Field(
        gt=0,
        le=100_000_000,
        description="The amount the caller already paid, in integer cents, e.g. 12345 for $123.45.",
    )
    payment_date: str | None = Field(
        default=None,
        pattern=ISO_DATE_PATTERN,
        description=(
            "The date the payment was made, YYYY-MM-DD; leave out for today. A future date "
            "is refused: only payments already made can be recorded."
        ),
        json_schema_extra={"format": "date"},
    )

    @field_validator("payment_date")
    @classmethod
    def _real_date(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                date.fromisoformat(value)
            except ValueError:
                raise ValueError("expected a calendar date YYYY-MM-DD") from None
        return value

    @property
    def payment_day(self) -> date | None:
        return None if self.payment_date is None else date.fromisoformat(self.payment_date)


class ExtensionArguments(ToolArguments):
    bill_id: BillId
    days: int = Field(
        ge=0,
        le=365,
        description=(
            "How many days to move the due date. Policy allows 1 to 15 days, once per "
            "rolling 12 months."
        ),
    )


class PaperlessArguments(ToolArguments):
    enabled: bool = Field(
        description="true to turn paperless billing on, false to turn it off (JSON boolean)."
    )


class TransferArguments(ToolArguments):
    reason: str = Field(
        min_length=1,
        max_length=500,
        description=(
            "Why the call goes to a person, in a short phrase for the colleague, e.g. "
            "'shutoff process: caller wants a payment arrangement'."
        ),
    )


# --- error sentences ------------------------------------------------------------------------


def kind_of(value: Any) -> str:
    """What arrived, by kind only (never by value)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction"
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "an unsupported value"


def _expected_type(error_type: str) -> str | None:
    return {
        "int_type": "an integer (no quotes, no fraction)",
        "int_from_float": "a whole number (no fraction)",
        "string_type": "a string",
        "bool_type": "true or false (a JSON boolean, no quotes)",
    }.get(error_type)


def describe_error(error: Any, model: type[ToolArguments]) -> str:
    """One sentence for one pydantic error entry, naming the argument and the expectation."""
    loc = error.get("loc") or ()
    name = str(loc[0]) if loc else ""
    kind: str = error.get("type", "")
    ctx: dict[str, Any] = error.get("ctx") or {}
    got = kind_of(error.get("input"))
    field = model.model_fields.get(name)
    hint = f" ({field.description})" if field is not None and field.description else ""
    if kind == "missing":
        return f"Missing required argument '{name}'{hint}."
    if kind == "extra_forbidden":
        # The unknown key is not repeated: it came from the agent and may carry anything.
        allowed = ", ".join(model.model_fields) or "no arguments"
        return f"Unexpected argument; this tool takes only: {allowed}."
    expected = _expected_type(kind)
    if expected is not None:
        return f"Argument '{name}' must be {expected}; got {got}."
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bounds = []
        for field_meta in field.metadata if field is not None else ():
            for attr, words in (
                ("gt", "more than"),
                ("ge", "at least"),
                ("lt", "less than"),
                ("le", "at most"),
            ):
                limit = getattr(field_meta, attr, None)
                if limit is not None:
                    bounds.append(f"{words} {limit}")
        rule = " and ".join(bounds) or "within range"
        side = "too small" if kind.startswith("greater") else "too large"
        return f"Argument '{name}' must be {rule}; the number given is {side}."
    if kind == "string_too_short":
        return f"Argument '{name}' must not be empty{hint}."
    if kind == "string_too_long":
        return (
            f"Argument '{name}' must be at most {ctx.get('max_length')} characters; "
            "the text given is longer."
        )
    if kind == "string_pattern_mismatch":
        return f"Argument '{name}' is not in the expected format{hint}; got {got} that differs."
    if kind == "value_error":
        reason = str(ctx.get("error") or "invalid value")
        return f"Argument '{name}': {reason}{hint}."
    return f"Argument '{name}' is invalid{hint}; got {got}."


def describe_invalid_arguments(exc: ValidationError, model: type[ToolArguments]) -> str:
    """All problems of one validation failure, each naming the argument and the expectation."""
    sentences = []
    for error in exc.errors(include_url=False):
        sentence = describe_error(error, model)
        if sentence not in sentences:
            sentences.append(sentence)
    return " ".join(sentences)
