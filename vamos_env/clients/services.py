"""Both service clients together, reaching twins in-process or servers over HTTP."""

from __future__ import annotations

from dataclasses import dataclass

import stripe

from vamos_env.clients.billing import in_process_stripe_client, stripe_client
from vamos_env.clients.config import (
    DEFAULT_FINERACT_PASSWORD,
    DEFAULT_FINERACT_TENANT,
    DEFAULT_FINERACT_USER,
    DEFAULT_STRIPE_KEY,
    ServiceEndpoints,
)
from vamos_env.clients.fineract import FineractClient
from vamos_env.twins.http import Routes
from vamos_env.twins.transport import TwinTransport


@dataclass(slots=True)
class ServiceClients:
    stripe: stripe.StripeClient
    fineract: FineractClient

    @classmethod
    def in_process(cls, billing: Routes, loans: Routes) -> ServiceClients:
        """Clients whose requests are delivered to the twins' routes with no socket."""
        return cls(
            stripe=in_process_stripe_client(billing, DEFAULT_STRIPE_KEY),
            fineract=FineractClient(
                "http://loans.twin",
                DEFAULT_FINERACT_USER,
                DEFAULT_FINERACT_PASSWORD,
                DEFAULT_FINERACT_TENANT,
                transport=TwinTransport(loans),
            ),
        )

    @classmethod
    def over_http(cls, endpoints: ServiceEndpoints) -> ServiceClients:
        """Clients for real servers (or ``vamos twins serve``), by base URL and credentials."""
        return cls(
            stripe=stripe_client(endpoints.stripe_api_key, endpoints.stripe_api_base),
            fineract=FineractClient(
                endpoints.fineract_api_base,
                endpoints.fineract_user,
                endpoints.fineract_password,
                endpoints.fineract_tenant,
                verify=endpoints.fineract_verify_tls,
            ),
        )

    def close(self) -> None:
        self.fineract.close()
