"""The simulated account state the task builder reasons over: what a call has done so far.

A task's later requests must be judged on the account as the earlier requests left it
(a paid bill is no longer past due; an arrangement opened in this call means no second
one). ``AccountState`` is a small, pure, immutable model of one account built from the
world manifest and the seeded ids (bill ids, payment-method ids), with one method per
write a correct agent can make: ``pay`` (a card payment), ``open_arrangement``,
``record_repayment``, ``set_paperless`` and ``transfer``. Each returns a new state.

The rules are the policy model's (``policy.arrears``, ``AccountFacts``); the schedule of
an arrangement opened in the call is the loan engine's (equal instalments rounded
half-even, the last one absorbing the remainder), which differs by rounding from the
policy's quote. ``vamos tasks validate`` replays tasks through the real tools and so
checks that this model and the services agree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Literal

from vamos_env.clock import MONTH_NAMES, TODAY
from vamos_env.envs.energy.policy import (
    FIRST_INSTALLMENT_AFTER_DAYS,
    AccountFacts,
    BillFacts,
    BillLineFacts,
    arrears,
)
from vamos_env.envs.energy.seed import SeededAccount
from vamos_env.envs.energy.world import Account, Bill
from vamos_env.twins.fineract.schedule import MONTHS, build_schedule

SettledBy = Literal["card", "out_of_band", "arrangement"]
WriteTool = Literal[
    "make_payment",
    "create_payment_arrangement",
    "modify_payment_arrangement",
    "set_paperless_billing",
]


def month_code(d: date) -> str:
    """A bill's short name in task ids and variants: "jun", "jul", "aug", "sep"."""
    return MONTH_NAMES[d.month - 1][:3].lower()


@dataclass(frozen=True, slots=True)
class SimCard:
    payment_method_id: str
    brand: str
    last4: str
    declines: bool


@dataclass(frozen=True, slots=True)
class SimBill:
    """One bill as the call sees it; ``facts`` holds the lines for explain/compare."""

    suffix: int
    bill_id: str
    number: str
    bill_date: date
    due_date: date
    total_cents: int
    status: Literal["open", "paid"]
    paid_on: date | None
    settled_by: SettledBy | None
    estimated_read: bool
    facts: BillFacts

    @property
    def month(self) -> str:
        return MONTH_NAMES[self.bill_date.month - 1]

    @property
    def code(self) -> str:
        return month_code(self.bill_date)

    @property
    def remaining_cents(self) -> int:
        return self.total_cents if self.status == "open" else 0

    def is_past_due(self, today: date = TODAY) -> bool:
        return self.status == "open" and self.due_date < today

    def as_facts(self) -> BillFacts:
        """Policy facts with the current status (a bill paid in the call owes nothing)."""
        if self.status == self.facts.status:
            return self.facts
        return self.facts.model_copy(
            update={"status": self.status, "amount_remaining_cents": self.remaining_cents}
        )


@dataclass(frozen=True, slots=True)
class SimInstalment:
    number: int
    due_on: date
    amount_cents: int
    paid_cents: int

    @property
    def outstanding_cents(self) -> int:
        return self.amount_cents - self.paid_cents

    @property
    def settled(self) -> bool:
        return self.paid_cents >= self.amount_cents

    def overdue(self, today: date = TODAY) -> bool:
        return not self.settled and self.due_on < today


@dataclass(frozen=True, slots=True)
class SimArrangement:
    """An active arrangement: its schedule with what has been paid, oldest instalment first."""

    principal_cents: int
    disbursed_on: date
    instalments: tuple[SimInstalment, ...]
    opened_in_call: bool
    last_repayment_on: date | None

    @property
    def outstanding_cents(self) -> int:
        return sum(i.outstanding_cents for i in self.instalments)

    def overdue(self, today: date = TODAY) -> tuple[SimInstalment, ...]:
        return tuple(i for i in self.instalments if i.overdue(today))

    def next_unsettled(self) -> SimInstalment | None:
        """The oldest instalment not fully paid: the overdue one if any, else the next due."""
        return next((i for i in self.instalments if not i.settled), None)

    def with_repayment(self, amount_cents: int, on: date) -> SimArrangement:
        """Allocated oldest unpaid instalment first, as the loan engine does."""
        left = amount_cents
        rows = []
        for row in self.instalments:
            portion = min(left, row.outstanding_cents)
            left -= portion
            rows.append(replace(row, paid_cents=row.paid_cents + portion))
        return replace(self, instalments=tuple(rows), last_repayment_on=on)


@dataclass(frozen=True, slots=True)
class AccountState:
    """One account on the frozen date, after the writes of the requests so far."""

    slot: str
    account_number: str
    full_name: str
    email: str
    postal_code: str
    paperless: bool
    supplier: str
    supplier_type: str
    cards: tuple[SimCard, ...]
    bills: tuple[SimBill, ...]  # oldest first
    two_premises: bool
    income_fpl_pct: int | None
    household_size: int
    medical_certificate_until: date | None
    prior_arrangement_default_on: date | None
    last_extension_on: date | None
    arrangement: SimArrangement | None
    writes: tuple[WriteTool, ...] = ()
    transferred: bool = False
    today: date = TODAY

    @classmethod
    def from_world(cls, account: Account, seeded: SeededAccount) -> AccountState:
        """The account as seeded: manifest facts plus the services' ids."""
        cards = tuple(
            SimCard(
                payment_method_id=seeded.payment_methods[card.stripe_test_token],
                brand=card.brand,
                last4=card.last4,
                declines=card.declines,
            )
            for card in account.cards
        )
        bills = tuple(_sim_bill(account, bill, seeded) for bill in account.bills)
        existing = account.existing_arrangement
        arrangement = None
        if existing is not None:
            arrangement = SimArrangement(
                principal_cents=existing.principal_cents,
                disbursed_on=existing.disbursed_on,
                instalments=tuple(
                    SimInstalment(i.number, i.due_on, i.amount_cents, i.paid_cents)
                    for i in existing.schedule()
                ),
                opened_in_call=False,
                last_repayment_on=existing.repayments[-1].on if existing.repayments else None,
            )
        return cls(
            slot=account.slot,
            account_number=account.account_number,
            full_name=account.full_name,
            email=account.email,
            postal_code=account.mailing_address.postal_code,
            paperless=account.paperless,
            supplier=account.supplier,
            supplier_type=account.supplier_type,
            cards=cards,
            bills=bills,
            two_premises=len(account.premises) > 1,
            income_fpl_pct=account.income_fpl_pct,
            household_size=account.household_size,
            medical_certificate_until=account.medical_certificate_until,
            prior_arrangement_default_on=account.prior_arrangement_default_on,
            last_extension_on=account.last_extension_on,
            arrangement=arrangement,
        )

    # --- reading -----------------------------------------------------------------------

    @property
    def key(self) -> tuple[object, ...]:
        """What later requests can depend on; equal keys mean equal answers."""
        arrangement = self.arrangement
        return (
            self.slot,
            tuple(b.status for b in self.bills),
            self.paperless,
            None
            if arrangement is None
            else (
                arrangement.opened_in_call,
                len(arrangement.instalments),
                tuple(i.paid_cents for i in arrangement.instalments),
            ),
            self.writes,
            self.transferred,
        )

    def facts(self) -> AccountFacts:
        owed = arrears([b.as_facts() for b in self.bills], self.today)
        return AccountFacts(
            past_due_cents=owed.past_due_cents,
            days_past_due=owed.days_past_due,
            open_balance_cents=owed.open_balance_cents,
            arrangement_active=self.arrangement is not None,
            income_fpl_pct=self.income_fpl_pct,
            household_size=self.household_size,
            prior_arrangement_default_on=self.prior_arrangement_default_on,
            last_extension_on=self.last_extension_on,
            medical_certificate_until=self.medical_certificate_until,
        )

    @property
    def past_due_cents(self) -> int:
        return sum(b.remaining_cents for b in self.bills if b.is_past_due(self.today))

    @property
    def open_balance_cents(self) -> int:
        return sum(b.remaining_cents for b in self.bills)

    @property
    def latest_bill(self) -> SimBill:
        return self.bills[-1]

    def bill(self, code: str) -> SimBill | None:
        return next((b for b in self.bills if b.code == code), None)

    def open_bills(self) -> tuple[SimBill, ...]:
        return tuple(b for b in self.bills if b.status == "open")

    @property
    def good_cards(self) -> tuple[SimCard, ...]:
        return tuple(c for c in self.cards if not c.declines)

    @property
    def declining_cards(self) -> tuple[SimCard, ...]:
        return tuple(c for c in self.cards if c.declines)

    def card_payments(self) -> tuple[SimBill, ...]:
        """Bills paid by card (before or during the call), newest payment last."""
        paid = [b for b in self.bills if b.settled_by == "card" and b.paid_on is not None]
        return tuple(sorted(paid, key=lambda b: (b.paid_on or b.bill_date, b.suffix)))

    @property
    def last_write(self) -> WriteTool | None:
        return self.writes[-1] if self.writes else None

    # --- writing -----------------------------------------------------------------------

    def pay(self, code: str) -> AccountState:
        """A card payment of one open bill in full, today."""
        bills = tuple(
            replace(b, status="paid", paid_on=self.today, settled_by="card")
            if b.code == code
            else b
            for b in self.bills
        )
        return replace(self, bills=bills, writes=(*self.writes, "make_payment"))

    def open_arrangement(self, installments: int) -> AccountState:
        """The arrears move into a new arrangement; the past-due bills are settled by it.

        The loan engine's schedule: first due 30 days after today, then monthly, equal
        instalments rounded half-even with the remainder on the last.
        """
        principal = self.past_due_cents
        first_due = self.today + timedelta(days=FIRST_INSTALLMENT_AFTER_DAYS)
        rows = build_schedule(principal, installments, self.today, first_due, 1, MONTHS)
        arrangement = SimArrangement(
            principal_cents=principal,
            disbursed_on=self.today,
            instalments=tuple(
                SimInstalment(r.number, r.due_date, r.principal_cents, 0) for r in rows
            ),
            opened_in_call=True,
            last_repayment_on=None,
        )
        bills = tuple(
            replace(b, status="paid", paid_on=self.today, settled_by="arrangement")
            if b.is_past_due(self.today)
            else b
            for b in self.bills
        )
        return replace(
            self,
            bills=bills,
            arrangement=arrangement,
            writes=(*self.writes, "create_payment_arrangement"),
        )

    def record_repayment(self, amount_cents: int, on: date) -> AccountState:
        if self.arrangement is None:
            raise ValueError("no arrangement to record a payment against")
        return replace(
            self,
            arrangement=self.arrangement.with_repayment(amount_cents, on),
            writes=(*self.writes, "modify_payment_arrangement"),
        )

    def set_paperless(self, enabled: bool) -> AccountState:
        return replace(self, paperless=enabled, writes=(*self.writes, "set_paperless_billing"))

    def transfer(self) -> AccountState:
        return replace(self, transferred=True)


def _sim_bill(account: Account, bill: Bill, seeded: SeededAccount) -> SimBill:
    bill_id = seeded.invoices[bill.number_suffix]
    lines = tuple(
        BillLineFacts(
            amount_cents=line.amount_cents,
            charge_type=line.charge_type,
            description=line.description,
            kwh=line.kwh,
            rate_cents_per_kwh=None
            if line.rate_cents_per_kwh is None
            else Decimal(line.rate_cents_per_kwh),
            period_start=line.period_start,
            period_end=line.period_end,
            read_start=line.read_start,
            read_end=line.read_end,
            meter=line.meter_number,
        )
        for line in bill.lines
    )
    facts = BillFacts(
        bill_id=bill_id,
        total_cents=bill.total_cents,
        lines=lines,
        due_date=bill.due_date,
        status=bill.status,
        bill_date=bill.bill_date,
        amount_remaining_cents=bill.total_cents if bill.status == "open" else 0,
    )
    if bill.status == "paid":
        settled: SettledBy | None = "card" if bill.paid_with is not None else "out_of_band"
    else:
        settled = None
    return SimBill(
        suffix=bill.number_suffix,
        bill_id=bill_id,
        number=account.bill_number(bill),
        bill_date=bill.bill_date,
        due_date=bill.due_date,
        total_cents=bill.total_cents,
        status=bill.status,
        paid_on=bill.paid_on,
        settled_by=settled,
        estimated_read=any(line.read_type == "estimated" for line in bill.lines),
        facts=facts,
    )
