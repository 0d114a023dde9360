"""Fixtures for the billing twin tests: the real Stripe SDK, driven in-process.

Every test reaches the twin through ``billing.client`` (a ``stripe.StripeClient``), so
the same tests can later run against a loopback server by parametrizing ``billing``.
``billing.twin`` is there for ledger assertions and raw requests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import stripe

from vamos_env.twins.fineract import LoanTwin
from vamos_env.twins.http import Request, Response
from vamos_env.twins.serve import TwinServer
from vamos_env.twins.stripe import BillingTwin
from vamos_env.twins.transport import TwinStripeHTTPClient

API_KEY = "sk_test_vamos"
BASE = "http://billing.twin"


def make_client(twin: BillingTwin, api_key: str = API_KEY) -> stripe.StripeClient:
    return stripe.StripeClient(
        api_key,
        http_client=TwinStripeHTTPClient(twin),
        base_addresses={"api": BASE},
        max_network_retries=0,
    )


@dataclass
class Billing:
    """One twin plus an SDK client on it, with shortcuts for common setup."""

    twin: BillingTwin
    client: stripe.StripeClient

    @property
    def v1(self) -> Any:
        return self.client.v1

    @staticmethod
    def connect(twin: BillingTwin, api_key: str = API_KEY) -> stripe.StripeClient:
        """Another SDK client, e.g. on a clone or with a different key."""
        return make_client(twin, api_key)

    def raw(
        self,
        method: str,
        path: str,
        *,
        query: str = "",
        body: str = "",
        headers: Mapping[str, str] | None = None,
        auth: bool = True,
    ) -> Response:
        """A request the SDK would never send (bad auth, odd paths, garbage bodies)."""
        sent = {k.lower(): v for k, v in (headers or {}).items()}
        if auth:
            sent.setdefault("authorization", f"Bearer {API_KEY}")
        return self.twin.handle(Request(method, path, query, sent, body.encode()))

    def customer(self, **params: Any) -> Any:
        params.setdefault("name", "Dana Whitfield")
        params.setdefault("email", "dana@example.com")
        return self.v1.customers.create(params=params)

    def card(self, customer_id: str, token: str = "pm_card_visa") -> Any:
        return self.v1.payment_methods.attach(token, params={"customer": customer_id})

    def bill(
        self,
        customer_id: str,
        amounts: tuple[int, ...] = (1500, 700),
        *,
        finalize: bool = True,
        days_until_due: int = 21,
    ) -> Any:
        """A send_invoice bill with one line per amount (optionally finalized)."""
        for i, amount in enumerate(amounts):
            self.v1.invoice_items.create(
                params={
                    "customer": customer_id,
                    "amount": amount,
                    "description": f"charge {i}",
                    "metadata": {"charge_type": "supply", "kwh": str(100 + i)},
                }
            )
        invoice = self.v1.invoices.create(
            params={
                "customer": customer_id,
                "collection_method": "send_invoice",
                "days_until_due": days_until_due,
                "pending_invoice_items_behavior": "include",
            }
        )
        if finalize:
            invoice = self.v1.invoices.finalize_invoice(invoice.id)
        return invoice


@pytest.fixture(params=["in_process", "loopback"])
def billing(request: pytest.FixtureRequest) -> Iterator[Billing]:
    """The same tests twice: SDK -> in-process transport, and SDK -> HTTP -> ``TwinServer``."""
    twin = BillingTwin()
    if request.param == "in_process":
        yield Billing(twin, make_client(twin))
        return
    with TwinServer(twin, LoanTwin()) as server:
        # The SDK's own default HTTP client, over a real socket: nothing of ours in between.
        client = stripe.StripeClient(
            API_KEY, base_addresses={"api": server.base_url}, max_network_retries=0
        )
        yield Billing(twin, client)
