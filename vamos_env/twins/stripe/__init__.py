"""The billing twin: an in-memory Stripe API v1 account for the official ``stripe`` SDK.

``BillingTwin`` answers HTTP requests (``vamos_env.twins.http.Routes``) in Stripe's wire
format; hand it to ``TwinStripeHTTPClient`` and the SDK cannot tell it from Stripe.
``StripeState`` is the pure ledger behind it (customers, cards, invoices, charges, ...),
cloned per episode for the cost of copying a few dicts.
"""

from __future__ import annotations

from vamos_env.twins.stripe.errors import StripeError
from vamos_env.twins.stripe.routes import BillingTwin
from vamos_env.twins.stripe.state import StripeState

__all__ = ["BillingTwin", "StripeError", "StripeState"]
