"""The world manifest: every fact the seeding needs to build the 24 accounts in both services.

The manifest is plain data (pydantic, strict, frozen) in the units of DOMAIN.md section 3a:
money in integer cents, dates as ``date``, rates as decimal strings. The seeding translates
it into Stripe calls (customer, payment methods, one subscription per premise, invoice items
and invoices, payments) and Fineract calls (client, arrangement loans, repayments).

Derived facts on the frozen date (open balance, past due, days past due, shutoff process,
arrangement schedule and overdue instalments) are methods taking ``today`` with the frozen
``vamos_env.clock.TODAY`` as default, so a caller can also ask "as of" another date.
"""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from vamos_env.clock import TODAY
from vamos_env.envs.energy.world.tariff import RateString, Tariff

AccountNumber = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{5}$")]
PhoneE164 = Annotated[str, StringConstraints(pattern=r"^\+1[2-9]\d{9}$")]
PostalCode = Annotated[str, StringConstraints(pattern=r"^\d{5}$")]
Last4 = Annotated[str, StringConstraints(pattern=r"^\d{4}$")]
Cents = Annotated[int, Field(ge=0)]
ChargeType = Literal["supply", "delivery", "customer_charge", "tax"]
ReadType = Literal["actual", "estimated"]
SupplierType = Literal["default", "retail_choice"]

# The four bill months of the world's usage, June to September (the usage profile order).
USAGE_MONTHS: tuple[int, int, int, int] = (6, 7, 8, 9)
MIN_MONTHLY_KWH = 150
MAX_MONTHLY_KWH = 1000
MIN_DUE_DAYS = 20
SHUTOFF_MIN_PAST_DUE_CENTS = 50_000
SHUTOFF_MIN_DAYS_PAST_DUE = 60

MonthlyKwh = tuple[int, int, int, int]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Address(_Frozen):
    line1: str = Field(min_length=1)
    city: str = Field(min_length=1)
    state: Literal["PA"] = "PA"
    postal_code: PostalCode

    def one_line(self) -> str:
        return f"{self.line1}, {self.city}, {self.state} {self.postal_code}"


class Premise(_Frozen):
    """A service location with one meter (a Stripe subscription in the billing service)."""

    premise_id: str = Field(min_length=1)
    service_address: str = Field(min_length=1)
    meter_number: str = Field(min_length=1)
    commodity: Literal["electric"] = "electric"
    rate_plan: str = "RS - Residential Service"
    service_start_date: date
    # This meter's share of the household's monthly use, June..September (see Account.usage_kwh).
    usage_kwh: MonthlyKwh


class Card(_Frozen):
    """A card on file, given as the Stripe test token that creates it."""

    stripe_test_token: str = Field(pattern=r"^pm_card_\w+$")
    brand: str
    last4: Last4
    declines: bool = False
    decline_code: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Card:
        if self.declines != (self.decline_code is not None):
            raise ValueError(
                f"{self.stripe_test_token}: declines={self.declines} but "
                f"decline_code={self.decline_code!r}; a declining card needs a code, "
                "a good card none"
            )
        return self


class BillLine(_Frozen):
    """One invoice line; its metadata carries kWh, rate, charge type and the meter reading."""

    amount_cents: Cents
    description: str = Field(min_length=1)
    charge_type: ChargeType
    premise_id: str
    meter_number: str
    kwh: int | None = None
    rate_cents_per_kwh: RateString | None = None
    period_start: date
    period_end: date
    # Only metered lines (supply, delivery) carry a reading; both lines of one reading match.
    read_start: date | None = None
    read_end: date | None = None
    read_type: ReadType | None = None

    @model_validator(mode="after")
    def _check(self) -> BillLine:
        if self.period_end <= self.period_start:
            raise ValueError(f"line period {self.period_start}..{self.period_end} is empty")
        metered = self.charge_type in ("supply", "delivery")
        reading = (self.kwh, self.rate_cents_per_kwh, self.read_start, self.read_end)
        if metered and (None in reading or self.read_type is None):
            raise ValueError(f"a {self.charge_type} line needs kwh, rate and read dates")
        if not metered and any(v is not None for v in (*reading, self.read_type)):
            raise ValueError(f"a {self.charge_type} line carries no kwh, rate or reading")
        return self


class Bill(_Frozen):
    """One bill (a finalized Stripe invoice, ``collection_method=send_invoice``)."""

    number_suffix: int = Field(ge=1)
    bill_date: date  # invoice creation date = read end
    due_date: date
    period_start: date
    period_end: date
    lines: tuple[BillLine, ...] = Field(min_length=1)
    total_cents: Cents  # always the exact sum of the lines (validated)
    status: Literal["paid", "open"]
    paid_on: date | None = None
    # The Stripe test token of the card that paid; None on a paid bill means paid out of band
    # (a check or cash at a pay station: Stripe's ``paid_out_of_band=true``).
    paid_with: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Bill:
        line_sum = sum(line.amount_cents for line in self.lines)
        if self.total_cents != line_sum:
            raise ValueError(f"total_cents {self.total_cents} != sum of lines {line_sum}")
        if self.due_date < self.bill_date + timedelta(days=MIN_DUE_DAYS):
            raise ValueError(
                f"due date {self.due_date} is less than {MIN_DUE_DAYS} days after "
                f"bill date {self.bill_date}"
            )
        paid = self.status == "paid"
        if paid != (self.paid_on is not None) or (not paid and self.paid_with is not None):
            raise ValueError("a paid bill needs paid_on; an open bill has no paid_on/paid_with")
        if self.paid_on is not None and self.paid_on < self.bill_date:
            raise ValueError(f"paid on {self.paid_on}, before the bill date {self.bill_date}")
        return self

    def is_past_due(self, today: date = TODAY) -> bool:
        return self.status == "open" and self.due_date < today

    @property
    def kwh_by_reading(self) -> dict[tuple[str, date | None, date | None], int]:
        """kWh once per meter reading (supply and delivery lines share one reading)."""
        out: dict[tuple[str, date | None, date | None], int] = {}
        for line in self.lines:
            if line.charge_type == "supply" and line.kwh is not None:
                out[(line.meter_number, line.read_start, line.read_end)] = line.kwh
        return out

    @property
    def total_kwh(self) -> int:
        return sum(self.kwh_by_reading.values())


class Repayment(_Frozen):
    on: date
    amount_cents: int = Field(gt=0)


class Installment(_Frozen):
    """One row of an arrangement's repayment schedule, with what has been paid against it."""

    number: int
    due_on: date
    amount_cents: int
    paid_cents: int

    @property
    def settled(self) -> bool:
        return self.paid_cents >= self.amount_cents


def add_months(d: date, months: int) -> date:
    """Same day ``months`` later, clamped to the month's last day (Jan 31 + 1 -> Feb 28)."""
    index = d.month - 1 + months
    year, month = d.year + index // 12, index % 12 + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


class ExistingArrangement(_Frozen):
    """An active payment arrangement: a zero-interest Fineract loan over earlier arrears.

    The principal divides evenly by the number of instalments. That is deliberate: the
    policy quotes new arrangements with the remainder cents on the FIRST instalment, while
    the loan engine computes its own schedule; with no remainder both give the same
    instalments, so the arrangement the agent reads matches what the manifest says.
    """

    principal_cents: int = Field(gt=0)
    installments: int = Field(ge=2, le=60)
    submitted_on: date
    approved_on: date
    disbursed_on: date
    first_due_on: date
    repayments: tuple[Repayment, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> ExistingArrangement:
        if self.principal_cents % self.installments:
            raise ValueError(
                f"principal {self.principal_cents} cents does not divide evenly into "
                f"{self.installments} instalments"
            )
        if not self.submitted_on <= self.approved_on <= self.disbursed_on < self.first_due_on:
            raise ValueError("expected submitted <= approved <= disbursed < first due date")
        days = [r.on for r in self.repayments]
        if days != sorted(days) or (days and days[0] < self.disbursed_on):
            raise ValueError("repayments must be in date order, on or after disbursement")
        if sum(r.amount_cents for r in self.repayments) > self.principal_cents:
            raise ValueError("repayments exceed the principal")
        return self

    @property
    def installment_cents(self) -> int:
        return self.principal_cents // self.installments

    @property
    def repaid_cents(self) -> int:
        return sum(r.amount_cents for r in self.repayments)

    def schedule(self, today: date = TODAY) -> tuple[Installment, ...]:
        """Monthly equal instalments; repayments made by ``today`` fill the oldest first."""
        left = sum(r.amount_cents for r in self.repayments if r.on <= today)
        rows = []
        for n in range(self.installments):
            paid = min(left, self.installment_cents)
            left -= paid
            rows.append(
                Installment(
                    number=n + 1,
                    due_on=add_months(self.first_due_on, n),
                    amount_cents=self.installment_cents,
                    paid_cents=paid,
                )
            )
        return tuple(rows)

    def outstanding_cents(self, today: date = TODAY) -> int:
        return self.principal_cents - sum(r.amount_cents for r in self.repayments if r.on <= today)

    def overdue_installments(self, today: date = TODAY) -> tuple[Installment, ...]:
        """Instalments due before ``today`` and not fully paid."""
        return tuple(i for i in self.schedule(today) if i.due_on < today and not i.settled)

    def next_installment(self, today: date = TODAY) -> Installment | None:
        """The oldest unsettled instalment (overdue or next due), None when fully repaid."""
        return next((i for i in self.schedule(today) if not i.settled), None)


class Account(_Frozen):
    """One utility account: a Stripe customer and a Fineract client sharing the number."""

    slot: str = Field(pattern=r"^A\d{2}$")  # the hand-designed situation this account fills
    account_number: AccountNumber
    first_name: str
    middle_name: str | None = None
    last_name: str  # may be hyphenated or several words ("De La Cruz")
    email: str = Field(pattern=r"^[a-z0-9.'_-]+@[a-z0-9.-]+\.[a-z]+$")
    phone: PhoneE164
    mailing_address: Address
    premises: tuple[Premise, ...] = Field(min_length=1)
    cards: tuple[Card, ...] = Field(min_length=1)
    income_fpl_pct: int | None = Field(default=None, ge=0)
    household_size: int = Field(ge=1)
    supplier: str
    supplier_type: SupplierType
    paperless: bool
    medical_certificate_until: date | None = None
    prior_arrangement_default_on: date | None = None
    last_extension_on: date | None = None
    usage_kwh: MonthlyKwh  # the household's use, June..September
    bills: tuple[Bill, ...] = Field(min_length=1)  # oldest first
    existing_arrangement: ExistingArrangement | None = None
    client_activation_date: date  # Fineract client activation
    invoice_prefix: str = Field(pattern=r"^[A-Z0-9]{3,12}$")  # Stripe customer invoice_prefix
    note: str  # one line for humans: what this account is for
    situations: tuple[str, ...] = ()  # derived labels, see situations.py

    @model_validator(mode="after")
    def _check(self) -> Account:
        for month, kwh in zip(USAGE_MONTHS, self.usage_kwh, strict=True):
            if not MIN_MONTHLY_KWH <= kwh <= MAX_MONTHLY_KWH:
                raise ValueError(
                    f"{self.account_number}: month {month} use {kwh} kWh is outside "
                    f"{MIN_MONTHLY_KWH}-{MAX_MONTHLY_KWH}"
                )
        split = tuple(sum(p.usage_kwh[i] for p in self.premises) for i in range(4))
        if split != self.usage_kwh:
            raise ValueError(f"premise usage {split} does not add up to {self.usage_kwh}")
        if len({c.last4 for c in self.cards}) != len(self.cards):
            raise ValueError(f"{self.account_number}: two cards share a last four")
        tokens = {c.stripe_test_token for c in self.cards if not c.declines}
        for bill in self.bills:
            if bill.paid_with is not None and bill.paid_with not in tokens:
                raise ValueError(
                    f"bill {bill.number_suffix} paid with {bill.paid_with!r}, "
                    "which is not a good card on file"
                )
        dates = [b.bill_date for b in self.bills]
        if dates != sorted(dates):
            raise ValueError("bills must be oldest first")
        if (self.supplier_type == "default") != (self.supplier.endswith("default service")):
            raise ValueError(f"supplier {self.supplier!r} does not match {self.supplier_type}")
        return self

    @property
    def full_name(self) -> str:
        return " ".join(p for p in (self.first_name, self.middle_name, self.last_name) if p)

    def bill_number(self, bill: Bill) -> str:
        """The Stripe invoice number the bill gets when finalized in sequence."""
        return f"{self.invoice_prefix}-{bill.number_suffix:04d}"

    def open_balance_cents(self) -> int:
        return sum(b.total_cents for b in self.bills if b.status == "open")

    def past_due_bills(self, today: date = TODAY) -> tuple[Bill, ...]:
        return tuple(b for b in self.bills if b.is_past_due(today))

    def past_due_cents(self, today: date = TODAY) -> int:
        """Open bills whose due date is before today."""
        return sum(b.total_cents for b in self.past_due_bills(today))

    def days_past_due(self, today: date = TODAY) -> int:
        """Today minus the oldest past-due bill's due date; 0 when nothing is past due."""
        overdue = self.past_due_bills(today)
        return (today - min(b.due_date for b in overdue)).days if overdue else 0

    def in_shutoff_process(self, today: date = TODAY) -> bool:
        """At least $500.00 and at least 60 days past due."""
        return (
            self.past_due_cents(today) >= SHUTOFF_MIN_PAST_DUE_CENTS
            and self.days_past_due(today) >= SHUTOFF_MIN_DAYS_PAST_DUE
        )

    @property
    def last_bill(self) -> Bill:
        return self.bills[-1]

    @property
    def last_bill_amount_cents(self) -> int:
        return self.last_bill.total_cents

    @property
    def good_cards(self) -> tuple[Card, ...]:
        return tuple(c for c in self.cards if not c.declines)


class Manifest(_Frozen):
    """The whole seeded world on the frozen date."""

    as_of: date = TODAY
    seed: int
    usage_source: str  # e.g. "SYNTHETIC ..." or "NREL ResStock 2022.1 ..."
    tariff: Tariff
    accounts: tuple[Account, ...]

    @model_validator(mode="after")
    def _check(self) -> Manifest:
        for field in ("account_number", "email", "slot", "invoice_prefix"):
            values = [getattr(a, field) for a in self.accounts]
            if len(set(values)) != len(values):
                raise ValueError(f"duplicate {field} among accounts")
        return self

    def account(self, account_number: str) -> Account:
        for acct in self.accounts:
            if acct.account_number == account_number:
                return acct
        raise KeyError(f"no account {account_number!r} in the manifest")

    def by_slot(self, slot: str) -> Account:
        for acct in self.accounts:
            if acct.slot == slot:
                return acct
        raise KeyError(f"no slot {slot!r} in the manifest")

    def with_situation(self, label: str) -> tuple[Account, ...]:
        return tuple(a for a in self.accounts if label in a.situations)
