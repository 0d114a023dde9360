"""The billing service as the tools call it: the official Stripe SDK, answers as plain JSON.

Every request goes through ``stripe.StripeClient.raw_request``: the SDK's own
authentication, form encoding, API version header and error handling (a decline still
raises ``stripe.CardError``), but the answer stays the JSON the server sent. Building
the SDK's typed objects for an invoice list costs about ten times the round trip itself
(some 200 nested objects per list), and the tools only read fields, so they skip it.
"""

from __future__ import annotations

from typing import Any

import stripe

_PAGE = 100


class Billing:
    """GET and POST against the Stripe API v1 through one SDK client."""

    def __init__(self, client: stripe.StripeClient) -> None:
        self.client = client

    def get(self, path: str, **params: Any) -> dict[str, Any]:
        return self._send("get", path, params)

    def post(self, path: str, **params: Any) -> dict[str, Any]:
        return self._send("post", path, params)

    def list_all(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every item of a list endpoint, following ``has_more`` with ``starting_after``."""
        items: list[dict[str, Any]] = []
        while True:
            page = self.get(path, limit=_PAGE, **params)
            data = list(page.get("data") or [])
            items.extend(data)
            if not page.get("has_more") or not data:
                return items
            params = {**params, "starting_after": data[-1]["id"]}

    def _send(self, method: str, path: str, params: dict[str, Any]) -> dict[str, Any]:
        response = self.client.raw_request(method, path, **params)
        data = getattr(response, "data", None)
        return data if isinstance(data, dict) else {}
