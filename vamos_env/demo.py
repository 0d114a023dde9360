"""The demo job: build the seeded world, clone it, show the accounts and what a clone costs.

Everything shown is read back through the clients (the official Stripe SDK and our
Fineract client) from a fresh clone, the way a tool would see it.
"""

from __future__ import annotations

import statistics
import time
from decimal import Decimal

from vamos_env import clock


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) / 100:,.2f}"


def run_demo(clones: int = 2000) -> int:
    from vamos_env.envs.energy.seed import default_snapshot

    started = time.perf_counter()
    snapshot = default_snapshot()
    build_s = time.perf_counter() - started
    report = snapshot.report
    print(
        f"Seeded {len(report.accounts)} accounts through the Stripe SDK and the Fineract client "
        f"({report.api_calls} API calls) and verified them in {build_s:.2f} s."
    )
    print(f"Frozen clock: {clock.FROZEN_ISO}. Usage: {report.manifest.usage_source}")
    print()

    twins = snapshot.clone()
    clients = twins.clients()
    today = clock.TODAY
    header = (
        f"{'account':11} {'name':28} {'prem':>4} {'cards':>5} {'open':>10} "
        f"{'past due':>10} {'days':>4} {'arrangement':>12}  situations"
    )
    print(header)
    print("-" * len(header))
    for account in report.manifest.accounts:
        seeded = report.accounts[account.account_number]
        customer = clients.stripe.v1.customers.retrieve(seeded.customer_id)
        invoices = clients.stripe.v1.invoices.list(
            params={"customer": customer.id, "status": "open", "limit": 100}
        ).data
        open_cents = sum(i.amount_remaining for i in invoices)
        due = {i.id: clock.from_unix(i.due_date or clock.NOW_UNIX).date() for i in invoices}
        late = [i for i in invoices if due[i.id] < today]
        past_due = sum(i.amount_remaining for i in late)
        days = max(((today - due[i.id]).days for i in late), default=0)
        cards = clients.stripe.v1.payment_methods.list(
            params={"customer": customer.id, "type": "card"}
        ).data
        premises = clients.stripe.v1.subscriptions.list(params={"customer": customer.id}).data
        plan = "-"
        loan_ref = customer.metadata.to_dict().get("arrangement_id") if customer.metadata else None
        if loan_ref:
            loan = clients.fineract.get_loan(int(loan_ref))
            outstanding = int(Decimal(str(loan["summary"]["totalOutstanding"])) * 100)
            plan = _money(outstanding)
        situations = ", ".join(account.situations[:3])
        print(
            f"{account.account_number:11} {(customer.name or '')[:28]:28} {len(premises):>4} "
            f"{len(cards):>5} {_money(open_cents):>10} {_money(past_due):>10} {days:>4} "
            f"{plan:>12}  {situations}"
        )
    clients.close()

    samples = []
    for _ in range(clones):
        t = time.perf_counter()
        snapshot.clone()
        samples.append(time.perf_counter() - t)
    median_us = statistics.median(samples) * 1e6
    print()
    print(
        f"clone() of both twins: median {median_us:.1f} us over {clones} clones "
        f"(target: at most 1000 us). Each call of the benchmark gets its own clone."
    )
    return 0
