"""The verified account as the tools read it: both services, through the DOMAIN.md 3a mapping.

``AccountRecords`` reads one account through the clients only (never twin internals;
billing through ``Billing``, the SDK's raw requests):
the billing customer and its metadata, cards on file, subscriptions (premises), bills
(invoices with their lines, decoded into the policy's ``BillFacts``) and the active
arrangement (the Fineract loan named by the customer's ``arrangement_id``). Reads are
cached for the life of the object; the tool context drops the object after any write,
so a tool never sees its own stale reads. The session assumes it is the only writer
during a call (each call has its own clone of the services).

Fineract speaks major units; ``dollars_to_cents`` is the one place they become cents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from vamos_env.clients.fineract import FineractClient
from vamos_env.clock import from_unix
from vamos_env.envs.energy.policy import (
    AccountFacts,
    Arrears,
    BillFacts,
    add_months,
    arrears,
    format_cents,
    format_date,
)
from vamos_env.envs.energy.tools.billing import Billing
from vamos_env.envs.energy.tools.refusal import ToolRefusal

LOAN_STATUS_ACTIVE = 300
BILL_HISTORY_MONTHS = 13


@dataclass(frozen=True, slots=True)
class VerifiedAccount:
    """The one account this call may act on, fixed by a successful verify_caller."""

    customer_id: str
    account_number: str
    fineract_client_id: int


def dollars_to_cents(value: Any) -> int:
    """A Fineract amount (JSON number in major units, e.g. 658.41) as integer cents, exactly."""
    if value is None:
        return 0
    # str() first: a float's shortest repr is the decimal Fineract sent.
    cents = Decimal(str(value)) * 100
    return int(cents.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def fineract_date(value: Any) -> date | None:
    """Fineract's ``[y, m, d]`` date (None when absent)."""
    if isinstance(value, list | tuple) and len(value) == 3:
        return date(int(value[0]), int(value[1]), int(value[2]))
    return None


def iso(d: date | None) -> str | None:
    return None if d is None else d.isoformat()


# --- bills ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bill:
    """One bill: the billing service's invoice (plain dict), its lines, and the policy facts."""

    invoice: dict[str, Any]
    lines: tuple[dict[str, Any], ...]
    facts: BillFacts

    @property
    def bill_id(self) -> str:
        return self.facts.bill_id

    @property
    def number(self) -> str | None:
        number = self.invoice.get("number")
        return None if number is None else str(number)

    @property
    def status(self) -> str:
        return self.facts.status

    @property
    def remaining_cents(self) -> int:
        return self.facts.remaining_cents

    def is_past_due(self, today: date) -> bool:
        return (
            self.facts.status in ("open", "uncollectible")
            and self.remaining_cents > 0
            and self.facts.due_date < today
        )

    @property
    def service_period(self) -> tuple[date, date] | None:
        """The service period spans the lines' periods (DOMAIN.md 3a), end exclusive."""
        if not self.facts.lines:
            return None
        return (
            min(line.period_start for line in self.facts.lines),
            max(line.period_end for line in self.facts.lines),
        )

    @property
    def paid_on(self) -> date | None:
        paid_at = (self.invoice.get("status_transitions") or {}).get("paid_at")
        return None if paid_at is None else from_unix(int(paid_at)).date()

    def summary(self, today: date) -> dict[str, Any]:
        """The bill's headline facts, as list_bills shows them."""
        period = self.service_period
        out: dict[str, Any] = {
            "bill_id": self.bill_id,
            "number": self.number,
            "bill_date": self.facts.bill_date.isoformat(),
            "status": self.status,
            "total_cents": self.facts.total_cents,
            "amount_remaining_cents": self.remaining_cents,
            "due_date": self.facts.due_date.isoformat(),
            "due_date_display": format_date(self.facts.due_date),
            "past_due": self.is_past_due(today),
            "service_period_start": iso(period[0]) if period else None,
            "service_period_end": iso(period[1]) if period else None,
        }
        if self.status == "paid":
            out["paid_on"] = iso(self.paid_on)
        arrangement_id = (self.invoice.get("metadata") or {}).get("arrangement_id")
        if arrangement_id:
            out["moved_to_arrangement_id"] = str(arrangement_id)
        return out


# --- arrangements ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArrangementInstallment:
    number: int
    due_date: date
    amount_due_cents: int
    paid_cents: int
    outstanding_cents: int

    @property
    def settled(self) -> bool:
        return self.outstanding_cents <= 0

    def overdue(self, today: date) -> bool:
        # Due today is not yet late (the same rule as bills).
        return not self.settled and self.due_date < today

    def as_result(self, today: date) -> dict[str, Any]:
        return {
            "number": self.number,
            "due_date": self.due_date.isoformat(),
            "due_date_display": format_date(self.due_date),
            "amount_due_cents": self.amount_due_cents,
            "paid_cents": self.paid_cents,
            "outstanding_cents": self.outstanding_cents,
            "settled": self.settled,
            "overdue": self.overdue(today),
        }


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A payment arrangement as the loan engine reports it, in cents."""

    loan_id: int
    status_id: int
    status: str
    original_cents: int
    outstanding_cents: int
    repaid_cents: int
    installments: tuple[ArrangementInstallment, ...]
    repayments: tuple[tuple[int, date, int], ...]  # (transaction id, date, cents)

    @property
    def active(self) -> bool:
        return self.status_id == LOAN_STATUS_ACTIVE

    @classmethod
    def from_loan(cls, loan: Mapping[str, Any]) -> Arrangement:
        status = loan.get("status") or {}
        summary = loan.get("summary") or {}
        periods = (loan.get("repaymentSchedule") or {}).get("periods") or []
        installments = []
        for row in periods:
            number = int(row.get("period") or 0)
            due = fineract_date(row.get("dueDate"))
            if number < 1 or due is None:
                continue  # period 0 is the disbursement row
            installments.append(
                ArrangementInstallment(
                    number=number,
                    due_date=due,
                    amount_due_cents=dollars_to_cents(row.get("totalDueForPeriod")),
                    paid_cents=dollars_to_cents(row.get("totalPaidForPeriod")),
                    outstanding_cents=dollars_to_cents(row.get("totalOutstandingForPeriod")),
                )
            )
        repayments = []
        for tx in loan.get("transactions") or []:
            kind = tx.get("type") or {}
            on = fineract_date(tx.get("date"))
            if kind.get("repayment") and not tx.get("manuallyReversed") and on is not None:
                repayments.append((int(tx.get("id") or 0), on, dollars_to_cents(tx.get("amount"))))
        principal = summary.get("principalDisbursed")
        return cls(
            loan_id=int(loan["id"]),
            status_id=int(status.get("id") or 0),
            status=str(status.get("value") or ""),
            original_cents=dollars_to_cents(
                principal if principal is not None else loan.get("principal")
            ),
            outstanding_cents=dollars_to_cents(summary.get("totalOutstanding")),
            repaid_cents=dollars_to_cents(summary.get("totalRepayment")),
            installments=tuple(installments),
            repayments=tuple(repayments),
        )

    def overdue(self, today: date) -> list[ArrangementInstallment]:
        return [i for i in self.installments if i.overdue(today)]

    def next_unsettled(self) -> ArrangementInstallment | None:
        """The oldest instalment not fully paid: the overdue one if any, else the next due."""
        return next((i for i in self.installments if not i.settled), None)

    def as_result(self, today: date) -> dict[str, Any]:
        overdue = self.overdue(today)
        unsettled = [i for i in self.installments if not i.settled]
        nxt = self.next_unsettled()
        overdue_cents = sum(i.outstanding_cents for i in overdue)
        if not self.active:
            say = f"The arrangement (number {self.loan_id}) is {self.status.lower()}, not active."
        elif nxt is None:
            say = "Every instalment of the arrangement is paid."
        else:
            parts = [
                f"The arrangement started at {format_cents(self.original_cents)}; "
                f"{format_cents(self.outstanding_cents)} is still outstanding over "
                f"{len(unsettled)} unpaid instalment{'s' if len(unsettled) != 1 else ''}."
            ]
            if overdue:
                parts.append(
                    f"{len(overdue)} instalment{'s are' if len(overdue) != 1 else ' is'} "
                    f"overdue, {format_cents(overdue_cents)} in all; the oldest, "
                    f"{format_cents(overdue[0].outstanding_cents)}, was due "
                    f"{format_date(overdue[0].due_date)}."
                )
            else:
                parts.append(
                    f"Nothing is overdue; the next instalment, "
                    f"{format_cents(nxt.outstanding_cents)}, is due {format_date(nxt.due_date)}."
                )
            say = " ".join(parts)
        return {
            "arrangement_id": str(self.loan_id),
            "status": self.status,
            "active": self.active,
            "original_amount_cents": self.original_cents,
            "outstanding_cents": self.outstanding_cents,
            "repaid_cents": self.repaid_cents,
            "installment_count": len(self.installments),
            "unsettled_count": len(unsettled),
            "overdue_count": len(overdue),
            "overdue_cents": overdue_cents,
            "next_installment": None if nxt is None else nxt.as_result(today),
            "installments": [i.as_result(today) for i in self.installments],
            "repayments": [
                {"transaction_id": str(tx_id), "date": on.isoformat(), "amount_cents": cents}
                for tx_id, on, cents in self.repayments
            ],
            "say": say,
        }


# --- the account ----------------------------------------------------------------------------


class AccountRecords:
    """Cached reads of one verified account through the service clients."""

    def __init__(
        self, billing: Billing, loans: FineractClient, account: VerifiedAccount, today: date
    ) -> None:
        self.billing = billing
        self.loans = loans
        self.account = account
        self.today = today
        self._customer: dict[str, Any] | None = None
        self._cards: list[dict[str, Any]] | None = None
        self._subscriptions: list[dict[str, Any]] | None = None
        self._bills: list[Bill] | None = None
        self._arrangement: tuple[Arrangement | None] | None = None

    # billing ---------------------------------------------------------------------------

    def customer(self) -> dict[str, Any]:
        if self._customer is None:
            self._customer = self.billing.get(f"/v1/customers/{self.account.customer_id}")
        return self._customer

    def metadata(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.customer().get("metadata") or {}).items()}

    def cards(self) -> list[dict[str, Any]]:
        if self._cards is None:
            self._cards = self.billing.list_all(
                f"/v1/customers/{self.account.customer_id}/payment_methods", type="card"
            )
        return self._cards

    def card(self, payment_method_id: str) -> dict[str, Any]:
        for card in self.cards():
            if card.get("id") == payment_method_id:
                return card
        raise ToolRefusal(
            "That payment method is not a card on file for this account. Use a "
            "payment_method_id from get_account; card numbers are never taken by phone."
        )

    def subscriptions(self) -> list[dict[str, Any]]:
        if self._subscriptions is None:
            self._subscriptions = self.billing.list_all(
                "/v1/subscriptions", customer=self.account.customer_id
            )
        return self._subscriptions

    def bills(self) -> list[Bill]:
        """Every bill of the account, newest first."""
        if self._bills is None:
            invoices = self.billing.list_all("/v1/invoices", customer=self.account.customer_id)
            bills = [self._bill(invoice) for invoice in invoices]
            # Newest first by creation, ties by number, whatever order the server used.
            bills.sort(key=lambda b: (b.facts.bill_date, b.number or ""), reverse=True)
            self._bills = bills
        return self._bills

    def _bill(self, invoice: dict[str, Any]) -> Bill:
        embedded = invoice.get("lines") or {}
        lines: list[dict[str, Any]] = list(embedded.get("data") or [])
        if embedded.get("has_more"):
            lines = self.billing.list_all(f"/v1/invoices/{invoice['id']}/lines")
        return Bill(invoice, tuple(lines), BillFacts.from_stripe_invoice(invoice, lines))

    def recent_bills(self) -> list[Bill]:
        """Bills of the last 13 months (by bill date), newest first; drafts left out."""
        since = add_months(self.today, -BILL_HISTORY_MONTHS)
        return [b for b in self.bills() if b.facts.bill_date >= since and b.status != "draft"]

    def bill(self, bill_id: str) -> Bill:
        """A bill of this account; any other id is "not found on this account"."""
        for bill in self.bills():
            if bill.bill_id == bill_id:
                return bill
        raise ToolRefusal(
            "No bill with that id on this account. Use a bill_id exactly as list_bills returns it."
        )

    def latest_bill(self) -> Bill | None:
        finalized = [b for b in self.bills() if b.status not in ("draft", "void")]
        return finalized[0] if finalized else None

    def arrears(self) -> Arrears:
        return arrears([b.facts for b in self.bills()], self.today)

    def past_due_bills(self) -> list[Bill]:
        return [b for b in self.bills() if b.is_past_due(self.today)]

    # loans ----------------------------------------------------------------------------

    def arrangement_id(self) -> int | None:
        raw = self.metadata().get("arrangement_id", "").strip()
        return int(raw) if raw.isdigit() else None

    def arrangement(self) -> Arrangement | None:
        """The arrangement named on the customer (active or not), None when there is none."""
        if self._arrangement is None:
            loan_id = self.arrangement_id()
            if loan_id is None:
                self._arrangement = (None,)
            else:
                loan = self.loans.get_loan(loan_id)
                self._arrangement = (Arrangement.from_loan(loan),)
        return self._arrangement[0]

    def active_arrangement(self) -> Arrangement | None:
        arrangement = self.arrangement()
        return arrangement if arrangement is not None and arrangement.active else None

    # policy ----------------------------------------------------------------------------

    def facts(self) -> AccountFacts:
        owed = self.arrears()
        return AccountFacts.from_customer_metadata(
            self.metadata(),
            past_due_cents=owed.past_due_cents,
            days_past_due=owed.days_past_due,
            open_balance_cents=owed.open_balance_cents,
            arrangement_active=self.active_arrangement() is not None,
        )


def card_summary(card: Mapping[str, Any]) -> dict[str, Any]:
    details = card.get("card") or {}
    return {
        "payment_method_id": card.get("id"),
        "brand": details.get("brand"),
        "last4": details.get("last4"),
        "exp_month": details.get("exp_month"),
        "exp_year": details.get("exp_year"),
    }


def premises(subscriptions: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for sub in subscriptions:
        meta = sub.get("metadata") or {}
        start = sub.get("start_date")
        out.append(
            {
                "premise_id": meta.get("premise_id"),
                "service_address": meta.get("service_address"),
                "meter_number": meta.get("meter_number"),
                "commodity": meta.get("commodity"),
                "rate_plan": meta.get("rate_plan"),
                "status": sub.get("status"),
                "service_start_date": None if start is None else iso(from_unix(int(start)).date()),
            }
        )
    return out
