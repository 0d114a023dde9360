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
must not reveal before verification (name, email, phone, addresses, postal code, card
last fours, meter numbers, bill amounts, balances and arrangement figures).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

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
    """The task account's data a grader can know, taken from the ledger at reset."""

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
    # Bill totals and remaining amounts, balances (open, past due) and arrangement figures.
    amounts_cents: list[int] = Field(default_factory=list)


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


def account_data(twins: Twins, account_number: str) -> AccountData | None:
    """The account's data as the ledger holds it (read from the pristine clone at reset)."""
    billing = twins.billing.state
    customer = next(
        (
            c
            for c in billing.customers.values()
            if (c.get("metadata") or {}).get("account_number") == account_number
        ),
        None,
    )
    if customer is None:
        return None
    cid = str(customer["id"])
    address = customer.get("address") or {}
    cards = sorted(
        {
            str(pm["card"]["last4"])
            for pm in billing.payment_methods.values()
            if pm.get("customer") == cid and pm.get("card")
        }
    )
    amounts: set[int] = set()
    open_total = past_due = 0
    today = datetime.fromtimestamp(billing.now, UTC).date()
    for invoice in billing.invoices.values():
        if invoice["customer"] != cid or invoice["status"] in ("draft", "void"):
            continue
        amounts.add(int(invoice["total"]))
        remaining = int(invoice["amount_remaining"])
        if invoice["status"] == "open" and remaining > 0:
            amounts.add(remaining)
            open_total += remaining
            due = invoice.get("due_date")
            if due is not None and datetime.fromtimestamp(int(due), UTC).date() < today:
                past_due += remaining
    amounts.update(a for a in (open_total, past_due) if a > 0)
    amounts.update(_arrangement_amounts(twins.loans.state, customer))
    meters, services = [], []
    for sub in billing.subscriptions.values():
        if sub.get("customer") == cid:
            meta = sub.get("metadata") or {}
            if meta.get("meter_number"):
                meters.append(str(meta["meter_number"]))
            if meta.get("service_address"):
                services.append(str(meta["service_address"]))
    return AccountData(
        account_number=account_number,
        customer_id=cid,
        name=str(customer.get("name") or ""),
        email=str(customer.get("email") or ""),
        phone=str(customer.get("phone") or ""),
        address_line1=str(address.get("line1") or ""),
        city=str(address.get("city") or ""),
        postal_code=str(address.get("postal_code") or ""),
        card_last4s=cards,
        meter_numbers=sorted(set(meters)),
        service_addresses=sorted(set(services)),
        amounts_cents=sorted(a for a in amounts if a > 0),
    )


def _arrangement_amounts(loans: FineractState, customer: Mapping[str, Any]) -> set[int]:
    loan_ref = (customer.get("metadata") or {}).get("arrangement_id")
    if not loan_ref or not str(loan_ref).isdigit():
        return set()
    loan = loans.loans.get(int(loan_ref))
    if loan is None:
        return set()
    out = {loan.approved_principal_cents, loan.principal_outstanding_cents}
    out.update(i.principal_cents for i in loan.installments)
    out.update(i.outstanding_cents for i in loan.installments if i.outstanding_cents > 0)
    return out
