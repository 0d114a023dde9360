"""The utility's policy as pure functions: the executable policy model.

Every rule of DOMAIN.md section 5 that has a computable outcome lives here, over
plain account and bill facts (no I/O, no services, no wall clock). The tools, the
task builder, the grader and the reference agent all call these functions, so the
"correct outcome" of a request on an account state is defined once.

Conventions shared by every rule:

- Money is integer cents; each amount leaves with a display string ("$214.07") next
  to it. Speaking it in words is the agent's job.
- "Today" defaults to the frozen business date (``vamos_env.clock.TODAY``).
- "Within the last 12 months" means on or after ``today - 365 days``: an event 365
  days ago is inside the window, 366 days ago is outside. A date after today (bad
  data) counts as inside, the cautious reading.
- Dates of a service period or a meter reading are intervals with an exclusive end:
  a reading from June 1 to July 1 covers 30 days (the meter is read on both days).
- Each decision carries a ``say`` sentence the agent can speak as it stands.
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vamos_env.clock import MONTH_NAMES, TODAY, from_unix

# --- constants of the policy -------------------------------------------------------

ARRANGEMENT_MINIMUM_PAST_DUE_CENTS = 5_000
SHUTOFF_PAST_DUE_CENTS = 50_000
SHUTOFF_DAYS_PAST_DUE = 60
MIN_INSTALLMENTS = 2
FIRST_INSTALLMENT_AFTER_DAYS = 30
DOWN_PAYMENT_PERCENT = 25
EXTENSION_MIN_DAYS = 1
EXTENSION_MAX_DAYS = 15
WINDOW_DAYS = 365  # "the last 12 months", see the module docstring
WINTER_FPL_CEILING_PCT = 250

ChargeType = Literal["supply", "delivery", "customer_charge", "tax"]
METERED_CHARGE_TYPES: tuple[ChargeType, ...] = ("supply", "delivery")
CHARGE_TYPE_ORDER: tuple[ChargeType, ...] = ("supply", "delivery", "customer_charge", "tax")
CHARGE_TYPE_LABELS: dict[ChargeType, str] = {
    "supply": "Electricity supply",
    "delivery": "Delivery",
    "customer_charge": "Customer charge",
    "tax": "Taxes",
}


class _Facts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- formatting ----------------------------------------------------------------------


def format_cents(cents: int) -> str:
    """Display string for an amount in cents: 123456 -> "$1,234.56", -500 -> "-$5.00"."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


def format_date(d: date) -> str:
    """A date as a person writes it, independent of the machine's locale: "October 10, 2026"."""
    return f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}"


def _format_rate(rate: Decimal) -> str:
    # normalize() drops trailing zeros ("10.40" -> "10.4"); ":f" keeps it out of exponent form.
    return f"{rate.normalize():f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# --- dates -----------------------------------------------------------------------------


def within_last_12_months(event: date, today: date = TODAY) -> bool:
    """Whether ``event`` falls in the rolling 12-month window ending today.

    The window is every day on or after ``today - 365 days``: 364 and 365 days ago are
    inside, 366 days ago is outside. Future dates count as inside.
    """
    return event >= today - timedelta(days=WINDOW_DAYS)


def add_months(start: date, months: int) -> date:
    """``start`` moved by whole calendar months, the day clamped to the month's last day.

    January 31 plus one month is February 28 (29 in a leap year). Instalment schedules
    always count from the first due date, never from the previous (possibly clamped) one,
    so a schedule starting January 31 runs Feb 28, Mar 31, Apr 30.
    """
    month_index = start.month - 1 + months
    year = start.year + month_index // 12
    month = month_index % 12 + 1
    day = min(start.day, calendar.monthrange(year, month)[1])
    return date(year, month, day)


# --- account facts ------------------------------------------------------------------


class AccountFacts(_Facts):
    """What the policy needs to know about one account, built from both services.

    ``past_due_cents`` / ``days_past_due`` describe the billing arrears (see ``arrears``
    for the definition over bills); ``open_balance_cents`` is everything unpaid,
    past due or not. ``arrangement_active`` comes from the loan engine (an active
    arrangement may be overdue while the bills are current). ``household_size`` is
    carried for the record: the FPL percentage already accounts for it, and no rule
    reads it. No other fields are needed: every rule reads only these.
    """

    past_due_cents: int = Field(ge=0)
    days_past_due: int = Field(ge=0)
    open_balance_cents: int = Field(ge=0)
    arrangement_active: bool
    income_fpl_pct: int | None = Field(default=None, ge=0)
    household_size: int | None = Field(default=None, ge=1)
    prior_arrangement_default_on: date | None = None
    last_extension_on: date | None = None
    medical_certificate_until: date | None = None

    @model_validator(mode="after")
    def _past_due_is_part_of_balance(self) -> AccountFacts:
        if self.past_due_cents > self.open_balance_cents:
            raise ValueError(
                f"past_due_cents ({self.past_due_cents}) cannot exceed "
                f"open_balance_cents ({self.open_balance_cents})"
            )
        if self.past_due_cents == 0 and self.days_past_due != 0:
            raise ValueError(f"days_past_due is {self.days_past_due} with nothing past due")
        return self

    @classmethod
    def from_customer_metadata(
        cls,
        metadata: Mapping[str, str],
        *,
        past_due_cents: int,
        days_past_due: int,
        open_balance_cents: int,
        arrangement_active: bool,
    ) -> AccountFacts:
        """Build facts from a billing customer's metadata (DOMAIN.md 3a) plus computed arrears.

        Metadata values are strings; an absent or empty value means unknown / none.
        ``household_size`` is read from metadata when the world stores it there.
        """
        return cls(
            past_due_cents=past_due_cents,
            days_past_due=days_past_due,
            open_balance_cents=open_balance_cents,
            arrangement_active=arrangement_active,
            income_fpl_pct=_metadata_int(metadata, "income_fpl_pct"),
            household_size=_metadata_int(metadata, "household_size"),
            prior_arrangement_default_on=_metadata_date(metadata, "prior_arrangement_default_on"),
            last_extension_on=_metadata_date(metadata, "last_extension_on"),
            medical_certificate_until=_metadata_date(metadata, "medical_certificate_until"),
        )


def _metadata_text(metadata: Mapping[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _metadata_int(metadata: Mapping[str, Any], key: str) -> int | None:
    text = _metadata_text(metadata, key)
    return None if text is None else int(text)


def _metadata_date(metadata: Mapping[str, Any], key: str) -> date | None:
    text = _metadata_text(metadata, key)
    return None if text is None else date.fromisoformat(text)


# --- bill facts -------------------------------------------------------------------------

BillStatus = Literal["draft", "open", "paid", "void", "uncollectible"]


class BillLineFacts(_Facts):
    """One bill line (a Stripe invoice line with its metadata decoded).

    ``kwh`` and ``rate_cents_per_kwh`` are set on metered lines (supply, delivery).
    ``meter`` names the reading's meter (meter number or premise id): supply and
    delivery lines with the same meter and read dates are one reading.
    """

    amount_cents: int
    charge_type: ChargeType
    description: str
    kwh: int | None = Field(default=None, ge=0)
    rate_cents_per_kwh: Decimal | None = Field(default=None, ge=0)
    period_start: date
    period_end: date
    read_start: date | None = None
    read_end: date | None = None
    meter: str | None = None

    @model_validator(mode="after")
    def _ordered_dates(self) -> BillLineFacts:
        if self.period_end < self.period_start:
            raise ValueError(f"period_end {self.period_end} is before {self.period_start}")
        if (self.read_start is None) != (self.read_end is None):
            raise ValueError("read_start and read_end must both be set or both be absent")
        if self.read_start and self.read_end and self.read_end < self.read_start:
            raise ValueError(f"read_end {self.read_end} is before {self.read_start}")
        return self

    @classmethod
    def from_stripe_line(cls, line: Mapping[str, Any]) -> BillLineFacts:
        """Decode a Stripe invoice line (a dict or StripeObject) per DOMAIN.md 3a.

        The meter comes from line metadata ``meter_number``, else ``premise_id``.
        """
        metadata: Mapping[str, Any] = line.get("metadata") or {}
        period: Mapping[str, Any] = line["period"]
        rate = _metadata_text(metadata, "rate_cents_per_kwh")
        return cls(
            amount_cents=int(line["amount"]),
            charge_type=metadata["charge_type"],
            description=str(line.get("description") or ""),
            kwh=_metadata_int(metadata, "kwh"),
            rate_cents_per_kwh=None if rate is None else Decimal(rate),
            period_start=from_unix(int(period["start"])).date(),
            period_end=from_unix(int(period["end"])).date(),
            read_start=_metadata_date(metadata, "read_start"),
            read_end=_metadata_date(metadata, "read_end"),
            meter=_metadata_text(metadata, "meter_number")
            or _metadata_text(metadata, "premise_id"),
        )


class BillFacts(_Facts):
    """One bill (a Stripe invoice). ``amount_remaining_cents`` defaults from the status."""

    bill_id: str
    total_cents: int
    lines: tuple[BillLineFacts, ...]
    due_date: date
    status: BillStatus
    bill_date: date
    amount_remaining_cents: int | None = None

    @property
    def remaining_cents(self) -> int:
        """What is still owed: as given, else the total while open and nothing otherwise."""
        if self.amount_remaining_cents is not None:
            return self.amount_remaining_cents
        return self.total_cents if self.status in ("open", "uncollectible") else 0

    @classmethod
    def from_stripe_invoice(
        cls, invoice: Mapping[str, Any], lines: Iterable[Mapping[str, Any]] | None = None
    ) -> BillFacts:
        """Decode a Stripe invoice; ``lines`` defaults to ``invoice["lines"]["data"]``.

        Pass the lines explicitly when the invoice has more than the embedded page holds.
        """
        if lines is None:
            lines = invoice["lines"]["data"]
        # send_invoice bills always have a due date; a charge_automatically invoice has
        # none and is due when created.
        due = invoice.get("due_date")
        created = int(invoice["created"])
        return cls(
            bill_id=str(invoice["id"]),
            total_cents=int(invoice["total"]),
            lines=tuple(BillLineFacts.from_stripe_line(line) for line in lines),
            due_date=from_unix(int(due if due is not None else created)).date(),
            status=invoice["status"],
            bill_date=from_unix(created).date(),
            amount_remaining_cents=invoice.get("amount_remaining"),
        )


class Arrears(_Facts):
    """The account's arrears computed from its bills."""

    past_due_cents: int
    days_past_due: int
    open_balance_cents: int
    oldest_past_due_bill_id: str | None


def arrears(bills: Iterable[BillFacts], today: date = TODAY) -> Arrears:
    """Arrears over an account's bills.

    Rule: a bill is past due when it still has money owing and its due date is before
    today (a bill due today is not yet late). Past due = the sum owing on past-due bills;
    days past due = days since the due date of the oldest past-due bill (0 when none);
    open balance = the sum owing on every bill. Drafts and void bills owe nothing.
    """
    owing = [b for b in bills if b.status in ("open", "uncollectible") and b.remaining_cents > 0]
    late = sorted((b for b in owing if b.due_date < today), key=lambda b: b.due_date)
    return Arrears(
        past_due_cents=sum(b.remaining_cents for b in late),
        days_past_due=(today - late[0].due_date).days if late else 0,
        open_balance_cents=sum(b.remaining_cents for b in owing),
        oldest_past_due_bill_id=late[0].bill_id if late else None,
    )


# --- decisions ---------------------------------------------------------------------------

ArrangementReason = Literal["eligible", "shutoff_process", "arrangement_active", "below_minimum"]


class Decision(_Facts):
    """An outcome: ``eligible``, ``refused`` (say why) or ``transfer`` (to a human)."""

    kind: Literal["eligible", "refused", "transfer"]
    reason: ArrangementReason
    say: str


def in_shutoff_process(facts: AccountFacts) -> bool:
    """Rule: the account is in the shutoff process at >= $500.00 AND >= 60 days past due."""
    return (
        facts.past_due_cents >= SHUTOFF_PAST_DUE_CENTS
        and facts.days_past_due >= SHUTOFF_DAYS_PAST_DUE
    )


def arrangement_eligibility(facts: AccountFacts) -> Decision:
    """Rule: may this account get a payment arrangement? Checked in this order:

    1. shutoff process ($500.00+ and 60+ days past due) -> transfer to a human, even
       when an arrangement is already active;
    2. an arrangement is already active -> refused;
    3. less than $50.00 past due -> refused ($49.99 refused, $50.00 allowed);
    otherwise eligible. Term and down payment are the quote's business.
    """
    past_due = format_cents(facts.past_due_cents)
    if in_shutoff_process(facts):
        return Decision(
            kind="transfer",
            reason="shutoff_process",
            say=(
                f"Your account is {past_due} and {facts.days_past_due} days past due, which "
                "puts it in the shutoff process. A colleague needs to handle an arrangement, "
                "so I'll transfer you."
            ),
        )
    if facts.arrangement_active:
        return Decision(
            kind="refused",
            reason="arrangement_active",
            say=(
                "You already have an active payment arrangement, and only one can be open "
                "at a time."
            ),
        )
    if facts.past_due_cents < ARRANGEMENT_MINIMUM_PAST_DUE_CENTS:
        return Decision(
            kind="refused",
            reason="below_minimum",
            say=(
                f"A payment arrangement needs at least "
                f"{format_cents(ARRANGEMENT_MINIMUM_PAST_DUE_CENTS)} past due, and your "
                f"account has {past_due} past due."
            ),
        )
    return Decision(
        kind="eligible",
        reason="eligible",
        say=f"Your account qualifies for a payment arrangement on the {past_due} past due.",
    )


# --- term limits ---------------------------------------------------------------------------

TierCode = Literal["fpl_0_150", "fpl_151_250", "fpl_251_300", "fpl_above_300", "fpl_unknown"]


class IncomeTier(_Facts):
    """An income tier and the longest arrangement it allows (in monthly instalments)."""

    code: TierCode
    label: str
    max_installments: int


_TIERS: tuple[tuple[int, IncomeTier], ...] = (
    (150, IncomeTier(code="fpl_0_150", label="at or below 150% FPL", max_installments=60)),
    (250, IncomeTier(code="fpl_151_250", label="151% to 250% FPL", max_installments=36)),
    (300, IncomeTier(code="fpl_251_300", label="251% to 300% FPL", max_installments=12)),
)
_TIER_ABOVE_300 = IncomeTier(code="fpl_above_300", label="above 300% FPL", max_installments=6)
_TIER_UNKNOWN = IncomeTier(code="fpl_unknown", label="income not on file", max_installments=6)


def income_tier(income_fpl_pct: int | None) -> IncomeTier:
    """Rule (52 Pa. Code Ch. 56 / 66 Pa.C.S. 1405): the term limit by household income.

    At or below 150% FPL: 60 months; at or below 250%: 36; at or below 300%: 12; above
    300% or unknown: 6. Percentages are whole numbers (150 -> 60, 151 -> 36).
    """
    if income_fpl_pct is None:
        return _TIER_UNKNOWN
    if income_fpl_pct < 0:
        raise ValueError(f"income_fpl_pct must be >= 0, got {income_fpl_pct}")
    for ceiling, tier in _TIERS:
        if income_fpl_pct <= ceiling:
            return tier
    return _TIER_ABOVE_300


def max_installments(income_fpl_pct: int | None) -> int:
    """Rule: the most monthly instalments allowed for this income (see ``income_tier``).

    The fewest is always ``MIN_INSTALLMENTS`` (2).
    """
    return income_tier(income_fpl_pct).max_installments


# --- down payment ----------------------------------------------------------------------------


def requires_down_payment(facts: AccountFacts, today: date = TODAY) -> bool:
    """Rule: a default on an arrangement within the last 12 months requires 25% down.

    Window: the default is on or after ``today - 365 days`` (365 days ago requires it,
    366 days ago does not).
    """
    default_on = facts.prior_arrangement_default_on
    return default_on is not None and within_last_12_months(default_on, today)


def down_payment_cents(past_due_cents: int) -> int:
    """Rule: the down payment is 25% of the past-due amount, to the nearest cent.

    A half cent rounds up (ROUND_HALF_UP): 25% of 10002 cents is 2500.5 -> 2501.
    """
    exact = Decimal(past_due_cents * DOWN_PAYMENT_PERCENT) / 100
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


# --- quote -------------------------------------------------------------------------------------


class Installment(_Facts):
    """One instalment of an arrangement (numbered from 1)."""

    number: int
    due_date: date
    amount_cents: int
    amount_display: str


QuoteReason = Literal[
    "eligible",
    "shutoff_process",
    "arrangement_active",
    "below_minimum",
    "too_few_installments",
    "too_many_installments",
    "down_payment_required",
]


class Quote(_Facts):
    """The quote for an arrangement: allowed or not, why, and every amount and date.

    ``kind``: ``quote`` (the agent may offer it), ``quote_then_transfer`` (a down payment
    is needed, which the tools cannot take: state the quote, then transfer), ``refused``
    or ``transfer`` (shutoff process). Amounts and the schedule are set only for the two
    quote kinds. ``monthly_installment_cents`` is the regular instalment (2 onwards); the
    first carries the remainder cents.
    """

    allowed: bool
    kind: Literal["quote", "quote_then_transfer", "refused", "transfer"]
    reason: QuoteReason
    say: str
    installments: int
    min_installments: int
    max_installments: int
    income_tier: IncomeTier
    past_due_cents: int
    past_due_display: str
    down_payment_required: bool
    down_payment_cents: int | None = None
    down_payment_display: str | None = None
    financed_cents: int | None = None
    financed_display: str | None = None
    first_installment_cents: int | None = None
    first_installment_display: str | None = None
    monthly_installment_cents: int | None = None
    monthly_installment_display: str | None = None
    first_due_date: date | None = None
    schedule: tuple[Installment, ...] = ()


def split_installments(financed_cents: int, installments: int) -> list[int]:
    """Rule: equal instalments in whole cents, the remainder cents on the first.

    10000 over 3 -> [3334, 3333, 3333]. The amounts always sum to ``financed_cents``.
    """
    if installments < 1:
        raise ValueError(f"installments must be >= 1, got {installments}")
    if financed_cents < 0:
        raise ValueError(f"financed_cents must be >= 0, got {financed_cents}")
    base, remainder = divmod(financed_cents, installments)
    return [base + remainder] + [base] * (installments - 1)


def installment_due_dates(installments: int, today: date = TODAY) -> list[date]:
    """Rule: the first instalment is due 30 days after today, the rest monthly after it.

    Later dates are the first due date plus whole months, clamped to the month's end
    (see ``add_months``). For the frozen date: 2026-10-10, 2026-11-10, ...
    """
    first = today + timedelta(days=FIRST_INSTALLMENT_AFTER_DAYS)
    return [add_months(first, k) for k in range(installments)]


def quote_arrangement(facts: AccountFacts, installments: int, today: date = TODAY) -> Quote:
    """Rule: quote an arrangement of ``installments`` monthly payments; enrols nobody.

    Order: eligibility (``arrangement_eligibility``), then the term (2 up to the income
    tier's maximum), then the down payment (a default within 12 months: 25% down,
    financed = past due minus the down payment, kind ``quote_then_transfer``). Otherwise
    the whole past-due amount is financed. Instalments: remainder cents on the first;
    first due 30 days after today, then monthly.
    """
    tier = income_tier(facts.income_fpl_pct)
    needs_down = requires_down_payment(facts, today)
    common: dict[str, Any] = {
        "installments": installments,
        "min_installments": MIN_INSTALLMENTS,
        "max_installments": tier.max_installments,
        "income_tier": tier,
        "past_due_cents": facts.past_due_cents,
        "past_due_display": format_cents(facts.past_due_cents),
        "down_payment_required": needs_down,
    }
    eligibility = arrangement_eligibility(facts)
    if eligibility.kind != "eligible":
        return Quote(
            allowed=False,
            kind="transfer" if eligibility.kind == "transfer" else "refused",
            reason=eligibility.reason,
            say=eligibility.say,
            **common,
        )
    if not MIN_INSTALLMENTS <= installments <= tier.max_installments:
        reason: QuoteReason = (
            "too_few_installments" if installments < MIN_INSTALLMENTS else "too_many_installments"
        )
        return Quote(
            allowed=False,
            kind="refused",
            reason=reason,
            say=(
                f"An arrangement on this account can run from {MIN_INSTALLMENTS} to "
                f"{tier.max_installments} monthly payments, so I can't set one up over "
                f"{_plural(installments, 'payment')}."
            ),
            **common,
        )

    down = down_payment_cents(facts.past_due_cents) if needs_down else 0
    financed = facts.past_due_cents - down
    amounts = split_installments(financed, installments)
    dues = installment_due_dates(installments, today)
    schedule = tuple(
        Installment(number=i + 1, due_date=d, amount_cents=a, amount_display=format_cents(a))
        for i, (d, a) in enumerate(zip(dues, amounts, strict=True))
    )
    first, regular = amounts[0], amounts[1]
    later = installments - 1
    if first == regular:
        plan = (
            f"{installments} monthly payments of {format_cents(first)}, the first due "
            f"{format_date(dues[0])}"
        )
    else:
        plan = (
            f"a first payment of {format_cents(first)} due {format_date(dues[0])}, then "
            f"{_plural(later, 'monthly payment')} of {format_cents(regular)}"
        )
    if needs_down:
        assert facts.prior_arrangement_default_on is not None  # implied by needs_down
        say = (
            f"Because an earlier arrangement was defaulted on "
            f"{format_date(facts.prior_arrangement_default_on)}, a down payment of 25%, "
            f"{format_cents(down)}, is needed first. The remaining {format_cents(financed)} "
            f"would be {plan}. I can't take the down payment here, so I'll transfer you to "
            f"a colleague to set this up."
        )
    else:
        say = (
            f"For the {format_cents(financed)} past due, with no down payment, that is "
            f"{plan}. Nothing is set up until you agree."
        )
    return Quote(
        allowed=True,
        kind="quote_then_transfer" if needs_down else "quote",
        reason="down_payment_required" if needs_down else "eligible",
        say=say,
        down_payment_cents=down,
        down_payment_display=format_cents(down),
        financed_cents=financed,
        financed_display=format_cents(financed),
        first_installment_cents=first,
        first_installment_display=format_cents(first),
        monthly_installment_cents=regular,
        monthly_installment_display=format_cents(regular),
        first_due_date=dues[0],
        schedule=schedule,
        **common,
    )


# --- due-date extension ----------------------------------------------------------------------


class ExtensionDecision(_Facts):
    """The outcome of a due-date extension request.

    ``next_eligible_on`` is set when a recent extension blocks this one: the first day
    the earlier extension falls out of the 12-month window.
    """

    allowed: bool
    reason: Literal["allowed", "recent_extension", "too_few_days", "too_many_days"]
    days: int
    due_date: date
    new_due_date: date | None
    last_extension_on: date | None
    next_eligible_on: date | None
    say: str
    still_owed_say: str


def extension_decision(
    facts: AccountFacts, days: int, due_date: date, today: date = TODAY
) -> ExtensionDecision:
    """Rule: a bill's due date may move by 1 to 15 days, once per rolling 12 months.

    ``due_date`` is the bill's current due date; the new one is ``due_date + days``.
    Checked in this order: a previous extension within the last 12 months (on or after
    ``today - 365 days``: 364 and 365 days ago refuse, 366 allows) -> refused; then
    ``days`` outside 1..15 (0 and 16 refused, 15 allowed) -> refused. The agent must
    also say the bill is still owed (``still_owed_say``).

    Even when policy allows it, the billing service refuses to move a finalized
    invoice's due date (real Stripe behaviour, kept by the benchmark); the tool reports
    that refusal, so an allowed decision here does not mean the date moved.
    """
    last = facts.last_extension_on
    still_owed = (
        "An extension only moves the due date; the bill is still owed in full and must be "
        "paid by the new date."
    )
    common: dict[str, Any] = {
        "days": days,
        "due_date": due_date,
        "last_extension_on": last,
        "still_owed_say": still_owed,
    }
    if last is not None and within_last_12_months(last, today):
        next_eligible = last + timedelta(days=WINDOW_DAYS + 1)
        return ExtensionDecision(
            allowed=False,
            reason="recent_extension",
            new_due_date=None,
            next_eligible_on=next_eligible,
            say=(
                f"A due date can be extended once in 12 months, and this account had an "
                f"extension on {format_date(last)}. The next one is possible from "
                f"{format_date(next_eligible)}."
            ),
            **common,
        )
    if not EXTENSION_MIN_DAYS <= days <= EXTENSION_MAX_DAYS:
        return ExtensionDecision(
            allowed=False,
            reason="too_few_days" if days < EXTENSION_MIN_DAYS else "too_many_days",
            new_due_date=None,
            next_eligible_on=None,
            say=(
                f"A due date can be extended by {EXTENSION_MIN_DAYS} to {EXTENSION_MAX_DAYS} "
                f"days, so I can't extend it by {_plural(days, 'day')}."
            ),
            **common,
        )
    new_due = due_date + timedelta(days=days)
    return ExtensionDecision(
        allowed=True,
        reason="allowed",
        new_due_date=new_due,
        next_eligible_on=None,
        say=(
            f"The due date can move {_plural(days, 'day')}, from {format_date(due_date)} to "
            f"{format_date(new_due)}. {still_owed}"
        ),
        **common,
    )


# --- protections -----------------------------------------------------------------------------


class WinterProtection(_Facts):
    """Winter protection: eligibility (by income) and whether the season is on, separately.

    ``season_start``/``season_end`` are the current season when in season, else the next.
    """

    eligibility: Literal["eligible", "not_eligible", "unknown"]
    income_fpl_pct: int | None
    in_season: bool
    in_effect: bool
    season_start: date
    season_end: date
    needs_human_decision: bool
    say: str


class MedicalCertificate(_Facts):
    """A medical certificate's state on a given day."""

    status: Literal["active", "expired", "none"]
    until: date | None
    days_remaining: int | None
    needs_human_decision: bool
    say: str


class Protections(_Facts):
    """Protections against termination, as facts to state; decisions go to a human."""

    winter: WinterProtection
    medical: MedicalCertificate
    any_in_effect: bool
    needs_human_decision: bool
    say: str


def winter_season(today: date = TODAY) -> tuple[date, date]:
    """The winter season (December 1 to March 31, inclusive) containing today, else the next."""
    if today.month >= 12:
        return date(today.year, 12, 1), date(today.year + 1, 3, 31)
    if today.month <= 3:
        return date(today.year - 1, 12, 1), date(today.year, 3, 31)
    return date(today.year, 12, 1), date(today.year + 1, 3, 31)


def protections(facts: AccountFacts, today: date = TODAY) -> Protections:
    """Rule: the protections that hold termination, stated as facts.

    Winter: December 1 to March 31 for households at or below 250% FPL. Eligibility and
    "in effect" are reported separately (eligible households are protected only in
    season; on the frozen date no one is). Unknown income: eligibility cannot be told,
    so a decision needs a human. Medical certificate: active while ``until >= today``
    (it holds termination through that date), else expired; an expired certificate's
    renewal (30-day renewals) is a human decision. The agent states these facts; any
    request to be granted protection is transferred (``needs_human_decision``).
    """
    start, end = winter_season(today)
    in_season = start <= today <= end
    pct = facts.income_fpl_pct
    eligibility: Literal["eligible", "not_eligible", "unknown"]
    if pct is None:
        eligibility = "unknown"
    elif pct <= WINTER_FPL_CEILING_PCT:
        eligibility = "eligible"
    else:
        eligibility = "not_eligible"
    season = f"{format_date(start)} to {format_date(end)}"
    if eligibility == "unknown":
        winter_say = (
            "There is no household income on file, so I can't tell whether winter protection "
            "applies; a colleague would need to decide that."
        )
    elif eligibility == "eligible":
        winter_say = f"The household qualifies for winter protection, which runs {season}; " + (
            "it is in effect now." if in_season else "it is not in effect today."
        )
    else:
        winter_say = (
            "Winter protection is for households at or below 250% of the federal poverty "
            "level, and this household is above that."
        )
    winter = WinterProtection(
        eligibility=eligibility,
        income_fpl_pct=pct,
        in_season=in_season,
        in_effect=in_season and eligibility == "eligible",
        season_start=start,
        season_end=end,
        needs_human_decision=eligibility == "unknown",
        say=winter_say,
    )

    until = facts.medical_certificate_until
    if until is None:
        medical = MedicalCertificate(
            status="none",
            until=None,
            days_remaining=None,
            needs_human_decision=False,
            say="There is no medical certificate on file.",
        )
    elif until >= today:
        medical = MedicalCertificate(
            status="active",
            until=until,
            days_remaining=(until - today).days,
            needs_human_decision=False,
            say=f"A medical certificate on file holds termination until {format_date(until)}.",
        )
    else:
        medical = MedicalCertificate(
            status="expired",
            until=until,
            days_remaining=None,
            needs_human_decision=True,
            say=(
                f"The medical certificate on file expired on {format_date(until)}; a renewal "
                "is decided by a colleague."
            ),
        )
    return Protections(
        winter=winter,
        medical=medical,
        any_in_effect=winter.in_effect or medical.status == "active",
        needs_human_decision=winter.needs_human_decision or medical.needs_human_decision,
        say=f"{winter.say} {medical.say}",
    )


# --- bill explanation ------------------------------------------------------------------------


class Reading(_Facts):
    """One meter reading: the kWh counted once, however many lines bill it.

    Lines belong to one reading when they share meter and read dates (the line period
    stands in for absent read dates). Its kWh is the largest per-charge-type sum of its
    lines' kWh: supply and delivery each bill the whole reading (so the reading is not
    doubled), and a charge type split into tiers still adds up.
    """

    meter: str | None
    read_start: date | None
    read_end: date | None
    kwh: int
    days: int


class ExplainedLine(_Facts):
    """One bill line in plain words."""

    charge_type: ChargeType
    description: str
    amount_cents: int
    amount_display: str
    kwh: int | None
    rate_cents_per_kwh: Decimal | None
    period_start: date
    period_end: date
    read_start: date | None
    read_end: date | None
    meter: str | None
    say: str


class ChargeGroup(_Facts):
    """All lines of one charge type, with their subtotal."""

    charge_type: ChargeType
    label: str
    lines: tuple[ExplainedLine, ...]
    subtotal_cents: int
    subtotal_display: str


class Explanation(_Facts):
    """A bill broken down charge by charge, with a check that the lines add up."""

    bill_id: str
    bill_date: date
    due_date: date
    status: BillStatus
    total_cents: int
    total_display: str
    groups: tuple[ChargeGroup, ...]
    readings: tuple[Reading, ...]
    total_kwh: int
    energy_cents: int
    fixed_charges_cents: int
    fixed_charges_display: str
    taxes_cents: int
    taxes_display: str
    lines_sum_cents: int
    lines_match_total: bool
    warnings: tuple[str, ...]
    say: str


def _reading_key(line: BillLineFacts) -> tuple[str | None, date, date]:
    if line.read_start is not None and line.read_end is not None:
        return (line.meter, line.read_start, line.read_end)
    return (line.meter, line.period_start, line.period_end)


def _kwh_by_reading(
    lines: Iterable[BillLineFacts],
) -> dict[tuple[str | None, date, date], dict[ChargeType, int]]:
    by_reading: dict[tuple[str | None, date, date], dict[ChargeType, int]] = {}
    for line in lines:
        if line.kwh is None:
            continue
        per_type = by_reading.setdefault(_reading_key(line), {})
        per_type[line.charge_type] = per_type.get(line.charge_type, 0) + line.kwh
    return by_reading


def readings(lines: Sequence[BillLineFacts]) -> list[Reading]:
    """Rule: total kWh counts each meter reading once (see ``Reading``).

    Only lines with ``kwh`` set take part; readings come back in order of first mention.
    """
    with_reads = {_reading_key(line) for line in lines if line.read_start is not None}
    return [
        Reading(
            meter=key[0],
            read_start=key[1] if key in with_reads else None,
            read_end=key[2] if key in with_reads else None,
            kwh=max(per_type.values()),
            days=(key[2] - key[1]).days,
        )
        for key, per_type in _kwh_by_reading(lines).items()
    ]


def _reading_words(line: BillLineFacts) -> str:
    if line.read_start is None or line.read_end is None:
        return ""
    meter = f"meter {line.meter}, " if line.meter else ""
    return f" ({meter}read {format_date(line.read_start)} to {format_date(line.read_end)})"


def _explain_line(line: BillLineFacts) -> ExplainedLine:
    label = CHARGE_TYPE_LABELS[line.charge_type]
    amount = format_cents(line.amount_cents)
    if line.kwh is not None and line.rate_cents_per_kwh is not None:
        usage = f"{line.kwh} kWh at {_format_rate(line.rate_cents_per_kwh)} cents per kWh"
        say = f"{label}: {usage}{_reading_words(line)}, {amount}."
    elif line.kwh is not None:
        say = f"{label}: {line.kwh} kWh{_reading_words(line)}, {amount}."
    else:
        say = f"{label}: {line.description or label.lower()}, {amount}."
    return ExplainedLine(
        charge_type=line.charge_type,
        description=line.description,
        amount_cents=line.amount_cents,
        amount_display=amount,
        kwh=line.kwh,
        rate_cents_per_kwh=line.rate_cents_per_kwh,
        period_start=line.period_start,
        period_end=line.period_end,
        read_start=line.read_start,
        read_end=line.read_end,
        meter=line.meter,
        say=say,
    )


def _sum_of(lines: Iterable[BillLineFacts], *types: ChargeType) -> int:
    return sum(line.amount_cents for line in lines if line.charge_type in types)


def explain_bill(bill: BillFacts) -> Explanation:
    """Rule: explain a bill charge by charge.

    Lines are grouped by charge type (supply, delivery, customer charge, taxes) with
    subtotals; metered lines give kWh, rate and read dates; total kWh counts each
    reading once (``readings``); the lines are checked against the bill total, and
    any mismatch, or supply and delivery disagreeing on a reading's kWh, is a warning.
    """
    groups = []
    for charge_type in CHARGE_TYPE_ORDER:
        of_type = [line for line in bill.lines if line.charge_type == charge_type]
        if not of_type:
            continue
        subtotal = sum(line.amount_cents for line in of_type)
        groups.append(
            ChargeGroup(
                charge_type=charge_type,
                label=CHARGE_TYPE_LABELS[charge_type],
                lines=tuple(_explain_line(line) for line in of_type),
                subtotal_cents=subtotal,
                subtotal_display=format_cents(subtotal),
            )
        )
    bill_readings = readings(bill.lines)
    total_kwh = sum(r.kwh for r in bill_readings)
    lines_sum = sum(line.amount_cents for line in bill.lines)
    fixed = _sum_of(bill.lines, "customer_charge")
    taxes = _sum_of(bill.lines, "tax")
    warnings = []
    if lines_sum != bill.total_cents:
        warnings.append(
            f"The lines add up to {format_cents(lines_sum)} but the bill total is "
            f"{format_cents(bill.total_cents)}."
        )
    for per_type in _kwh_by_reading(bill.lines).values():
        supply, delivery = per_type.get("supply"), per_type.get("delivery")
        if supply is not None and delivery is not None and supply != delivery:
            warnings.append(
                f"Supply bills {supply} kWh and delivery {delivery} kWh for the same reading."
            )

    parts = [f"{g.label.lower()} {g.subtotal_display}" for g in groups]
    meters = "reading" if len(bill_readings) == 1 else "readings"
    say = (
        f"This bill of {format_cents(bill.total_cents)} covers {total_kwh} kWh "
        f"({len(bill_readings)} meter {meters}): " + ", ".join(parts) + "."
    )
    return Explanation(
        bill_id=bill.bill_id,
        bill_date=bill.bill_date,
        due_date=bill.due_date,
        status=bill.status,
        total_cents=bill.total_cents,
        total_display=format_cents(bill.total_cents),
        groups=tuple(groups),
        readings=tuple(bill_readings),
        total_kwh=total_kwh,
        energy_cents=_sum_of(bill.lines, *METERED_CHARGE_TYPES),
        fixed_charges_cents=fixed,
        fixed_charges_display=format_cents(fixed),
        taxes_cents=taxes,
        taxes_display=format_cents(taxes),
        lines_sum_cents=lines_sum,
        lines_match_total=lines_sum == bill.total_cents,
        warnings=tuple(sorted(warnings)),
        say=say,
    )


# --- variance ----------------------------------------------------------------------------------

VarianceComponent = Literal["usage", "rate", "period_length", "fixed_and_taxes"]


class VariancePart(_Facts):
    """One component of a bill-to-bill change (positive: the newer bill is higher)."""

    component: VarianceComponent
    cents: int
    display: str
    say: str


class BillEnergy(_Facts):
    """The energy side of one bill as the variance sees it."""

    bill_id: str
    total_cents: int
    kwh: int
    days: int
    energy_cents: int
    other_cents: int
    daily_kwh: Decimal | None
    blended_rate_cents_per_kwh: Decimal | None


class Variance(_Facts):
    """Why the newer bill differs from the older one; the parts sum to ``difference_cents``."""

    older: BillEnergy
    newer: BillEnergy
    difference_cents: int
    difference_display: str
    parts: tuple[VariancePart, ...]
    say: str


def _service_days(lines: Sequence[BillLineFacts]) -> int:
    # The bill's service period spans its metered lines (all lines when none is metered),
    # so two premises read on different days make one span, not two added lengths.
    metered = [line for line in lines if line.charge_type in METERED_CHARGE_TYPES] or list(lines)
    if not metered:
        return 0
    return (max(li.period_end for li in metered) - min(li.period_start for li in metered)).days


def _bill_energy(bill: BillFacts) -> tuple[BillEnergy, Fraction | None]:
    kwh = sum(r.kwh for r in readings(bill.lines))
    days = _service_days(bill.lines)
    energy = _sum_of(bill.lines, *METERED_CHARGE_TYPES)
    rate = Fraction(energy, kwh) if kwh else None
    summary = BillEnergy(
        bill_id=bill.bill_id,
        total_cents=bill.total_cents,
        kwh=kwh,
        days=days,
        energy_cents=energy,
        other_cents=bill.total_cents - energy,
        daily_kwh=_decimal(Fraction(kwh, days), "0.1") if days else None,
        blended_rate_cents_per_kwh=_decimal(rate, "0.01") if rate is not None else None,
    )
    return summary, rate


def _decimal(value: Fraction, places: str) -> Decimal:
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return exact.quantize(Decimal(places), rounding=ROUND_HALF_UP)


def allocate_cents(exact: Sequence[Fraction], total: int) -> list[int]:
    """Round exact amounts to whole cents that sum to ``total`` (largest remainder).

    Each amount is floored; the cents still missing go one each to the amounts with the
    largest fractional parts (ties to the earlier one). ``total`` must equal the exact sum.
    """
    if sum(exact, Fraction(0)) != total:
        raise ValueError(f"exact parts sum to {sum(exact, Fraction(0))}, not {total}")
    floors = [math.floor(x) for x in exact]
    missing = total - sum(floors)
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[:missing]:
        floors[i] += 1
    return floors


def compare_bills(older: BillFacts, newer: BillFacts) -> Variance:
    """Rule: split ``newer.total - older.total`` into four parts that sum to it exactly.

    Per bill: K = kWh (each reading once), D = service days (span of the metered lines'
    periods, end exclusive), E = supply + delivery amounts, blended rate R = E / K, daily
    use d = K / D, and "fixed and taxes" = total - E (the customer-charge and tax lines
    when the lines add up to the total). With 0 for the older bill and 1 for the newer,
    computed exactly in fractions of a cent:

    - period length = d0 * (D1 - D0) * R0   (old daily use and price, longer/shorter bill)
    - usage         = (d1 - d0) * D1 * R0   (change in daily use, at the old price)
    - rate          = (E1 - E0) - usage - period length, which is K1 * (R1 - R0)
    - fixed_and_taxes = (total1 - E1) - (total0 - E0)

    Edge cases (no division by zero): without kWh on the older bill R0 is taken as R1
    (all new energy is usage); when either bill has no service days, the period-length
    part is 0 and usage is (K1 - K0) * R0; with no kWh on either bill, every energy
    change is rate. The parts are rounded to whole cents by largest remainder so they
    still sum exactly. Per-line rounding can leave a cent or two in the rate part even
    when prices did not change.
    """
    old, r0 = _bill_energy(older)
    new, r1 = _bill_energy(newer)
    energy_change = new.energy_cents - old.energy_cents
    price = r0 if r0 is not None else (r1 if r1 is not None else Fraction(0))
    if old.days and new.days:
        d0 = Fraction(old.kwh, old.days)
        d1 = Fraction(new.kwh, new.days)
        period = d0 * (new.days - old.days) * price
        usage = (d1 - d0) * new.days * price
    else:
        period = Fraction(0)
        usage = (new.kwh - old.kwh) * price
    rate = energy_change - usage - period
    fixed = Fraction(new.other_cents - old.other_cents)
    difference = newer.total_cents - older.total_cents
    usage_c, rate_c, period_c, fixed_c = allocate_cents([usage, rate, period, fixed], difference)

    def direction(cents: int) -> str:
        if cents > 0:
            return f"added {format_cents(cents)}"
        if cents < 0:
            return f"took off {format_cents(-cents)}"
        return "made no difference"

    kwh_change = new.kwh - old.kwh
    if kwh_change:
        kwh_words = f"{abs(kwh_change)} kWh {'more' if kwh_change > 0 else 'less'}"
    else:
        kwh_words = "the same"
    parts = (
        VariancePart(
            component="usage",
            cents=usage_c,
            display=format_cents(usage_c),
            say=(
                f"Usage: {new.kwh} kWh against {old.kwh} kWh before "
                f"({kwh_words}); the change in daily use "
                f"{direction(usage_c)}."
            ),
        ),
        VariancePart(
            component="rate",
            cents=rate_c,
            display=format_cents(rate_c),
            say=(
                "Price: the average energy price went from "
                f"{_rate_words(old.blended_rate_cents_per_kwh)} to "
                f"{_rate_words(new.blended_rate_cents_per_kwh)}, which {direction(rate_c)}."
            ),
        ),
        VariancePart(
            component="period_length",
            cents=period_c,
            display=format_cents(period_c),
            say=(
                f"Billing period: {new.days} days against {old.days} days before, which "
                f"{direction(period_c)}."
            ),
        ),
        VariancePart(
            component="fixed_and_taxes",
            cents=fixed_c,
            display=format_cents(fixed_c),
            say=f"Fixed charges and taxes: the change {direction(fixed_c)}.",
        ),
    )
    change = "higher" if difference > 0 else "lower"
    summary = (
        f"The newer bill, {format_cents(newer.total_cents)}, is "
        f"{format_cents(abs(difference))} {change} than the older one, "
        f"{format_cents(older.total_cents)}."
        if difference
        else f"Both bills are {format_cents(newer.total_cents)}."
    )
    return Variance(
        older=old,
        newer=new,
        difference_cents=difference,
        difference_display=format_cents(difference),
        parts=parts,
        say=summary + " " + " ".join(p.say for p in parts if p.cents),
    )


def _rate_words(rate: Decimal | None) -> str:
    return "no energy billed" if rate is None else f"{_format_rate(rate)} cents per kWh"
