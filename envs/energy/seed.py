"""Lay the energy world into the two services through their public APIs, and check it.

``seed_world`` speaks only through the clients (the official Stripe SDK and our
Fineract client), following the data mapping of DOMAIN.md section 3a, so the
same code seeds the in-process twins, ``vamos twins serve`` or real test-mode
services. History is written the way Stripe allows it: each customer lives on
its own test clock, which is advanced to each bill date before the bill is
created and to each payment date before the bill is paid, and finally to the
frozen instant. ``verify_world`` reads everything back through the same
clients and raises ``WorldMismatch`` naming the account, the fact, what the
manifest expected and what the services hold.

``default_snapshot()`` builds the seeded, verified, frozen snapshot once per
process; every call clones it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from typing import Any

from vamos_env import clock
from vamos_env.clients.services import ServiceClients
from vamos_env.envs.energy.world import Account, Bill, Manifest, Premise, default_manifest
from vamos_env.twins.snapshot import Snapshot

PRODUCT_NAME = "Residential electric service"
LOAN_PRODUCT_NAME = "Payment Arrangement"
LOAN_PRODUCT_SHORT_NAME = "PARR"
# Events of the seeded history happen at midday UTC, so that a date never slips a day in
# any United States time zone when a client renders it.
_EVENT_HOUR = 12


class WorldMismatch(RuntimeError):
    """The services do not hold what the manifest says."""


@dataclass(slots=True)
class SeededAccount:
    account_number: str
    customer_id: str
    client_id: int
    loan_id: int | None
    payment_methods: dict[str, str] = field(default_factory=dict)  # test token -> pm id
    invoices: dict[int, str] = field(default_factory=dict)  # bill number_suffix -> invoice id
    test_clock: str = ""


@dataclass(slots=True)
class SeedReport:
    manifest: Manifest
    accounts: dict[str, SeededAccount]
    loan_product_id: int
    api_calls: int = 0
    seconds: float = 0.0


def _at(d: date) -> int:
    return int(datetime(d.year, d.month, d.day, _EVENT_HOUR, tzinfo=UTC).timestamp())


def _metadata(account: Account, client_id: int, loan_id: int | None) -> dict[str, str]:
    meta = {
        "account_number": account.account_number,
        "paperless": "true" if account.paperless else "false",
        "supplier": account.supplier,
        "supplier_type": account.supplier_type,
        "household_size": str(account.household_size),
        "fineract_client_id": str(client_id),
    }
    optional = {
        "income_fpl_pct": account.income_fpl_pct,
        "medical_certificate_until": account.medical_certificate_until,
        "prior_arrangement_default_on": account.prior_arrangement_default_on,
        "last_extension_on": account.last_extension_on,
        "arrangement_id": loan_id,
    }
    # Absent keys mean "none/unknown", as the published mapping reads them.
    meta.update(
        {
            k: str(v) if not isinstance(v, date) else v.isoformat()
            for k, v in optional.items()
            if v is not None
        }
    )
    return meta


class _Seeder:
    def __init__(self, clients: ServiceClients) -> None:
        self.stripe = clients.stripe
        self.fineract = clients.fineract
        self.calls = 0

    def _s(self, result: Any) -> Any:
        self.calls += 1
        return result

    def loan_product(self) -> int:
        for product in self._s(self.fineract.list_loan_products()):
            if product.get("name") == LOAN_PRODUCT_NAME:
                return int(product["id"])
        return int(
            self._s(
                self.fineract.create_loan_product(
                    name=LOAN_PRODUCT_NAME, short_name=LOAN_PRODUCT_SHORT_NAME
                )
            )
        )

    def service_product(self) -> str:
        product = self._s(
            self.stripe.v1.products.create(
                params={"name": PRODUCT_NAME, "metadata": {"commodity": "electric"}}
            )
        )
        return str(product.id)

    def account(self, account: Account, loan_product_id: int, product_id: str) -> SeededAccount:
        client_id, loan_id = self._loans(account, loan_product_id)
        first_event = min(
            [account.bills[0].period_start] + [p.service_start_date for p in account.premises]
        )
        test_clock = self._s(
            self.stripe.v1.test_helpers.test_clocks.create(
                params={"frozen_time": _at(first_event), "name": account.account_number}
            )
        )
        address = account.mailing_address
        customer = self._s(
            self.stripe.v1.customers.create(
                params={
                    "name": account.full_name,
                    "email": account.email,
                    "phone": account.phone,
                    "address": {
                        "line1": address.line1,
                        "city": address.city,
                        "state": address.state,
                        "postal_code": address.postal_code,
                        "country": "US",
                    },
                    "invoice_prefix": account.invoice_prefix,
                    "metadata": _metadata(account, client_id, loan_id),
                    "test_clock": test_clock.id,
                }
            )
        )
        seeded = SeededAccount(
            account.account_number, customer.id, client_id, loan_id, test_clock=test_clock.id
        )
        for card in account.cards:
            pm = self._s(
                self.stripe.v1.payment_methods.attach(
                    card.stripe_test_token, params={"customer": customer.id}
                )
            )
            seeded.payment_methods[card.stripe_test_token] = pm.id
        # History in time order: a service agreement starts on its premise's start date, a
        # bill is created on its bill date and paid on its paid date. Stripe only lets a
        # test clock move forward, so every write waits for the clock to reach its day.
        events: list[tuple[date, int, int, Premise | Bill]] = []
        for index, premise in enumerate(account.premises):
            events.append((premise.service_start_date, 0, index, premise))
        for bill in account.bills:
            events.append((bill.bill_date, 1, bill.number_suffix, bill))
            if bill.paid_on is not None:
                events.append((bill.paid_on, 2, bill.number_suffix, bill))
        clock_time = _at(first_event)
        for day, kind, _, item in sorted(events, key=lambda e: e[:3]):
            clock_time = self._advance(test_clock.id, clock_time, _at(day))
            if isinstance(item, Premise):
                self._service_agreement(customer.id, item, product_id)
            elif kind == 1:
                seeded.invoices[item.number_suffix] = self._bill(customer.id, item)
            else:
                self._pay(seeded, item)
        self._advance(test_clock.id, clock_time, clock.NOW_UNIX)
        return seeded

    def _service_agreement(self, customer_id: str, premise: Premise, product_id: str) -> None:
        """One subscription per premise: the service agreement, carrying the premise's facts."""
        self._s(
            self.stripe.v1.subscriptions.create(
                params={
                    "customer": customer_id,
                    "collection_method": "send_invoice",
                    "days_until_due": 21,
                    "items": [
                        {
                            "price_data": {
                                "currency": "usd",
                                "product": product_id,
                                "unit_amount": 0,
                                "recurring": {"interval": "month"},
                            }
                        }
                    ],
                    "metadata": {
                        "premise_id": premise.premise_id,
                        "service_address": premise.service_address,
                        "meter_number": premise.meter_number,
                        "commodity": premise.commodity,
                        "rate_plan": premise.rate_plan,
                    },
                }
            )
        )

    def _advance(self, clock_id: str, current: int, target: int) -> int:
        if target <= current:
            return current
        advanced = self._s(
            self.stripe.v1.test_helpers.test_clocks.advance(
                clock_id, params={"frozen_time": target}
            )
        )
        # Real Stripe advances asynchronously; wait until the clock says it is ready.
        while getattr(advanced, "status", "ready") != "ready":
            time.sleep(1)
            advanced = self._s(self.stripe.v1.test_helpers.test_clocks.retrieve(clock_id))
        return target

    def _bill(self, customer_id: str, bill: Bill) -> str:
        for line in bill.lines:
            meta = {"charge_type": line.charge_type, "premise_id": line.premise_id}
            if line.charge_type in ("supply", "delivery"):
                meta["meter_number"] = line.meter_number
            if line.kwh is not None:
                meta["kwh"] = str(line.kwh)
            if line.rate_cents_per_kwh is not None:
                meta["rate_cents_per_kwh"] = str(line.rate_cents_per_kwh)
            if line.read_start is not None and line.read_end is not None:
                meta["read_start"] = line.read_start.isoformat()
                meta["read_end"] = line.read_end.isoformat()
            if line.read_type is not None:
                meta["read_type"] = line.read_type
            self._s(
                self.stripe.v1.invoice_items.create(
                    params={
                        "customer": customer_id,
                        "amount": line.amount_cents,
                        "currency": "usd",
                        "description": line.description,
                        "period": {"start": _at(line.period_start), "end": _at(line.period_end)},
                        "metadata": meta,
                    }
                )
            )
        invoice = self._s(
            self.stripe.v1.invoices.create(
                params={
                    "customer": customer_id,
                    "collection_method": "send_invoice",
                    "due_date": _at(bill.due_date),
                    "auto_advance": False,
                    "pending_invoice_items_behavior": "include",
                    "description": f"Electric service {bill.period_start:%B %d} to "
                    f"{bill.period_end:%B %d, %Y}",
                }
            )
        )
        self._s(self.stripe.v1.invoices.finalize_invoice(invoice.id))
        return str(invoice.id)

    def _pay(self, seeded: SeededAccount, bill: Bill) -> None:
        invoice_id = seeded.invoices[bill.number_suffix]
        if bill.paid_with is None:
            self._s(self.stripe.v1.invoices.pay(invoice_id, params={"paid_out_of_band": True}))
        else:
            pm = seeded.payment_methods[bill.paid_with]
            self._s(self.stripe.v1.invoices.pay(invoice_id, params={"payment_method": pm}))

    def _loans(self, account: Account, loan_product_id: int) -> tuple[int, int | None]:
        client_id = self._s(
            self.fineract.create_client(
                firstname=account.first_name,
                lastname=" ".join(p for p in (account.middle_name, account.last_name) if p),
                external_id=account.account_number,
                activation_date=account.client_activation_date,
            )
        )
        plan = account.existing_arrangement
        if plan is None:
            return int(client_id), None
        loan_id = self._s(
            self.fineract.submit_loan(
                client_id=client_id,
                product_id=loan_product_id,
                principal_cents=plan.principal_cents,
                installments=plan.installments,
                submitted_on=plan.submitted_on,
                expected_disbursement_on=plan.disbursed_on,
                first_repayment_on=plan.first_due_on,
            )
        )
        self._s(self.fineract.approve_loan(loan_id, on=plan.approved_on))
        self._s(self.fineract.disburse_loan(loan_id, on=plan.disbursed_on))
        for repayment in plan.repayments:
            self._s(
                self.fineract.make_repayment(
                    loan_id, amount_cents=repayment.amount_cents, on=repayment.on
                )
            )
        return int(client_id), int(loan_id)


def seed_world(clients: ServiceClients, manifest: Manifest | None = None) -> SeedReport:
    """Create every account of ``manifest`` in both services, through their APIs only."""
    manifest = manifest or default_manifest()
    started = time.perf_counter()
    seeder = _Seeder(clients)
    business_date = seeder._s(clients.fineract.get_business_date())
    if business_date != clock.TODAY:
        seeder._s(clients.fineract.set_business_date(clock.TODAY))
    loan_product_id = seeder.loan_product()
    product_id = seeder.service_product()
    accounts = {
        a.account_number: seeder.account(a, loan_product_id, product_id) for a in manifest.accounts
    }
    return SeedReport(
        manifest, accounts, loan_product_id, seeder.calls, time.perf_counter() - started
    )


def _metadata_of(obj: Any) -> dict[str, str]:
    meta = getattr(obj, "metadata", None)
    return dict(meta.to_dict()) if meta is not None else {}


def _cents(value: Any) -> int:
    return int((Decimal(str(value)) * 100).to_integral_value())


def verify_world(clients: ServiceClients, report: SeedReport) -> None:
    """Read the world back through the clients; raise ``WorldMismatch`` on any difference."""
    problems: list[str] = []

    def expect(account: str, fact: str, expected: Any, actual: Any) -> None:
        if expected != actual:
            problems.append(f"{account}: {fact}: expected {expected!r}, got {actual!r}")

    today = clock.TODAY
    for account in report.manifest.accounts:
        number = account.account_number
        found = clients.stripe.v1.customers.search(
            params={"query": f"metadata['account_number']:'{number}'"}
        ).data
        expect(number, "billing customers with this account number", 1, len(found))
        if not found:
            continue
        customer = found[0]
        meta = _metadata_of(customer)
        expect(number, "customer name", account.full_name, customer.name)
        expect(number, "customer email", account.email, customer.email)
        postal = customer.address.postal_code if customer.address else None
        expect(number, "mailing postal code", account.mailing_address.postal_code, postal)

        client = clients.fineract.find_client_by_external_id(number)
        expect(number, "loan-engine client with this externalId", True, client is not None)
        if client is not None:
            expect(
                number,
                "metadata fineract_client_id",
                str(client["id"]),
                meta.get("fineract_client_id"),
            )

        cards = clients.stripe.v1.payment_methods.list(
            params={"customer": customer.id, "type": "card", "limit": 100}
        ).data
        expect(
            number,
            "cards on file (last four)",
            sorted(c.last4 for c in account.cards),
            sorted(pm.card.last4 if pm.card else "" for pm in cards),
        )

        invoices = clients.stripe.v1.invoices.list(
            params={"customer": customer.id, "limit": 100}
        ).data
        expect(number, "bills", len(account.bills), len(invoices))
        open_cents = sum(i.amount_remaining for i in invoices if i.status == "open")
        expect(number, "open balance (cents)", account.open_balance_cents(), open_cents)
        past_due = sum(
            i.amount_remaining
            for i in invoices
            if i.status == "open"
            and i.due_date is not None
            and clock.from_unix(i.due_date).date() < today
        )
        expect(number, "past due (cents)", account.past_due_cents(), past_due)
        expect(
            number,
            "last bill total (cents)",
            account.last_bill_amount_cents,
            invoices[0].total if invoices else None,
        )

        plan = account.existing_arrangement
        loan_ref = meta.get("arrangement_id")
        expect(number, "arrangement recorded on the customer", plan is not None, bool(loan_ref))
        if plan is not None and loan_ref:
            loan = clients.fineract.get_loan(int(loan_ref))
            expect(number, "arrangement status", 300, loan["status"]["id"])
            expect(
                number,
                "arrangement outstanding (cents)",
                plan.outstanding_cents(),
                _cents(loan["summary"]["totalOutstanding"]),
            )
            expect(
                number,
                "arrangement principal (cents)",
                plan.principal_cents,
                _cents(loan["summary"]["principalDisbursed"]),
            )
    if problems:
        raise WorldMismatch(
            f"the services disagree with the manifest in {len(problems)} place(s):\n  "
            + "\n  ".join(problems)
        )


def build_snapshot(manifest: Manifest | None = None) -> Snapshot[SeedReport]:
    """Seed fresh twins with ``manifest`` (default: the exam world), verify, freeze."""
    chosen = manifest or default_manifest()
    return Snapshot.build(
        lambda clients: seed_world(clients, chosen),
        verify_world,
        info={"frozen_at": clock.FROZEN_ISO, "usage_source": chosen.usage_source},
    )


@cache
def default_snapshot() -> Snapshot[SeedReport]:
    """The exam world's snapshot, built once per process."""
    return build_snapshot()
