"""The task file format: one call's brief for the caller and its answer key for the grader.

A task says who calls (identity, the one second factor they will give, facts they
know but must not volunteer), what they ask for in order (each request with the
caller's words, what the caller needs to hear before agreeing, and what they
refuse), the account changes a correct agent makes (in order, with values), and
the checks of assertion 3 (what must be said, confirmed or not done, with a
value, a tolerance, a topic and an evidence window).

Everything is strict (``extra="forbid"``) so that a malformed task file fails at
load time with the field, the expected and the actual value. The published JSON
schema (``task.schema.json`` beside this file) is generated from these models.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

SCHEMA_VERSION: Literal[1] = 1

AccountNumber = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{5}$")]
ToolName = Literal[
    "verify_caller",
    "get_account",
    "list_bills",
    "get_bill",
    "explain_bill",
    "compare_bills",
    "get_payment_history",
    "make_payment",
    "quote_payment_arrangement",
    "create_payment_arrangement",
    "get_payment_arrangement",
    "modify_payment_arrangement",
    "request_due_date_extension",
    "set_paperless_billing",
    "get_supplier_info",
    "transfer_to_human",
]
# Tools that change an account; assertion 2 compares exactly these successful calls.
WRITE_TOOLS: frozenset[str] = frozenset(
    {
        "make_payment",
        "create_payment_arrangement",
        "modify_payment_arrangement",
        "request_due_date_extension",
        "set_paperless_billing",
    }
)

RequestKind = Literal[
    "balance",
    "explain_bill",
    "compare_bills",
    "payment_history",
    "pay_bill",
    "pay_after_decline",
    "quote_arrangement",
    "create_arrangement",
    "arrangement_too_little_owed",
    "arrangement_already_active",
    "arrangement_down_payment",
    "arrangement_shutoff",
    "arrangement_status",
    "record_arrangement_payment",
    "promise_to_pay",
    "due_date_extension",
    "paperless_status",
    "enable_paperless",
    "disable_paperless",
    "supplier",
    "protections",
    "supervisor",
]
# "rate" is a price in cents per kWh, as a decimal string ("12.19"); "text" a name or a
# state said in words (a supplier, paperless "on"/"off", the reason a bill went up).
ValueType = Literal["money", "date", "count", "digits", "email", "rate", "text"]
SecondFactorKind = Literal["card_last4", "postal_code", "last_bill_amount"]
Outcome = Literal["resolved", "refused", "transferred"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SecondFactor(_Strict):
    kind: SecondFactorKind
    # As the caller would say it, digits only for card/postal ("4242", "15213"), dollars
    # and cents for an amount ("65.52").
    value: str = Field(min_length=1)


class PrivateFact(_Strict):
    """Something the caller knows and gives only when asked (never volunteers)."""

    key: str = Field(min_length=1)  # e.g. "payment_made", "card_to_use", "email"
    value: str
    say: str  # the caller's words when asked


class CallerBrief(_Strict):
    account_number: AccountNumber
    full_name: str = Field(min_length=1)
    second_factor: SecondFactor
    opening_line: str = Field(min_length=1)
    private_facts: tuple[PrivateFact, ...] = ()


class Consent(_Strict):
    """What the caller must hear before agreeing to an action.

    ``kind`` names the condition: ``amount`` (the value in cents is stated within the
    tolerance), ``card_and_amount`` (the card's last four and the amount), ``terms``
    (down payment and monthly instalment of an arrangement), ``email`` (the
    destination email read back). Values are in ``values`` (cents, strings).
    """

    kind: Literal["amount", "card_and_amount", "terms", "email"]
    values: dict[str, int | str]
    tolerance_cents: int = Field(default=0, ge=0)
    agree: str  # the caller's words when the condition is met
    object_to: str  # the caller's words when it is not (e.g. a wrong amount read back)


class CallerRequest(_Strict):
    """One thing the caller wants, as the caller pursues it."""

    kind: RequestKind
    says: str = Field(min_length=1)
    rephrase: str = Field(min_length=1)
    # Kind-specific facts the caller pursues, e.g. {"installments": 6}, {"days": 10},
    # {"bill": "newest"}, {"amount_cents": 5000, "paid_on": "2026-09-08"}.
    details: dict[str, int | str | bool] = Field(default_factory=dict)
    consent: tuple[Consent, ...] = ()
    # Offers the caller turns down, e.g. "declines_alternative_card", and what they say.
    refusals: dict[str, str] = Field(default_factory=dict)
    expected_outcome: Outcome


class ExpectedChange(_Strict):
    """One successful account-changing tool call a correct agent makes."""

    request_index: int = Field(ge=0)
    tool: ToolName
    # Argument and result values that must match, e.g. {"bill_id": "in_...",
    # "amount_cents": 22289, "card_last4": "4242"} or {"installments": 6,
    # "principal_cents": 43972}, {"enabled": True}.
    values: dict[str, int | str | bool]

    @model_validator(mode="after")
    def _is_a_write(self) -> ExpectedChange:
        if self.tool not in WRITE_TOOLS:
            raise ValueError(
                f"expected a tool that changes the account ({', '.join(sorted(WRITE_TOOLS))}), "
                f"got {self.tool!r}"
            )
        return self


CallOutcome = Literal["success", "failure", "any"]


class Window(_Strict):
    """Where evidence counts: turns after one event and before another.

    ``after_tool``/``before_tool`` name the first call of a tool with the given
    outcome (``success`` by default; ``failure`` is e.g. a declined payment; ``None``
    is the start/end of the call). ``after_check`` names another check whose first
    evidence opens the window (e.g. the caller's confirmation after the read-back).
    Windows are per request: they also close at the call that resolves the request
    the check belongs to only when ``before_tool`` says so.
    """

    after_tool: ToolName | None = None
    after_outcome: CallOutcome = "success"
    before_tool: ToolName | None = None
    before_outcome: CallOutcome = "success"
    after_check: str | None = None


class Check(_Strict):
    """One requirement of assertion 3.

    Kinds:
    - ``say``: the agent states ``value`` (of ``value_type``, within ``tolerance``) on
      ``topic`` inside ``window``.
    - ``confirm``: the caller agrees inside ``window`` (after the read-back).
    - ``not_called``: no successful call of ``tool`` (e.g. a promise is not recorded).
    - ``called``: a successful call of ``tool`` inside ``window`` (e.g. a transfer).
    - ``not_said``: the agent never claims ``topic`` (e.g. "payment went through"
      after a decline), judged by the topic's phrases.
    """

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    request_index: int = Field(ge=0)
    kind: Literal["say", "confirm", "not_called", "called", "not_said"]
    description: str = Field(min_length=1)  # one sentence, for humans and the LLM verifier
    topic: str = ""
    # Phrases that mark the topic in speech (lower case), used by the code verifier.
    topic_phrases: tuple[str, ...] = ()
    # cents for money; ISO date; count; digits; email; cents per kWh ("12.19") for a rate
    value: int | str | None = None
    value_type: ValueType | None = None
    tolerance: int = Field(default=0, ge=0)
    tool: ToolName | None = None
    window: Window = Window()

    @model_validator(mode="after")
    def _consistent(self) -> Check:
        if self.kind == "say" and (self.value is None) != (self.value_type is None):
            raise ValueError("a 'say' check with a value needs value_type, and the reverse")
        if self.kind in ("not_called", "called") and self.tool is None:
            raise ValueError(f"a {self.kind!r} check needs the tool it is about")
        if self.kind == "not_said" and not self.topic_phrases:
            raise ValueError("a 'not_said' check needs topic_phrases")
        if self.value_type == "date" and isinstance(self.value, str):
            date.fromisoformat(self.value)
        if self.value_type == "rate":
            try:
                Decimal(str(self.value))
            except InvalidOperation:
                raise ValueError(
                    f"a 'rate' value is cents per kWh as a decimal string, got {self.value!r}"
                ) from None
        return self


class TaskMeta(_Strict):
    request_kinds: tuple[RequestKind, ...]
    request_count: int = Field(ge=1, le=4)
    account_slot: str = ""
    source: Literal["single", "composed", "hand"] = "single"
    parent: str | None = None  # the task this one was grown from
    predicted_success: float | None = None


class Task(_Strict):
    schema_version: Literal[1] = SCHEMA_VERSION
    task_id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    caller: CallerBrief
    requests: tuple[CallerRequest, ...] = Field(min_length=1, max_length=4)
    expected_changes: tuple[ExpectedChange, ...] = ()
    checks: tuple[Check, ...] = ()
    meta: TaskMeta

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        n = len(self.requests)
        if self.meta.request_count != n:
            raise ValueError(
                f"meta.request_count: expected {n} (the requests), got {self.meta.request_count}"
            )
        kinds = tuple(r.kind for r in self.requests)
        if self.meta.request_kinds != kinds:
            raise ValueError(f"meta.request_kinds: expected {kinds}, got {self.meta.request_kinds}")
        indexed: list[tuple[str, int]] = [
            (f"expected_changes[{i}]", c.request_index) for i, c in enumerate(self.expected_changes)
        ] + [(f"checks[{i}]", c.request_index) for i, c in enumerate(self.checks)]
        for where, index in indexed:
            if index >= n:
                raise ValueError(f"{where}.request_index: expected 0..{n - 1}, got {index}")
        ids = [c.id for c in self.checks]
        if len(set(ids)) != len(ids):
            raise ValueError("checks: ids must be unique")
        known = set(ids)
        for c in self.checks:
            if c.window.after_check is not None and c.window.after_check not in known:
                raise ValueError(
                    f"checks[{c.id}].window.after_check: expected one of {sorted(known)}, "
                    f"got {c.window.after_check!r}"
                )
        return self


class TaskFileError(ValueError):
    """A task file that does not match the schema: names the field, expected and actual."""


class TaskSet(_Strict):
    schema_version: Literal[1] = SCHEMA_VERSION
    name: str
    seed: int | None = None
    tasks: tuple[Task, ...]

    @model_validator(mode="after")
    def _unique(self) -> TaskSet:
        ids = [t.task_id for t in self.tasks]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"task ids must be unique; repeated: {dupes}")
        return self


def describe_errors(error: ValidationError) -> str:
    """One line per problem: where, what was expected, what arrived."""
    lines = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "(file)"
        actual = item.get("input")
        shown = json.dumps(actual, default=str) if not isinstance(actual, dict) else "{...}"
        if len(shown) > 80:
            shown = shown[:77] + "..."
        lines.append(f"{where}: {item['msg']} (got {shown})")
    return "\n".join(lines)


def load_task_set(path: str | Path) -> TaskSet:
    """Read and validate a task file; raise ``TaskFileError`` with readable reasons."""
    path = Path(path)
    try:
        raw: Any = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise TaskFileError(f"{path}: expected a JSON task file, could not read it: {exc}") from exc
    try:
        return TaskSet.model_validate(raw)
    except ValidationError as exc:
        raise TaskFileError(f"{path}: not a valid task file:\n{describe_errors(exc)}") from exc


def json_schema() -> dict[str, Any]:
    """The published JSON schema of a task file."""
    schema = TaskSet.model_json_schema()
    schema["$id"] = "vamos-env:task-set:v1"
    schema["title"] = "vamos-env task set"
    return schema
