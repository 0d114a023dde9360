"""How cheap is a call's copy of the world, and how close is the twin to the SDK's floor?

Prints medians (microseconds) for:
  - clone() of both twins of the seeded snapshot (target: at most 1 ms),
  - one Stripe SDK round trip in-process against the twin (customer retrieve, invoice list),
  - the same SDK call against a stripe.HTTPClient that returns a canned response
    (the SDK's own floor), and the ratio (target: at most 1.5x),
  - one Fineract client round trip in-process (loan read with schedule).

Run: .venv/bin/python benchmarks/clone.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

import stripe

from vamos_env.clients.billing import stripe_client
from vamos_env.envs.energy.seed import default_snapshot


def median_us(fn: Callable[[], Any], repeat: int) -> float:
    for _ in range(min(200, repeat)):
        fn()
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1e6


class CannedHTTPClient(stripe.HTTPClient):
    """Answers every request with one fixed body: what the SDK costs with no server at all."""

    name = "canned"

    def __init__(self, body: str) -> None:
        super().__init__()
        self.body = body

    def request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None,
        post_data: Any = None,
        *,
        _usage: list[str] | None = None,
    ) -> tuple[str, int, Mapping[str, str]]:
        return self.body, 200, {"request-id": "req_canned"}

    def close(self) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5000)
    args = parser.parse_args()

    t = time.perf_counter()
    snapshot = default_snapshot()
    build_ms = (time.perf_counter() - t) * 1e3
    print(f"snapshot build (seed through the APIs + verify): {build_ms:.0f} ms (once per process)")

    clone_us = median_us(snapshot.clone, args.repeat)
    print(f"clone() both twins: median {clone_us:.1f} us  (target <= 1000 us)")

    twins = snapshot.clone()
    clients = twins.clients()
    report = snapshot.report
    first = report.manifest.accounts[0].account_number
    customer_id = report.accounts[first].customer_id
    invoices = clients.stripe.v1.invoices.list(params={"customer": customer_id, "limit": 10})

    customer_body = json.dumps(clients.stripe.v1.customers.retrieve(customer_id).to_dict())
    invoices_body = json.dumps(invoices.to_dict())
    canned_customer = stripe_client(
        "sk_test_x", "http://x", http_client=CannedHTTPClient(customer_body)
    )
    canned_invoices = stripe_client(
        "sk_test_x", "http://x", http_client=CannedHTTPClient(invoices_body)
    )

    rows = [
        (
            "customers.retrieve",
            lambda: clients.stripe.v1.customers.retrieve(customer_id),
            lambda: canned_customer.v1.customers.retrieve(customer_id),
        ),
        (
            "invoices.list (10, with lines)",
            lambda: clients.stripe.v1.invoices.list(params={"customer": customer_id, "limit": 10}),
            lambda: canned_invoices.v1.invoices.list(params={"customer": customer_id, "limit": 10}),
        ),
    ]
    print(
        f"{'Stripe SDK call':34} {'twin us':>9} {'floor us':>9} {'ratio':>6}  (target ratio <= 1.5)"
    )
    for name, twin_call, floor_call in rows:
        twin_us = median_us(twin_call, args.repeat)
        floor_us = median_us(floor_call, args.repeat)
        print(f"{name:34} {twin_us:9.1f} {floor_us:9.1f} {twin_us / floor_us:6.2f}")

    client = clients.fineract.find_client_by_external_id(first)
    assert client is not None
    loan_ids = [a.loan_id for a in report.accounts.values() if a.loan_id is not None]
    if loan_ids:
        loan_us = median_us(lambda: clients.fineract.get_loan(loan_ids[0]), args.repeat // 5)
        print(f"Fineract get_loan with schedule: median {loan_us:.1f} us")
    lookup_us = median_us(
        lambda: clients.fineract.find_client_by_external_id(client["externalId"]), args.repeat // 5
    )
    print(f"Fineract client lookup by externalId: median {lookup_us:.1f} us")


if __name__ == "__main__":
    main()
