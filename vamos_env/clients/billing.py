"""The billing client: the official Stripe SDK, pointed at a twin or at Stripe itself."""

from __future__ import annotations

import stripe

from vamos_env.twins.http import Routes
from vamos_env.twins.transport import TwinStripeHTTPClient

# Retries would hide the twin's answers and slow failures down; the tools report
# errors to the agent instead.
_RETRIES = 0


def stripe_client(
    api_key: str,
    api_base: str | None = None,
    *,
    http_client: stripe.HTTPClient | None = None,
) -> stripe.StripeClient:
    """A ``StripeClient`` for a server root such as ``https://api.stripe.com``."""
    if api_base:
        return stripe.StripeClient(
            api_key,
            base_addresses={"api": api_base.rstrip("/")},
            http_client=http_client,
            max_network_retries=_RETRIES,
        )
    return stripe.StripeClient(api_key, http_client=http_client, max_network_retries=_RETRIES)


def in_process_stripe_client(routes: Routes, api_key: str) -> stripe.StripeClient:
    """A ``StripeClient`` whose requests go straight to a twin's routes, no socket."""
    return stripe_client(api_key, "http://billing.twin", http_client=TwinStripeHTTPClient(routes))
