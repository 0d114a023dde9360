"""Fixtures for the Fineract twin and client tests.

Everything goes through ``FineractClient`` (or raw httpx for malformed requests) over
``TwinTransport``, so the same tests can later run against a loopback server or a real
Fineract by building ``LoanWorld`` with another transport and base URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import httpx
import pytest

from vamos_env import clock
from vamos_env.clients.fineract import API_PATH, FineractClient
from vamos_env.twins.fineract import LoanTwin
from vamos_env.twins.serve import TwinServer
from vamos_env.twins.stripe import BillingTwin
from vamos_env.twins.transport import TwinTransport

BASE_URL = "http://fineract.twin"
ACCOUNT = "4417-90781"


@dataclass
class LoanWorld:
    """A twin, a client wired to it, and helpers to reach it raw or open loans."""

    twin: LoanTwin
    client: FineractClient
    transport: httpx.BaseTransport
    base_url: str = BASE_URL

    def http(
        self,
        *,
        auth: tuple[str, str] | None = ("mifos", "password"),
        tenant: str | None = "default",
    ) -> httpx.Client:
        """A bare httpx client at the API root, for requests our client would never send."""
        headers = {"Content-Type": "application/json"}
        if tenant is not None:
            headers["Fineract-Platform-TenantId"] = tenant
        return httpx.Client(
            base_url=self.base_url + API_PATH,
            transport=self.transport,
            auth=httpx.BasicAuth(*auth) if auth else None,
            headers=headers,
        )

    def product(self) -> int:
        found = [p for p in self.client.list_loan_products() if p["name"] == "Payment Arrangement"]
        if found:
            return int(found[0]["id"])
        return self.client.create_loan_product(name="Payment Arrangement", short_name="PA")

    def customer(self, external_id: str = ACCOUNT, since: date = date(2024, 1, 15)) -> int:
        found = self.client.find_client_by_external_id(external_id)
        if found:
            return int(found["id"])
        return self.client.create_client(
            firstname="Maria", lastname="Okafor", external_id=external_id, activation_date=since
        )

    def open_loan(
        self,
        principal_cents: int,
        installments: int,
        *,
        on: date = clock.TODAY,
        first_repayment_on: date | None = None,
        external_id: str | None = None,
    ) -> int:
        """Submit, approve and disburse a loan on ``on``; returns the loan id."""
        loan_id = self.client.submit_loan(
            client_id=self.customer(),
            product_id=self.product(),
            principal_cents=principal_cents,
            installments=installments,
            submitted_on=on,
            expected_disbursement_on=on,
            first_repayment_on=first_repayment_on,
            external_id=external_id,
        )
        self.client.approve_loan(loan_id, on=on)
        self.client.disburse_loan(loan_id, on=on)
        return loan_id


@pytest.fixture(params=["in_process", "loopback"])
def loans(request: pytest.FixtureRequest) -> Iterator[LoanWorld]:
    """The same tests twice: client -> in-process transport, and client -> HTTP -> TwinServer."""
    twin = LoanTwin()
    if request.param == "in_process":
        transport: httpx.BaseTransport = TwinTransport(twin)
        client = FineractClient(BASE_URL, "mifos", "password", "default", transport=transport)
        try:
            yield LoanWorld(twin=twin, client=client, transport=transport)
        finally:
            client.close()
        return
    with TwinServer(BillingTwin(), twin) as server:
        transport = httpx.HTTPTransport()
        client = FineractClient(server.base_url, "mifos", "password", "default")
        try:
            yield LoanWorld(twin=twin, client=client, transport=transport, base_url=server.base_url)
        finally:
            client.close()
