"""Stripe API v1 over HTTP: the billing twin's route table and request pipeline.

``BillingTwin.handle`` is the whole wire layer: authenticate the API key, find the route
(a small trie, no regular expressions), decode the form, replay or record idempotent
POSTs, validate parameters against the endpoint's schema, call the state, expand
references, and encode JSON with Stripe's headers. Any refusal is a Stripe error body
with the vendor's status; an unexpected exception becomes Stripe's ``api_error`` 500
rather than a traceback (the tests treat one as a bug).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import unquote

import stripe

from vamos_env import clock
from vamos_env.twins.http import Request, Response
from vamos_env.twins.stripe import objects
from vamos_env.twins.stripe.errors import (
    StripeError,
    api_error,
    authentication,
    exclusive,
    idempotency,
    invalid_request,
    no_such,
    unrecognized_url,
)
from vamos_env.twins.stripe.forms import decode_form
from vamos_env.twins.stripe.frozen import freeze
from vamos_env.twins.stripe.ids import make_id
from vamos_env.twins.stripe.params import (
    Boolean,
    Choice,
    Email,
    Hash,
    Integer,
    Kind,
    ListOf,
    Metadata,
    Prefix,
    Range,
    Spec,
    Text,
)
from vamos_env.twins.stripe.search import parse_query
from vamos_env.twins.stripe.state import Record, StripeState

Handler = Callable[[StripeState, tuple[str, ...], dict[str, Any]], Any]

DEFAULT_API_KEYS = ("sk_test_vamos",)
# The version the pinned SDK sends; echoed when a request names none.
DEFAULT_API_VERSION: str = stripe.api_version

_NO_KEY = (
    "You did not provide an API key. You need to provide your API key in the Authorization "
    "header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See "
    "https://stripe.com/docs/api#authentication for details, or we can help at "
    "https://support.stripe.com/."
)

# Reference fields the twin can expand (their value is an id of a stored object).
EXPANDABLE = frozenset(
    {
        "customer",
        "invoice",
        "default_payment_method",
        "payment_method",
        "test_clock",
        "payment_intent",
        "latest_charge",
        "latest_invoice",
        "product",
        "price",
        "subscription",
        "invoice_item",
        "charge",
    }
)
MAX_EXPAND_DEPTH = 4


# --------------------------------------------------------------------------- routing


@dataclass(frozen=True, slots=True)
class Endpoint:
    handler: Handler
    spec: Spec
    records_idempotency: bool


class _Node:
    __slots__ = ("endpoints", "literal", "wildcard")

    def __init__(self) -> None:
        self.literal: dict[str, _Node] = {}
        self.wildcard: _Node | None = None
        self.endpoints: dict[str, Endpoint] = {}


class RouteTable:
    """Paths like ``/v1/customers/{id}``, matched segment by segment (literals first)."""

    def __init__(self) -> None:
        self.root = _Node()

    def add(self, method: str, pattern: str, spec: Spec) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            node = self.root
            for segment in pattern.strip("/").split("/"):
                if segment.startswith("{"):
                    if node.wildcard is None:
                        node.wildcard = _Node()
                    node = node.wildcard
                else:
                    node = node.literal.setdefault(segment, _Node())
            if method in node.endpoints:
                raise ValueError(f"duplicate route {method} {pattern}")
            node.endpoints[method] = Endpoint(handler, spec, method == "POST")
            return handler

        return register

    def match(self, method: str, path: str) -> tuple[Endpoint, tuple[str, ...]] | None:
        if not path.startswith("/") or path.endswith("/") or "//" in path:
            return None
        node = self.root
        args: list[str] = []
        for segment in path[1:].split("/"):
            nxt = node.literal.get(segment)
            if nxt is None:
                nxt = node.wildcard
                if nxt is None:
                    return None
                args.append(unquote(segment) if "%" in segment else segment)
            node = nxt
        endpoint = node.endpoints.get(method)
        return (endpoint, tuple(args)) if endpoint is not None else None


ROUTES = RouteTable()
route = ROUTES.add


# --------------------------------------------------------------------------- lists


def _created(record: Mapping[str, Any]) -> int:
    value = record.get("created", record.get("date", 0))
    return int(value) if isinstance(value, int) else 0


def newest_first(records: Iterable[Record]) -> list[Record]:
    """Newest ``created`` first; ties go to the later write (insertion order reversed)."""
    ordered = list(records)
    ordered.reverse()
    ordered.sort(key=_created, reverse=True)
    return ordered


def _in_range(value: int, bounds: Mapping[str, int]) -> bool:
    return (
        ("gt" not in bounds or value > bounds["gt"])
        and ("gte" not in bounds or value >= bounds["gte"])
        and ("lt" not in bounds or value < bounds["lt"])
        and ("lte" not in bounds or value <= bounds["lte"])
    )


def page(items: Sequence[Record], p: Mapping[str, Any], url: str, label: str) -> dict[str, Any]:
    """A list object window: ``limit`` (default 10), ``starting_after`` / ``ending_before``."""
    if "created" in p:
        items = [r for r in items if _in_range(_created(r), p["created"])]
    limit = p.get("limit") or 10
    after, before = p.get("starting_after"), p.get("ending_before")
    if after is not None and before is not None:
        raise exclusive(("starting_after", "ending_before"))
    cursor = after if after is not None else before
    if cursor is None:
        return objects.list_object(items[:limit], url, len(items) > limit)
    index = next((i for i, r in enumerate(items) if r["id"] == cursor), None)
    if index is None:
        raise no_such(label, cursor, "starting_after" if after is not None else "ending_before")
    if after is not None:
        window = items[index + 1 : index + 1 + limit]
        return objects.list_object(window, url, len(items) > index + 1 + limit)
    start = max(0, index - limit)
    return objects.list_object(items[start:index], url, start > 0)


def search_page(items: Sequence[Record], p: Mapping[str, Any], url: str) -> dict[str, Any]:
    limit = p.get("limit") or 10
    token = p.get("page")
    offset = 0
    if token is not None:
        digits = token.removeprefix("page_")
        if not token.startswith("page_") or not digits.isdigit():
            raise invalid_request(f"Invalid page: {token}", param="page")
        offset = int(digits)
    window = items[offset : offset + limit]
    more = len(items) > offset + limit
    return {
        "object": "search_result",
        "data": list(window),
        "has_more": more,
        "next_page": f"page_{offset + limit}" if more else None,
        "url": url,
    }


# --------------------------------------------------------------------------- schemas

LIST: dict[str, Kind] = {
    "limit": Integer(1, 100),
    "starting_after": Text(),
    "ending_before": Text(),
    "created": Range(),
}
SEARCH = Spec({"query": Text(), "limit": Integer(1, 100), "page": Text()}, required=("query",))
NONE = Spec()

ADDRESS = Hash(
    {
        k: Text(emptyable=True)
        for k in ("city", "country", "line1", "line2", "postal_code", "state")
    },
    emptyable=True,
)
CUSTOMER_FIELDS: dict[str, Kind] = {
    "name": Text(emptyable=True, max_length=256),
    "email": Email(),
    "phone": Text(emptyable=True, max_length=20),
    "description": Text(emptyable=True),
    "address": ADDRESS,
    "metadata": Metadata(),
    "invoice_settings": Hash({"default_payment_method": Text(emptyable=True)}),
    "invoice_prefix": Prefix(),
}
RECURRING = Hash(
    {"interval": Choice(("day", "month", "week", "year")), "interval_count": Integer(1, 1095)},
    required=("interval",),
)
PRICE_DATA_FIELDS: dict[str, Kind] = {
    "currency": Text(),
    "product": Text(),
    "unit_amount": Integer(0),
    "unit_amount_decimal": Text(),
    "tax_behavior": Choice(("exclusive", "inclusive", "unspecified")),
}
PRICE_DATA = Hash(PRICE_DATA_FIELDS, required=("currency", "product"))
RECURRING_PRICE_DATA = Hash(
    {**PRICE_DATA_FIELDS, "recurring": RECURRING}, required=("currency", "product")
)
PERIOD = Hash({"start": Integer(), "end": Integer()}, required=("start", "end"))
INVOICE_STATUSES = ("draft", "open", "void", "paid", "uncollectible")
COLLECTION = Choice(("charge_automatically", "send_invoice"))


def _filter(records: Iterable[Record], p: Mapping[str, Any], *fields: str) -> list[Record]:
    wanted = [(f, p[f]) for f in fields if f in p and p[f] is not None]
    return [r for r in records if all(r.get(f) == v for f, v in wanted)]


def _without_clocks(
    s: StripeState, records: list[Record], p: Mapping[str, Any], *scoping: str
) -> list[Record]:
    """Stripe's "list all" omits objects made under test clocks.

    Unless the request is scoped by one of ``scoping`` (e.g. ``customer``), objects whose
    customer lives on a test clock are left out, as the real API does.
    """
    if any(p.get(name) is not None for name in scoping):
        return records
    customers = s.customers
    kept = []
    for record in records:
        owner = customers.get(record.get("customer") or "")
        if record.get("test_clock") is None and (owner is None or owner.get("test_clock") is None):
            kept.append(record)
    return kept


# --------------------------------------------------------------------------- test clocks


@route(
    "POST",
    "/v1/test_helpers/test_clocks",
    Spec({"frozen_time": Integer(0), "name": Text(max_length=300)}, required=("frozen_time",)),
)
def _create_clock(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_test_clock(p)


@route("GET", "/v1/test_helpers/test_clocks/{id}", NONE)
def _get_clock(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_test_clock(a[0])


@route("GET", "/v1/test_helpers/test_clocks", Spec(LIST))
def _list_clocks(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return page(
        newest_first(s.test_clocks.values()), p, "/v1/test_helpers/test_clocks", "test_clock"
    )


@route("DELETE", "/v1/test_helpers/test_clocks/{id}", NONE)
def _delete_clock(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.delete_test_clock(a[0])


@route(
    "POST",
    "/v1/test_helpers/test_clocks/{id}/advance",
    Spec({"frozen_time": Integer(0)}, required=("frozen_time",)),
)
def _advance_clock(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.advance_test_clock(a[0], p["frozen_time"])


# --------------------------------------------------------------------------- customers


@route(
    "POST",
    "/v1/customers",
    Spec({**CUSTOMER_FIELDS, "test_clock": Text(), "payment_method": Text()}),
)
def _create_customer(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_customer(p)


@route("GET", "/v1/customers/{id}", NONE)
def _get_customer(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_customer(a[0])


@route("POST", "/v1/customers/{id}", Spec(CUSTOMER_FIELDS))
def _update_customer(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.update_customer(a[0], p)


@route("DELETE", "/v1/customers/{id}", NONE)
def _delete_customer(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.delete_customer(a[0])


@route("GET", "/v1/customers", Spec({**LIST, "email": Text(max_length=512), "test_clock": Text()}))
def _list_customers(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    found = _filter(s.live_customers(), p, "email", "test_clock")
    found = _without_clocks(s, found, p, "test_clock")
    return page(newest_first(found), p, "/v1/customers", "customer")


@route("GET", "/v1/customers/search", SEARCH)
def _search_customers(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    query = parse_query(p["query"], "customer")
    found = [c for c in s.live_customers() if query.matches(c)]
    return search_page(newest_first(found), p, "/v1/customers/search")


@route("GET", "/v1/customers/{id}/payment_methods", Spec({**LIST, "type": Text()}))
def _customer_payment_methods(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    s.live_customer(a[0], "customer")
    found = _filter(s.payment_methods.values(), {"customer": a[0], **p}, "customer", "type")
    return page(newest_first(found), p, f"/v1/customers/{a[0]}/payment_methods", "PaymentMethod")


@route("GET", "/v1/customers/{id}/payment_methods/{pm}", NONE)
def _customer_payment_method(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.customer_payment_method(a[0], a[1])


# --------------------------------------------------------------------------- payment methods

BILLING_DETAILS = Hash(
    {
        "address": ADDRESS,
        "email": Email(),
        "name": Text(emptyable=True),
        "phone": Text(emptyable=True),
    },
    emptyable=True,
)


@route(
    "POST",
    "/v1/payment_methods",
    Spec(
        {
            "type": Choice(("card",)),
            "card": Hash(
                {
                    "token": Text(),
                    "number": Text(),
                    "exp_month": Integer(1, 12),
                    "exp_year": Integer(0, 9999),
                    "cvc": Text(),
                }
            ),
            "billing_details": BILLING_DETAILS,
            "metadata": Metadata(),
        },
        required=("type",),
    ),
)
def _create_payment_method(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_payment_method(p)


@route("GET", "/v1/payment_methods/{id}", NONE)
def _get_payment_method(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_payment_method(a[0], "payment_method")


@route(
    "POST",
    "/v1/payment_methods/{id}",
    Spec(
        {
            "metadata": Metadata(),
            "billing_details": BILLING_DETAILS,
            "card": Hash({"exp_month": Integer(1, 12), "exp_year": Integer(0, 9999)}),
        }
    ),
)
def _update_payment_method(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.update_payment_method(a[0], p)


@route(
    "POST", "/v1/payment_methods/{id}/attach", Spec({"customer": Text()}, required=("customer",))
)
def _attach_payment_method(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.attach_payment_method(a[0], p["customer"])


@route("POST", "/v1/payment_methods/{id}/detach", NONE)
def _detach_payment_method(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.detach_payment_method(a[0])


@route("GET", "/v1/payment_methods", Spec({**LIST, "customer": Text(), "type": Text()}))
def _list_payment_methods(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    if p.get("customer") is not None:
        s.live_customer(p["customer"], "customer")
    found = _filter(s.payment_methods.values(), p, "customer", "type")
    return page(newest_first(found), p, "/v1/payment_methods", "PaymentMethod")


# --------------------------------------------------------------------------- products, prices

PRODUCT_FIELDS: dict[str, Kind] = {
    "name": Text(),
    "description": Text(emptyable=True),
    "metadata": Metadata(),
    "active": Boolean(),
    "unit_label": Text(emptyable=True),
}


@route("POST", "/v1/products", Spec(PRODUCT_FIELDS, required=("name",)))
def _create_product(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_product(p)


@route("GET", "/v1/products/{id}", NONE)
def _get_product(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_product(a[0])


@route("POST", "/v1/products/{id}", Spec(PRODUCT_FIELDS))
def _update_product(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.update_product(a[0], p)


@route("GET", "/v1/products", Spec({**LIST, "active": Boolean()}))
def _list_products(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return page(
        newest_first(_filter(s.products.values(), p, "active")), p, "/v1/products", "product"
    )


@route(
    "POST",
    "/v1/prices",
    Spec(
        {
            **PRICE_DATA_FIELDS,
            "product_data": Hash(
                {"name": Text(), "metadata": Metadata(), "active": Boolean()}, required=("name",)
            ),
            "recurring": RECURRING,
            "metadata": Metadata(),
            "nickname": Text(emptyable=True),
            "lookup_key": Text(emptyable=True),
            "active": Boolean(),
        },
        required=("currency",),
    ),
)
def _create_price(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_price(p, active=p.get("active", True))


@route("GET", "/v1/prices/{id}", NONE)
def _get_price(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_price(a[0], "price")


@route(
    "POST",
    "/v1/prices/{id}",
    Spec(
        {
            "active": Boolean(),
            "metadata": Metadata(),
            "nickname": Text(emptyable=True),
            "lookup_key": Text(emptyable=True),
        }
    ),
)
def _update_price(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.update_price(a[0], p)


@route(
    "GET",
    "/v1/prices",
    Spec(
        {**LIST, "product": Text(), "active": Boolean(), "type": Choice(("one_time", "recurring"))}
    ),
)
def _list_prices(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    found = _filter(s.prices.values(), p, "product", "active", "type")
    return page(newest_first(found), p, "/v1/prices", "price")


# --------------------------------------------------------------------------- subscriptions

SUBSCRIPTION_UPDATE: dict[str, Kind] = {
    "metadata": Metadata(),
    "description": Text(emptyable=True),
    "default_payment_method": Text(emptyable=True),
    "days_until_due": Integer(0, 730),
    "cancel_at_period_end": Boolean(),
}


@route(
    "POST",
    "/v1/subscriptions",
    Spec(
        {
            **SUBSCRIPTION_UPDATE,
            "customer": Text(),
            "items": ListOf(
                Hash(
                    {
                        "price": Text(),
                        "price_data": RECURRING_PRICE_DATA,
                        "quantity": Integer(0),
                        "metadata": Metadata(),
                    }
                ),
                max_items=20,
            ),
            "collection_method": COLLECTION,
            "backdate_start_date": Integer(0),
            "off_session": Boolean(),
            "payment_behavior": Choice(
                (
                    "allow_incomplete",
                    "default_incomplete",
                    "error_if_incomplete",
                    "pending_if_incomplete",
                )
            ),
        },
        required=("customer",),
    ),
)
def _create_subscription(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_subscription(p)


@route("GET", "/v1/subscriptions/{id}", NONE)
def _get_subscription(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_subscription(a[0])


@route("POST", "/v1/subscriptions/{id}", Spec(SUBSCRIPTION_UPDATE))
def _update_subscription(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.update_subscription(a[0], p)


@route(
    "DELETE",
    "/v1/subscriptions/{id}",
    Spec({"invoice_now": Boolean(), "prorate": Boolean()}),
)
def _cancel_subscription(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.cancel_subscription(a[0])


_SUB_STATUSES = (
    "active",
    "all",
    "canceled",
    "ended",
    "incomplete",
    "incomplete_expired",
    "past_due",
    "paused",
    "trialing",
    "unpaid",
)


@route(
    "GET",
    "/v1/subscriptions",
    Spec({**LIST, "customer": Text(), "status": Choice(_SUB_STATUSES), "price": Text()}),
)
def _list_subscriptions(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    found = _without_clocks(s, _filter(s.subscriptions.values(), p, "customer"), p, "customer")
    status = p.get("status")
    if status is None:
        found = [r for r in found if r["status"] != "canceled"]  # Stripe's default view
    elif status == "ended":
        found = [r for r in found if r["status"] == "canceled"]
    elif status != "all":
        found = [r for r in found if r["status"] == status]
    if p.get("price") is not None:
        found = [
            r for r in found if any(i["price"]["id"] == p["price"] for i in r["items"]["data"])
        ]
    return page(newest_first(found), p, "/v1/subscriptions", "subscription")


@route("GET", "/v1/subscriptions/search", SEARCH)
def _search_subscriptions(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    query = parse_query(p["query"], "subscription")
    found = [r for r in s.subscriptions.values() if query.matches(r)]
    return search_page(newest_first(found), p, "/v1/subscriptions/search")


# --------------------------------------------------------------------------- invoice items

INVOICE_ITEM_UPDATE: dict[str, Kind] = {
    "amount": Integer(),
    "description": Text(emptyable=True),
    "metadata": Metadata(),
    "period": PERIOD,
}


@route(
    "POST",
    "/v1/invoiceitems",
    Spec(
        {
            **INVOICE_ITEM_UPDATE,
            "customer": Text(),
            # unit_amount predates API version 2025-03-31 but is still widely sent; accepted.
            "unit_amount": Integer(),
            "unit_amount_decimal": Text(),
            "quantity": Integer(0),
            "currency": Text(),
            "invoice": Text(),
            "discountable": Boolean(),
            "price_data": PRICE_DATA,
            "pricing": Hash({"price": Text()}),
        },
        required=("customer",),
    ),
)
def _create_invoice_item(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_invoice_item(p)


@route("GET", "/v1/invoiceitems/{id}", NONE)
def _get_invoice_item(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_invoice_item(a[0])


@route("POST", "/v1/invoiceitems/{id}", Spec(INVOICE_ITEM_UPDATE))
def _update_invoice_item(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.update_invoice_item(a[0], p)


@route("DELETE", "/v1/invoiceitems/{id}", NONE)
def _delete_invoice_item(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.delete_invoice_item(a[0])


@route(
    "GET",
    "/v1/invoiceitems",
    Spec({**LIST, "customer": Text(), "invoice": Text(), "pending": Boolean()}),
)
def _list_invoice_items(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    found = _filter(s.invoice_items.values(), p, "customer", "invoice")
    found = _without_clocks(s, found, p, "customer", "invoice")
    if "pending" in p:
        found = [r for r in found if (r["invoice"] is None) == p["pending"]]
    return page(newest_first(found), p, "/v1/invoiceitems", "invoiceitem")


# --------------------------------------------------------------------------- invoices

INVOICE_UPDATE: dict[str, Kind] = {
    "auto_advance": Boolean(),
    "collection_method": COLLECTION,
    "days_until_due": Integer(0, 1825),
    "due_date": Integer(0),
    "default_payment_method": Text(emptyable=True),
    "description": Text(emptyable=True),
    "footer": Text(emptyable=True),
    "metadata": Metadata(),
}


@route(
    "POST",
    "/v1/invoices",
    Spec(
        {
            **INVOICE_UPDATE,
            "customer": Text(),
            "currency": Text(),
            "pending_invoice_items_behavior": Choice(("exclude", "include")),
        },
        required=("customer",),
    ),
)
def _create_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.create_invoice(p)


@route("GET", "/v1/invoices/{id}", NONE)
def _get_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_invoice(a[0], "invoice")


@route("POST", "/v1/invoices/{id}", Spec(INVOICE_UPDATE))
def _update_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.update_invoice(a[0], p)


@route("DELETE", "/v1/invoices/{id}", NONE)
def _delete_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.delete_invoice(a[0])


@route("POST", "/v1/invoices/{id}/finalize", Spec({"auto_advance": Boolean()}))
def _finalize_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.finalize_invoice(a[0], p)


@route(
    "POST",
    "/v1/invoices/{id}/pay",
    Spec(
        {
            "payment_method": Text(),
            "paid_out_of_band": Boolean(),
            "off_session": Boolean(),
            "forgive": Boolean(),
            "mandate": Text(emptyable=True),
        }
    ),
)
def _pay_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.pay_invoice(a[0], p)


@route("POST", "/v1/invoices/{id}/void", NONE)
def _void_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.void_invoice(a[0])


@route("POST", "/v1/invoices/{id}/mark_uncollectible", NONE)
def _mark_uncollectible(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.mark_uncollectible(a[0])


@route("POST", "/v1/invoices/{id}/send", NONE)
def _send_invoice(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    # No email leaves the twin; a draft is finalized, an open invoice is answered as is.
    invoice = s.get_invoice(a[0])
    if invoice["status"] == "draft":
        return s.finalize_invoice(a[0], {})
    if invoice["status"] != "open":
        raise invalid_request(
            "This invoice cannot be sent right now. Please contact us via "
            "https://support.stripe.com/contact with details, so we can help."
        )
    return invoice


@route("GET", "/v1/invoices/{id}/lines", Spec(LIST))
def _invoice_lines(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return page(s.invoice_line_list(a[0]), p, f"/v1/invoices/{a[0]}/lines", "line_item")


@route(
    "GET",
    "/v1/invoices",
    Spec(
        {
            **LIST,
            "customer": Text(),
            "status": Choice(INVOICE_STATUSES),
            "collection_method": COLLECTION,
            "due_date": Range(),
            "subscription": Text(),
        }
    ),
)
def _list_invoices(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    live = (r for r in s.invoices.values() if not r.get("deleted"))
    found = _filter(live, p, "customer", "status", "collection_method")
    found = _without_clocks(s, found, p, "customer")
    if "due_date" in p:
        found = [
            r
            for r in found
            if r["due_date"] is not None and _in_range(r["due_date"], p["due_date"])
        ]
    if p.get("subscription") is not None:
        found = []  # the twin's invoices never come from subscriptions
    return page(newest_first(found), p, "/v1/invoices", "invoice")


@route("GET", "/v1/invoices/search", SEARCH)
def _search_invoices(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    query = parse_query(p["query"], "invoice")
    found = [r for r in s.invoices.values() if not r.get("deleted") and query.matches(r)]
    return search_page(newest_first(found), p, "/v1/invoices/search")


@route("GET", "/v1/invoice_payments", Spec({**LIST, "invoice": Text(), "status": Text()}))
def _list_invoice_payments(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    found = _filter(s.invoice_payments.values(), p, "invoice", "status")
    return page(newest_first(found), p, "/v1/invoice_payments", "invoice_payment")


@route("GET", "/v1/invoice_payments/{id}", NONE)
def _get_invoice_payment(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_invoice_payment(a[0])


# --------------------------------------------------------------------------- charges, intents


@route("GET", "/v1/charges/{id}", NONE)
def _get_charge(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_charge(a[0], "charge")


@route("GET", "/v1/charges", Spec({**LIST, "customer": Text(), "payment_intent": Text()}))
def _list_charges(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    found = _filter(s.charges.values(), p, "customer", "payment_intent")
    found = _without_clocks(s, found, p, "customer", "payment_intent")
    return page(newest_first(found), p, "/v1/charges", "charge")


@route("GET", "/v1/charges/search", SEARCH)
def _search_charges(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    query = parse_query(p["query"], "charge")
    found = [r for r in s.charges.values() if query.matches(r)]
    return search_page(newest_first(found), p, "/v1/charges/search")


@route("GET", "/v1/payment_intents/{id}", Spec({"client_secret": Text()}))
def _get_payment_intent(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    return s.get_payment_intent(a[0])


@route("GET", "/v1/payment_intents", Spec({**LIST, "customer": Text()}))
def _list_payment_intents(s: StripeState, a: tuple[str, ...], p: dict[str, Any]) -> Any:
    found = _without_clocks(s, _filter(s.payment_intents.values(), p, "customer"), p, "customer")
    return page(newest_first(found), p, "/v1/payment_intents", "payment_intent")


# --------------------------------------------------------------------------- the twin


@cache
def _key_tag(api_key: str) -> str:
    """Idempotency records are scoped per API key without storing the secret itself."""
    return hashlib.sha256(api_key.encode()).hexdigest()[:16]


def _mask(key: str) -> str:
    if len(key) <= 12:
        return "*" * len(key)
    return key[:8] + "*" * (len(key) - 12) + key[-4:]


class BillingTwin:
    """An in-memory Stripe API v1 account that the official SDK drives unchanged.

    ``handle`` answers ``Request``s (the ``Routes`` protocol); ``state`` is the ledger a
    grader reads; ``clone`` is cheap enough to call once per episode.
    """

    def __init__(
        self, api_keys: Collection[str] = DEFAULT_API_KEYS, now: int = clock.NOW_UNIX
    ) -> None:
        self._keys = frozenset(api_keys)
        self._state = StripeState(now)
        self._requests = 0

    @property
    def state(self) -> StripeState:
        return self._state

    def clone(self) -> BillingTwin:
        twin = BillingTwin.__new__(BillingTwin)
        twin._keys = self._keys
        twin._state = self._state.clone()
        twin._requests = self._requests
        return twin

    # ------------------------------------------------------------------ pipeline

    def handle(self, request: Request) -> Response:
        self._requests += 1
        request_id = make_id("req", self._requests)
        version = request.headers.get("stripe-version") or DEFAULT_API_VERSION
        try:
            return self._handle(request, request_id, version)
        except StripeError as error:
            return self._error(error, request_id, version)
        except Exception:
            # A twin must never hand its caller a traceback; tests treat this as a bug.
            return self._error(api_error(), request_id, version)

    def _headers(self, request_id: str, version: str) -> dict[str, str]:
        return {
            "content-type": "application/json",
            "request-id": request_id,
            "stripe-version": version,
        }

    def _error(self, error: StripeError, request_id: str, version: str) -> Response:
        body = json.dumps(error.body(request_id), separators=(",", ":")).encode()
        return Response(error.status, body, self._headers(request_id, version))

    def _authenticate(self, request: Request) -> str:
        header = request.headers.get("authorization")
        if not header:
            raise authentication(_NO_KEY)
        scheme, _, credential = header.strip().partition(" ")
        key = ""
        if scheme.lower() == "bearer":
            key = credential.strip()
        elif scheme.lower() == "basic":
            try:
                key = base64.b64decode(credential.strip(), validate=True).decode().partition(":")[0]
            except (binascii.Error, UnicodeDecodeError, ValueError):
                key = ""
        if not key:
            raise authentication(
                "You did not provide an API key, though you did set your Authorization header "
                f'to "{header}". Using Bearer auth, your Authorization header should look '
                "something like 'Authorization: Bearer YOUR_SECRET_KEY'. See "
                "https://stripe.com/docs/api#authentication for details, or we can help at "
                "https://support.stripe.com/."
            )
        if key not in self._keys:
            raise authentication(f"Invalid API Key provided: {_mask(key)}")
        return key

    def _handle(self, request: Request, request_id: str, version: str) -> Response:
        api_key = self._authenticate(request)
        method = request.method.upper()
        matched = ROUTES.match(method, request.path)
        if matched is None:
            raise unrecognized_url(method, request.path)
        endpoint, args = matched
        if method == "POST":
            raw = request.body.decode("utf-8", "replace") if request.body else request.query
        else:
            raw = request.query
        form = decode_form(raw)
        headers = self._headers(request_id, version)

        key = request.headers.get("idempotency-key") if endpoint.records_idempotency else None
        scope = ""
        if key:
            headers["idempotency-key"] = key
            scope = f"{_key_tag(api_key)} {key}"
            prior = self._state.remembered(scope)
            if prior is not None:
                return self._replay(prior, request.path, form, key, headers)

        params = endpoint.spec.parse(form)
        # From here the endpoint executes: its outcome, success or refusal, is what a
        # retry with the same idempotency key must see again. A write that is refused
        # leaves no trace (clones are cheap, so a checkpoint is too), except a card
        # decline: Stripe keeps the failed charge and the attempt on the invoice.
        checkpoint = self._state.clone() if method != "GET" else None
        try:
            payload = endpoint.handler(self._state, args, params)
            if params.get("expand"):
                payload = self._expand(payload, params["expand"])
            status = 200
            body = json.dumps(payload, separators=(",", ":"))
        except StripeError as error:
            if checkpoint is not None and error.type != "card_error":
                self._state.restore(checkpoint)
            status = error.status
            body = json.dumps(error.body(request_id), separators=(",", ":"))
        except Exception:
            if checkpoint is not None:
                self._state.restore(checkpoint)
            raise
        if scope:
            self._state.remember(
                scope,
                {
                    "id": scope,
                    "method": method,
                    "path": request.path,
                    "params": form,
                    "status": status,
                    "body": body,
                    "request_id": request_id,
                },
            )
        return Response(status, body.encode(), headers)

    def _replay(
        self,
        prior: Record,
        path: str,
        form: dict[str, Any],
        key: str,
        headers: dict[str, str],
    ) -> Response:
        if prior["path"] != path:
            raise idempotency(
                "Keys for idempotent requests can only be used for the same endpoint they were "
                f"first used for ('{path}' vs '{prior['path']}'). Try using a key other than "
                f"'{key}' if you meant to execute a different request."
            )
        if prior["params"] != freeze(form):
            raise idempotency(
                "Keys for idempotent requests can only be used with the same parameters they "
                f"were first used with. Try using a key other than '{key}' if you meant to "
                "execute a different request."
            )
        headers["idempotent-replayed"] = "true"
        headers["original-request"] = prior["request_id"]
        return Response(prior["status"], prior["body"].encode(), headers)

    # ------------------------------------------------------------------ expansion

    def _expand(self, payload: Any, paths: list[str]) -> Any:
        for path in paths:
            parts = path.split(".")
            if len(parts) > MAX_EXPAND_DEPTH:
                raise invalid_request(
                    "You cannot expand more than 4 levels of a property. Property: " + path,
                    param="expand",
                )
            payload = self._expand_path(payload, parts, path)
        return payload

    def _expand_path(self, node: Any, parts: list[str], path: str) -> Any:
        if isinstance(node, (list, tuple)):
            return [self._expand_path(item, parts, path) for item in node]
        if not isinstance(node, Mapping):
            return node
        head, rest = parts[0], parts[1:]
        if head not in node:
            raise self._cannot_expand(node, path)
        value = node[head]
        if isinstance(value, str) or (
            isinstance(value, (list, tuple)) and head in EXPANDABLE and not rest
        ):
            if head not in EXPANDABLE:
                raise self._cannot_expand(node, path)
            value = self._resolve(value)
        if rest:
            if value is None:
                return node
            if not isinstance(value, (Mapping, list, tuple)):
                raise self._cannot_expand(node, path)
            value = self._expand_path(value, rest, path)
        elif head not in EXPANDABLE and not isinstance(value, Mapping):
            raise self._cannot_expand(node, path)
        out = dict(node)
        out[head] = value
        return out

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            found = self._state.lookup(value)
            return found if found is not None else value
        if isinstance(value, (list, tuple)):
            return [self._resolve(v) for v in value]
        return value

    @staticmethod
    def _cannot_expand(node: Mapping[str, Any], path: str) -> StripeError:
        hint = ""
        if node.get("object") in ("list", "search_result") and not path.startswith("data."):
            hint = f" You may want to try expanding 'data.{path}' instead."
        return invalid_request(f"This property cannot be expanded ({path}).{hint}", param="expand")
