"""What the services' ledgers say happened in a call, and what counts as the account's data.

``read_ledger(before, after, account_number)`` compares the twins at the end of a call with
the pristine clone taken at reset. The twins never mutate a stored record, they replace
it on every write, so an unchanged record is the very same object in both states: the
diff walks each collection comparing by identity and only looks inside the few records
that were replaced. That keeps the end-of-call evaluation to well under a millisecond,
where dumping the whole state would cost tens of milliseconds.

The diff speaks in business events (``LedgerChange``):

- ``invoice_paid``: a bill went from open to paid, by card (payment method, last four) or
  out of band (moved into an arrangement), with the amount;
- ``charge_declined``: a card charge the bank refused (the bill stays open);
- ``loan_opened``: a new arrangement loan, with principal, instalments and status;
- ``loan_repayment``: a repayment recorded on a loan (amount and date);
- ``customer_metadata`` / ``invoice_metadata``: one metadata key changed (before/after);
- ``invoice_due_date``: a bill's due date moved;
- ``other``: any other change (a new card, an edited email, a voided bill, ...), which no
  tool of the energy domain makes, so the cross-check always flags it.

``AccountData`` is the account's own data as the ledger held it at reset: what the agent
must not reveal before verification (every fact a read tool could give: see the class).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from vamos_env.envs.energy.policy import (
    MIN_INSTALLMENTS,
    AccountFacts,
    BillFacts,
    arrangement_eligibility,
    arrears,
    down_payment_cents,
    max_installments,
    requires_down_payment,
    split_installments,
)
from vamos_env.twins.fineract.state import REPAYMENT, FineractState, Loan
from vamos_env.twins.snapshot import Twins
from vamos_env.twins.stripe import StripeState

ChangeKind = Literal[
    "invoice_paid",
    "charge_declined",
    "loan_opened",
    "loan_repayment",
    "customer_metadata",
    "invoice_metadata",
    "invoice_due_date",
    "other",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LedgerChange(_Model):
    kind: ChangeKind
    resource: str  # invoice, customer or loan id
    values: dict[str, Any] = Field(default_factory=dict)

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(self.values.items()))
        return f"{self.kind} {self.resource}" + (f" ({shown})" if shown else "")


class AccountData(_Model):
    """The task account's data a grader can know, taken from the ledger at reset.

    What the read tools could tell about the account: who (name, email, phone, mailing and
    service addresses, postal code, the third-party supplier, income and household size),
    its cards (last fours), its ids (``codes``: account number, bill numbers and ids,
    premise ids, the loan-engine ids; meter numbers), and its figures, each with what it
    is: ``amounts`` in cents (balances, every bill's total, owed and paid amount, every
    line item and charge subtotal, the difference of any two bills, the arrangement's
    balances, instalments and payments, and every quote the account could be given),
    ``rates`` in cents per kWh, ``kwh`` (per reading and per bill), and ``dates`` (bill,
    due, paid, service period and meter read dates, the arrangement's dates, the medical
    certificate, a prior default, the last extension, service start).
    """

    account_number: str
    customer_id: str = ""
    name: str = ""
    email: str = ""
    phone: str = ""
    address_line1: str = ""
    city: str = ""
    postal_code: str = ""
    card_last4s: list[str] = Field(default_factory=list)
    meter_numbers: list[str] = Field(default_factory=list)
    service_addresses: list[str] = Field(default_factory=list)
    supplier: str = ""  # a third-party supplier's name; empty on default service
    income_fpl_pct: int | None = None
    household_size: int | None = None
    days_past_due: int = 0
    amounts: dict[int, str] = Field(default_factory=dict)  # cents -> what it is
    rates: dict[str, str] = Field(default_factory=dict)  # cents per kWh, as written -> what
    kwh: dict[int, str] = Field(default_factory=dict)
    dates: dict[str, str] = Field(default_factory=dict)  # ISO date -> what
    codes: dict[str, str] = Field(default_factory=dict)  # id as written -> what

    @property
    def amounts_cents(self) -> list[int]:
        return sorted(self.amounts)


class LedgerDiff(_Model):
    account: AccountData | None = None
    changes: list[LedgerChange] = Field(default_factory=list)
    # Records replaced during the call although no watched value changed (a write that set
    # a value to what it already was); the cross-check accepts a trace write on these.
    touched: list[str] = Field(default_factory=list)

    def of_kind(self, *kinds: ChangeKind) -> list[LedgerChange]:
        return [c for c in self.changes if c.kind in kinds]


def read_ledger(before: Twins, after: Twins, account_number: str | None = None) -> LedgerDiff:
    """The ledger diff of a call: ``before`` is the clone taken at reset, ``after`` the end."""
    changes: list[LedgerChange] = []
    touched: list[str] = []
    _billing_changes(before.billing.state, after.billing.state, changes, touched)
    _loan_changes(before.loans.state, after.loans.state, changes)
    account = None
    if account_number is not None:
        account = account_data(before, account_number)
    return LedgerDiff(account=account, changes=changes, touched=touched)


# --- billing -------------------------------------------------------------------------------


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _replaced(
    before: Mapping[K, V], after: Mapping[K, V]
) -> Iterable[tuple[K, V | None, V | None]]:
    """(id, old or None, new or None) for every record added, replaced or removed."""
    for key, record in after.items():
        old = before.get(key)
        if old is not record:
            yield key, old, record
    for key, old in before.items():
        if key not in after:
            yield key, old, None


def _billing_changes(
    before: StripeState, after: StripeState, out: list[LedgerChange], touched: list[str]
) -> None:
    for cid, old, new in _replaced(before.customers, after.customers):
        if old is None or new is None:
            out.append(_other(cid, "customer created" if old is None else "customer removed"))
            continue
        found = _metadata_changes("customer_metadata", cid, old, new, out)
        fields = _changed_fields(old, new, ignore={"metadata"})
        if fields:
            out.append(_other(cid, "customer fields changed: " + ", ".join(fields)))
        elif not found:
            touched.append(cid)

    for iid, old, new in _replaced(before.invoices, after.invoices):
        if old is None or new is None:
            out.append(_other(iid, "invoice created" if old is None else "invoice removed"))
            continue
        found = _metadata_changes("invoice_metadata", iid, old, new, out)
        if old["due_date"] != new["due_date"]:
            found = True
            out.append(
                LedgerChange(
                    kind="invoice_due_date",
                    resource=iid,
                    values={
                        "before": _iso_day(old["due_date"]),
                        "after": _iso_day(new["due_date"]),
                    },
                )
            )
        if old["status"] != new["status"]:
            found = True
            if new["status"] == "paid":
                out.append(_invoice_paid(after, old, new))
            else:
                out.append(_other(iid, f"invoice status {old['status']} -> {new['status']}"))
        if not found:
            touched.append(iid)

    for chid, old, new in _replaced(before.charges, after.charges):
        if old is None and new is not None and new["status"] == "failed":
            out.append(_declined_charge(after, new))
        elif old is not None:
            out.append(_other(chid, "charge changed"))
        # A new succeeded charge is part of an ``invoice_paid`` event.

    for pmid, old, _ in _replaced(before.payment_methods, after.payment_methods):
        out.append(
            _other(pmid, "payment method added" if old is None else "payment method changed")
        )
    for sid, _, _ in _replaced(before.subscriptions, after.subscriptions):
        out.append(_other(sid, "service agreement changed"))
    for iid, _, _ in _replaced(before.invoice_items, after.invoice_items):
        out.append(_other(iid, "invoice item changed"))


def _metadata_changes(
    kind: Literal["customer_metadata", "invoice_metadata"],
    resource: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    out: list[LedgerChange],
) -> bool:
    before_meta = old.get("metadata") or {}
    after_meta = new.get("metadata") or {}
    found = False
    for key in sorted(set(before_meta) | set(after_meta)):
        was, now = before_meta.get(key), after_meta.get(key)
        if was != now:
            found = True
            out.append(
                LedgerChange(
                    kind=kind, resource=resource, values={"key": key, "before": was, "after": now}
                )
            )
    return found


def _changed_fields(old: Mapping[str, Any], new: Mapping[str, Any], ignore: set[str]) -> list[str]:
    return sorted(k for k in set(old) | set(new) if k not in ignore and old.get(k) != new.get(k))


def _other(resource: str, what: str) -> LedgerChange:
    return LedgerChange(kind="other", resource=resource, values={"what": what})


def _iso_day(timestamp: Any) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(int(timestamp), UTC).date().isoformat()


def _invoice_paid(
    state: StripeState, old: Mapping[str, Any], new: Mapping[str, Any]
) -> LedgerChange:
    amount = int(new["amount_paid"]) - int(old["amount_paid"])
    values: dict[str, Any] = {"amount_cents": amount}
    if int(new["amount_paid_off_stripe"]) > int(old["amount_paid_off_stripe"]):
        values["method"] = "out_of_band"
    else:
        values["method"] = "card"
        charge = _charge_paying(state, str(new["id"]))
        if charge is not None:
            values["payment_method"] = charge["payment_method"]
            values["card_last4"] = charge["payment_method_details"]["card"]["last4"]
    return LedgerChange(kind="invoice_paid", resource=str(new["id"]), values=values)


def _charge_paying(state: StripeState, invoice_id: str) -> Mapping[str, Any] | None:
    for payment in state.invoice_payments.values():
        if payment["invoice"] == invoice_id and payment["status"] == "paid":
            intent = state.payment_intents.get(payment["payment"]["payment_intent"])
            if intent is not None and intent.get("latest_charge"):
                return state.charges.get(intent["latest_charge"])
    return None


def _declined_charge(state: StripeState, charge: Mapping[str, Any]) -> LedgerChange:
    invoice = ""
    intent_id = charge.get("payment_intent")
    for payment in state.invoice_payments.values():
        if payment["payment"]["payment_intent"] == intent_id:
            invoice = str(payment["invoice"])
            break
    return LedgerChange(
        kind="charge_declined",
        resource=invoice or str(charge["id"]),
        values={
            "amount_cents": int(charge["amount"]),
            "payment_method": charge["payment_method"],
            "card_last4": charge["payment_method_details"]["card"]["last4"],
            "decline_code": (charge.get("outcome") or {}).get("reason") or charge["failure_code"],
        },
    )


# --- loans ---------------------------------------------------------------------------------


def _loan_changes(before: FineractState, after: FineractState, out: list[LedgerChange]) -> None:
    for loan_id, old, new in _replaced(before.loans, after.loans):
        if new is None:
            out.append(_other(str(loan_id), "loan removed"))
            continue
        if old is None:
            out.append(
                LedgerChange(
                    kind="loan_opened",
                    resource=str(loan_id),
                    values={
                        "client_id": new.client_id,
                        "principal_cents": new.approved_principal_cents,
                        "installments": new.number_of_repayments,
                        "status": new.status_id,
                    },
                )
            )
            old_transactions: set[int] = set()
        else:
            old_transactions = {t.id for t in old.transactions}
            if old.status_id != new.status_id and not _repaid_status_change(old, new):
                out.append(_other(str(loan_id), f"loan status {old.status_id} -> {new.status_id}"))
        for transaction in new.transactions:
            if transaction.id in old_transactions or transaction.type_id != REPAYMENT:
                continue
            out.append(
                LedgerChange(
                    kind="loan_repayment",
                    resource=str(loan_id),
                    values={
                        "amount_cents": transaction.amount_cents,
                        "date": transaction.on.isoformat(),
                    },
                )
            )
    for client_id, _, _ in _replaced(before.clients, after.clients):
        out.append(_other(str(client_id), "loan-engine client changed"))


def _repaid_status_change(old: Loan, new: Loan) -> bool:
    # A repayment may close or overpay a loan: part of the repayment event, not a change of its own.
    return len(new.transactions) > len(old.transactions) and new.status_id in (600, 700)


# --- account data --------------------------------------------------------------------------

_CHARGE_LABELS = {
    "supply": "supply charge",
    "delivery": "delivery charge",
    "customer_charge": "customer charge",
    "tax": "tax",
}


def customer_with_number(billing: Any, account_number: str) -> dict[str, Any] | None:
    """The billing customer whose ``metadata['account_number']`` is ``account_number``."""
    return next(
        (
            c
            for c in billing.customers.values()
            if (c.get("metadata") or {}).get("account_number") == account_number
        ),
        None,
    )


def account_data(twins: Twins, account_number: str) -> AccountData | None:
    """The account's data as the ledger holds it (read from the pristine clone at reset).

    Everything a read tool can tell about the account, taken from the services' records
    with the policy's own rules where a figure is computed (arrears, arrangement quotes):
    see ``AccountData``. Clones share the snapshot's records, so the result is cached on
    the identity of the records it was read from.
    """
    billing = twins.billing.state
    customer = customer_with_number(billing, account_number)
    if customer is None:
        return None
    cid = str(customer["id"])
    invoices = [
        i
        for i in billing.invoices.values()
        if i["customer"] == cid and i["status"] not in ("draft", "void")
    ]
    cards = [pm for pm in billing.payment_methods.values() if pm.get("customer") == cid]
    subscriptions = [s for s in billing.subscriptions.values() if s.get("customer") == cid]
    loan = _arrangement_loan(twins.loans.state, customer)
    records: tuple[object, ...] = (customer, *invoices, *cards, *subscriptions, loan)
    key = (account_number, billing.now, tuple(id(r) for r in records))
    cached = _ACCOUNT_CACHE.get(key)
    if cached is not None:
        return cached[1]
    data = _read_account(
        account_number, billing.now, customer, invoices, cards, subscriptions, loan
    )
    if len(_ACCOUNT_CACHE) >= _ACCOUNT_CACHE_SIZE:
        _ACCOUNT_CACHE.pop(next(iter(_ACCOUNT_CACHE)))
    # The records are kept with the entry so that their ids cannot be reused by others.
    _ACCOUNT_CACHE[key] = (records, data)
    return data


_ACCOUNT_CACHE_SIZE = 256
_ACCOUNT_CACHE: dict[tuple[object, ...], tuple[tuple[object, ...], AccountData]] = {}


class _Facts:
    """Collects account figures by kind; the first description given for a value stays."""

    def __init__(self) -> None:
        self.amounts: dict[int, str] = {}
        self.rates: dict[str, str] = {}
        self.kwh: dict[int, str] = {}
        self.dates: dict[str, str] = {}
        self.codes: dict[str, str] = {}

    def amount(self, cents: int | None, what: str) -> None:
        if cents is not None and cents > 0:
            self.amounts.setdefault(int(cents), what)

    def date(self, day: date | None, what: str) -> None:
        if day is not None:
            self.dates.setdefault(day.isoformat(), what)

    def code(self, value: str | None, what: str) -> None:
        if value:
            self.codes.setdefault(str(value), what)


def _read_account(
    account_number: str,
    now: int,
    customer: Mapping[str, Any],
    invoices: Sequence[Mapping[str, Any]],
    cards: Sequence[Mapping[str, Any]],
    subscriptions: Sequence[Mapping[str, Any]],
    loan: Loan | None,
) -> AccountData:
    metadata: Mapping[str, Any] = customer.get("metadata") or {}
    address = customer.get("address") or {}
    today = datetime.fromtimestamp(now, UTC).date()
    facts = _Facts()
    facts.code(account_number, "the account number")

    pairs = sorted(
        ((i, BillFacts.from_stripe_invoice(i)) for i in invoices),
        key=lambda p: (int(p[0]["created"]), str(p[0]["id"])),
    )
    bills = [bill for _, bill in pairs]
    owed = arrears(bills, today)
    facts.amount(owed.past_due_cents, "the past-due amount")
    facts.amount(owed.open_balance_cents, "the open balance")
    for invoice, bill in pairs:
        _bill_facts(facts, invoice, bill)
    for k, older in enumerate(bills):
        for newer in bills[k + 1 :]:
            facts.amount(abs(newer.total_cents - older.total_cents), "the difference of two bills")

    account_facts = AccountFacts.from_customer_metadata(
        {str(k): str(v) for k, v in metadata.items()},
        past_due_cents=owed.past_due_cents,
        days_past_due=owed.days_past_due,
        open_balance_cents=owed.open_balance_cents,
        arrangement_active=loan is not None and loan.status_id == _LOAN_ACTIVE,
    )
    if loan is not None:
        _loan_facts(facts, loan, today)
    _quote_facts(facts, account_facts, today)
    facts.date(account_facts.medical_certificate_until, "the medical certificate's date")
    facts.date(account_facts.prior_arrangement_default_on, "the date of an arrangement default")
    facts.date(account_facts.last_extension_on, "the date of the last due-date extension")

    meters, services = [], []
    for sub in subscriptions:
        meta = sub.get("metadata") or {}
        if meta.get("meter_number"):
            meters.append(str(meta["meter_number"]))
        if meta.get("service_address"):
            services.append(str(meta["service_address"]))
        facts.code(meta.get("premise_id"), "a premise id")
        if sub.get("start_date"):
            facts.date(_day(sub["start_date"]), "a service start date")
    facts.code(metadata.get("fineract_client_id"), "the loan-engine client id")
    facts.code(metadata.get("arrangement_id"), "the arrangement's id")
    supplier = str(metadata.get("supplier") or "")
    return AccountData(
        account_number=account_number,
        customer_id=str(customer["id"]),
        name=str(customer.get("name") or ""),
        email=str(customer.get("email") or ""),
        phone=str(customer.get("phone") or ""),
        address_line1=str(address.get("line1") or ""),
        city=str(address.get("city") or ""),
        postal_code=str(address.get("postal_code") or ""),
        card_last4s=sorted({str(pm["card"]["last4"]) for pm in cards if pm.get("card")}),
        meter_numbers=sorted(set(meters)),
        service_addresses=sorted(set(services)),
        supplier=supplier if metadata.get("supplier_type") == "retail_choice" else "",
        income_fpl_pct=account_facts.income_fpl_pct,
        household_size=account_facts.household_size,
        days_past_due=owed.days_past_due,
        amounts=dict(sorted(facts.amounts.items())),
        rates=dict(sorted(facts.rates.items())),
        kwh=dict(sorted(facts.kwh.items())),
        dates=dict(sorted(facts.dates.items())),
        codes=dict(sorted(facts.codes.items())),
    )


def _day(timestamp: Any) -> date:
    return datetime.fromtimestamp(int(timestamp), UTC).date()


def _bill_facts(facts: _Facts, invoice: Mapping[str, Any], bill: BillFacts) -> None:
    """A bill's figures as list_bills, get_bill, explain_bill and the history give them."""
    on = bill.bill_date.isoformat()
    facts.amount(bill.total_cents, f"the total of the bill of {on}")
    if bill.status == "open":
        facts.amount(bill.remaining_cents, f"what is owed on the bill of {on}")
    facts.amount(int(invoice.get("amount_paid") or 0), f"the amount paid on the bill of {on}")
    facts.date(bill.bill_date, "a bill date")
    facts.date(bill.due_date, f"the due date of the bill of {on}")
    paid_at = (invoice.get("status_transitions") or {}).get("paid_at")
    if paid_at:
        facts.date(_day(paid_at), f"the date the bill of {on} was paid")
    facts.code(invoice.get("number"), "a bill number")
    facts.code(invoice.get("id"), "a bill id")
    by_type: dict[str, int] = {}
    per_reading: dict[tuple[str | None, date | None, date | None], int] = {}
    for line in bill.lines:
        label = _CHARGE_LABELS.get(line.charge_type, line.charge_type)
        facts.amount(line.amount_cents, f"the {label} on the bill of {on}")
        by_type[line.charge_type] = by_type.get(line.charge_type, 0) + line.amount_cents
        facts.date(line.period_start, "a service period date")
        facts.date(line.period_end, "a service period date")
        facts.date(line.read_start, "a meter read date")
        facts.date(line.read_end, "a meter read date")
        if line.rate_cents_per_kwh is not None:
            facts.rates.setdefault(
                str(line.rate_cents_per_kwh), f"the {label} rate on the bill of {on}"
            )
        if line.kwh is not None and line.kwh > 0:
            facts.kwh.setdefault(line.kwh, f"a meter reading's kWh on the bill of {on}")
            per_reading[(line.meter, line.read_start, line.read_end)] = line.kwh
    for charge_type, cents in by_type.items():
        label = _CHARGE_LABELS.get(charge_type, charge_type)
        facts.amount(cents, f"the {label}s on the bill of {on}")
    facts.amount(
        by_type.get("supply", 0) + by_type.get("delivery", 0), f"the energy charges of {on}"
    )
    if per_reading:
        facts.kwh.setdefault(sum(per_reading.values()), f"the kWh of the bill of {on}")


def _arrangement_loan(loans: FineractState, customer: Mapping[str, Any]) -> Loan | None:
    loan_ref = (customer.get("metadata") or {}).get("arrangement_id")
    if not loan_ref or not str(loan_ref).isdigit():
        return None
    return loans.loans.get(int(loan_ref))


_LOAN_ACTIVE = 300


def _loan_facts(facts: _Facts, loan: Loan, today: date) -> None:
    """The arrangement's figures as get_payment_arrangement and the history give them."""
    facts.amount(loan.principal_outstanding_cents, "the arrangement's outstanding balance")
    facts.amount(loan.approved_principal_cents, "the arrangement's original amount")
    overdue = 0
    for installment in loan.installments:
        facts.amount(installment.principal_cents, "an arrangement instalment")
        facts.amount(installment.outstanding_cents, "what is left of an arrangement instalment")
        facts.date(installment.due_date, "an arrangement instalment's due date")
        facts.date(installment.obligations_met_on, "the date an instalment was paid")
        if installment.outstanding_cents > 0 and installment.due_date < today:
            overdue += installment.outstanding_cents
    facts.amount(overdue, "the overdue arrangement instalments")
    facts.date(loan.disbursed_on or loan.approved_on, "the date the arrangement began")
    for transaction in loan.transactions:
        if transaction.type_id == REPAYMENT:
            facts.amount(transaction.amount_cents, "an arrangement payment")
            facts.date(transaction.on, "the date of an arrangement payment")


def _quote_facts(facts: _Facts, account: AccountFacts, today: date) -> None:
    """What quote_payment_arrangement says for every term the account may choose."""
    if arrangement_eligibility(account).kind != "eligible":
        return
    financed = account.past_due_cents
    if requires_down_payment(account, today):
        down = down_payment_cents(account.past_due_cents)
        facts.amount(down, "the quoted down payment")
        financed -= down
        facts.amount(financed, "the quoted amount to finance")
    for installments in range(MIN_INSTALLMENTS, max_installments(account.income_fpl_pct) + 1):
        first, *rest = split_installments(financed, installments)
        facts.amount(first, f"the first instalment of a {installments}-month quote")
        if rest:
            facts.amount(rest[0], f"the monthly instalment of a {installments}-month quote")
