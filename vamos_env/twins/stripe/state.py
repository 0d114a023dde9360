"""The billing twin's state: Stripe's objects and business rules, with no HTTP in sight.

``StripeState`` holds one dict per collection (id -> frozen wire-form record) and the
per-prefix id counters. Operations take already-parsed parameters (see ``params.py``),
enforce Stripe's rules, and either return the stored record or raise a ``StripeError``.
Records are immutable once stored (``frozen.py``): a write builds a new record and
replaces the entry, so ``clone()`` copies only the top-level dicts.

Time is frozen: objects are stamped with ``now``, or with their customer's test clock
``frozen_time`` when the customer was created on a clock.

What the twin does not do, by design: it never runs billing cycles, so subscriptions do
not generate invoices (bills are created explicitly, from meter readings); it never
finalizes or collects an invoice on its own (``auto_advance`` is stored, not acted on);
it sends no webhooks or emails.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any

from vamos_env import clock
from vamos_env.twins.stripe import objects
from vamos_env.twins.stripe.cards import (
    CARD_TOKENS,
    PAYMENT_METHOD_TOKENS,
    RAW_NUMBER_MESSAGE,
    TestCard,
    card_by_last4,
)
from vamos_env.twins.stripe.errors import (
    card_declined,
    exclusive,
    invalid_request,
    missing_param,
    no_such,
)
from vamos_env.twins.stripe.frozen import FrozenDict, freeze, thaw
from vamos_env.twins.stripe.ids import make_id
from vamos_env.twins.stripe.params import CLEAR

Record = FrozenDict

DAY = 86400
_NO_PAYMENT_METHOD = (
    "This customer has no attached payment source or default payment method. Please consider "
    "adding a default payment method. For more information, visit "
    "https://stripe.com/docs/billing/subscriptions/payment-methods-setting"
    "#payment-method-priority."
)
_NOT_EDITABLE = "Finalized invoices can't be updated in this way"
_ONE_TIME_ONLY = (
    "The price specified is set to `type=one_time` but this field only accepts prices with "
    "`type=recurring`."
)

# Collections, in the order ``dump()`` writes them.
TABLES = (
    "test_clocks",
    "customers",
    "payment_methods",
    "products",
    "prices",
    "subscriptions",
    "invoice_items",
    "invoices",
    "invoice_lines",
    "invoice_payments",
    "payment_intents",
    "charges",
    "idempotency",
)

# Which collection an id prefix lives in (expansion and ``lookup``).
_PREFIX_TABLE = {
    "cus": "customers",
    "pm": "payment_methods",
    "prod": "products",
    "price": "prices",
    "sub": "subscriptions",
    "ii": "invoice_items",
    "in": "invoices",
    "inpay": "invoice_payments",
    "pi": "payment_intents",
    "ch": "charges",
    "clock": "test_clocks",
}


def _merge_metadata(current: Mapping[str, str], change: Any) -> dict[str, str]:
    """Stripe's update semantics: keys merge, a key set to "" is removed, "" clears all."""
    if change is CLEAR:
        return {}
    merged = dict(current)
    for key, value in change.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def _new_metadata(change: Any) -> dict[str, str]:
    return _merge_metadata({}, change) if change is not None else {}


def _add_interval(ts: int, interval: str, count: int) -> int:
    moment = datetime.fromtimestamp(ts, tz=UTC)
    if interval == "day":
        return ts + count * DAY
    if interval == "week":
        return ts + count * 7 * DAY
    months = count * (12 if interval == "year" else 1)
    month_index = moment.month - 1 + months
    year, month = moment.year + month_index // 12, month_index % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return int(moment.replace(year=year, month=month, day=day).timestamp())


class StripeState:
    """All billing objects of one Stripe account (test mode), pure and cheaply clonable."""

    def __init__(self, now: int = clock.NOW_UNIX) -> None:
        self.now = now
        self._tables: dict[str, dict[str, Any]] = {name: {} for name in TABLES}
        self._counters: dict[str, int] = {}
        self._bind()

    def _bind(self) -> None:
        t = self._tables
        self._customers: dict[str, Record] = t["customers"]
        self._payment_methods: dict[str, Record] = t["payment_methods"]
        self._products: dict[str, Record] = t["products"]
        self._prices: dict[str, Record] = t["prices"]
        self._subscriptions: dict[str, Record] = t["subscriptions"]
        self._invoice_items: dict[str, Record] = t["invoice_items"]
        self._invoices: dict[str, Record] = t["invoices"]
        self._invoice_lines: dict[str, tuple[Record, ...]] = t["invoice_lines"]
        self._invoice_payments: dict[str, Record] = t["invoice_payments"]
        self._payment_intents: dict[str, Record] = t["payment_intents"]
        self._charges: dict[str, Record] = t["charges"]
        self._test_clocks: dict[str, Record] = t["test_clocks"]
        self._idempotency: dict[str, Record] = t["idempotency"]

    # ------------------------------------------------------------------ snapshot & views

    def clone(self) -> StripeState:
        """An independent copy: top-level dicts copied, records shared (they are immutable)."""
        copy = StripeState.__new__(StripeState)
        copy.now = self.now
        copy._tables = {name: table.copy() for name, table in self._tables.items()}
        copy._counters = self._counters.copy()
        copy._bind()
        return copy

    def restore(self, checkpoint: StripeState) -> None:
        """Return to an earlier ``clone()`` of this state (a refused write leaves no trace)."""
        self._tables = checkpoint._tables
        self._counters = checkpoint._counters
        self._bind()

    def dump(self) -> dict[str, Any]:
        """Every collection as plain, mutable JSON-ready data (for ledgers and tests)."""
        out: dict[str, Any] = {name: thaw(self._tables[name]) for name in TABLES}
        out["counters"] = dict(self._counters)
        out["now"] = self.now
        return out

    def _view(self, name: str) -> Mapping[str, Any]:
        return MappingProxyType(self._tables[name])

    @property
    def customers(self) -> Mapping[str, Record]:
        return self._view("customers")

    @property
    def payment_methods(self) -> Mapping[str, Record]:
        return self._view("payment_methods")

    @property
    def products(self) -> Mapping[str, Record]:
        return self._view("products")

    @property
    def prices(self) -> Mapping[str, Record]:
        return self._view("prices")

    @property
    def subscriptions(self) -> Mapping[str, Record]:
        return self._view("subscriptions")

    @property
    def invoice_items(self) -> Mapping[str, Record]:
        return self._view("invoice_items")

    @property
    def invoices(self) -> Mapping[str, Record]:
        return self._view("invoices")

    @property
    def invoice_lines(self) -> Mapping[str, tuple[Record, ...]]:
        """Invoice id -> every line (newest first); the invoice itself embeds the first ten."""
        return self._view("invoice_lines")

    @property
    def invoice_payments(self) -> Mapping[str, Record]:
        return self._view("invoice_payments")

    @property
    def payment_intents(self) -> Mapping[str, Record]:
        return self._view("payment_intents")

    @property
    def charges(self) -> Mapping[str, Record]:
        return self._view("charges")

    @property
    def test_clocks(self) -> Mapping[str, Record]:
        return self._view("test_clocks")

    @property
    def idempotency(self) -> Mapping[str, Record]:
        return self._view("idempotency")

    def lookup(self, object_id: str) -> Record | None:
        """Any stored object by id (used to expand references)."""
        table = _PREFIX_TABLE.get(object_id.partition("_")[0])
        if table is None:
            return None
        found = self._tables[table].get(object_id)
        return found if isinstance(found, FrozenDict) else None

    # ------------------------------------------------------------------ internals

    def _mint(self, prefix: str) -> str:
        counter = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = counter
        return make_id(prefix, counter)

    def next_request_id(self) -> str:
        return self._mint("req")

    def _clock_time(self, clock_id: str | None) -> int:
        if clock_id is not None:
            found = self._test_clocks.get(clock_id)
            if found is not None:
                return int(found["frozen_time"])
        return self.now

    def _time_for(self, customer_id: str | None) -> int:
        """The customer's "now": its test clock's frozen time, else the frozen instant."""
        if customer_id is None:
            return self.now
        found = self._customers.get(customer_id)
        return self._clock_time(found.get("test_clock") if found is not None else None)

    @staticmethod
    def _get(table: Mapping[str, Record], label: str, object_id: str, param: str) -> Record:
        found = table.get(object_id)
        if found is None:
            raise no_such(label, object_id, param)
        return found

    def live_customer(self, customer_id: str, param: str = "customer") -> Record:
        found = self._get(self._customers, "customer", customer_id, param)
        if found.get("deleted"):
            raise no_such("customer", customer_id, param)
        return found

    def _store(self, table: dict[str, Record], record: Mapping[str, Any]) -> Record:
        frozen: Record = freeze(record)
        table[frozen["id"]] = frozen
        return frozen

    @staticmethod
    def _edit(record: Record, **changes: Any) -> dict[str, Any]:
        out = dict(record)
        out.update(changes)
        return out

    # ------------------------------------------------------------------ test clocks

    def create_test_clock(self, p: Mapping[str, Any]) -> Record:
        clock_id = self._mint("clock")
        return self._store(
            self._test_clocks,
            objects.test_clock(clock_id, self.now, p["frozen_time"], p.get("name")),
        )

    def get_test_clock(self, clock_id: str, param: str = "id") -> Record:
        return self._get(self._test_clocks, "test_clock", clock_id, param)

    def advance_test_clock(self, clock_id: str, frozen_time: int) -> Record:
        current = self.get_test_clock(clock_id)
        if frozen_time <= current["frozen_time"]:
            raise invalid_request(
                "The frozen_time must be after the test clock's current frozen_time "
                f"({current['frozen_time']}).",
                param="frozen_time",
            )
        # Advancing runs no billing here, so the clock is ready at once.
        return self._store(
            self._test_clocks, self._edit(current, frozen_time=frozen_time, status="ready")
        )

    def delete_test_clock(self, clock_id: str) -> Record:
        self.get_test_clock(clock_id)
        del self._test_clocks[clock_id]
        # Stripe deletes the objects that live on a clock; the twin deletes its customers.
        for customer in list(self._customers.values()):
            if customer.get("test_clock") == clock_id and not customer.get("deleted"):
                self.delete_customer(customer["id"])
        return freeze(objects.deleted(clock_id, "test_helpers.test_clock"))

    # ------------------------------------------------------------------ customers

    def create_customer(self, p: Mapping[str, Any]) -> Record:
        clock_id = p.get("test_clock")
        if clock_id is not None:
            self.get_test_clock(clock_id, "test_clock")
        pm_param = p.get("payment_method")
        wanted_default = (p.get("invoice_settings") or {}).get("default_payment_method")
        # Check everything before the first write, so a refusal leaves no half-made customer.
        if pm_param is not None and pm_param not in PAYMENT_METHOD_TOKENS:
            found = self.get_payment_method(pm_param, "payment_method")
            if found["customer"] is not None:
                raise invalid_request(
                    "The payment method you provided has already been attached to a customer.",
                    param="payment_method",
                )
        if wanted_default is not None and wanted_default != pm_param:
            raise invalid_request(
                f"The customer does not have a payment method with the ID {wanted_default}. "
                "The payment method must be attached to the customer.",
                param="invoice_settings[default_payment_method]",
                code="resource_missing",
            )
        customer_id = self._mint("cus")
        fields = dict(p)
        fields["metadata"] = _new_metadata(p.get("metadata"))
        fields["default_payment_method"] = None
        record = self._store(
            self._customers,
            objects.customer(customer_id, self._clock_time(clock_id), fields, clock_id),
        )
        if pm_param is not None:
            attached = self.attach_payment_method(pm_param, customer_id)
            if wanted_default is not None:
                # A token (e.g. pm_card_visa) names the card it just created.
                record = self._set_default_payment_method(record, attached["id"])
        return self._customers[record["id"]]

    def get_customer(self, customer_id: str) -> Record:
        """Retrieve: a deleted customer answers its ``deleted: true`` stub, as Stripe does."""
        return self._get(self._customers, "customer", customer_id, "id")

    def update_customer(self, customer_id: str, p: Mapping[str, Any]) -> Record:
        current = self.live_customer(customer_id, "id")
        changes: dict[str, Any] = {}
        for key in ("name", "email", "phone", "description", "invoice_prefix"):
            if key in p:
                changes[key] = p[key]
        if "address" in p:
            changes["address"] = objects.address(p["address"])
        if "metadata" in p:
            changes["metadata"] = _merge_metadata(current["metadata"], p["metadata"])
        settings = p.get("invoice_settings")
        if settings is not None and "default_payment_method" in settings:
            self._check_default(customer_id, settings["default_payment_method"])
            merged = dict(current["invoice_settings"])
            merged["default_payment_method"] = settings["default_payment_method"]
            changes["invoice_settings"] = merged
        return self._store(self._customers, self._edit(current, **changes))

    def _check_default(self, customer_id: str, pm_id: str | None) -> None:
        if pm_id is None:
            return
        found = self._payment_methods.get(pm_id)
        if found is None or found["customer"] != customer_id:
            raise invalid_request(
                f"The customer does not have a payment method with the ID {pm_id}. The "
                "payment method must be attached to the customer.",
                param="invoice_settings[default_payment_method]",
                code="resource_missing",
            )

    def _set_default_payment_method(self, customer: Record, pm_id: str | None) -> Record:
        self._check_default(customer["id"], pm_id)
        settings = dict(customer["invoice_settings"])
        settings["default_payment_method"] = pm_id
        return self._store(self._customers, self._edit(customer, invoice_settings=settings))

    def delete_customer(self, customer_id: str) -> Record:
        self.live_customer(customer_id, "id")
        for sub in list(self._subscriptions.values()):
            if sub["customer"] == customer_id and sub["status"] != "canceled":
                self.cancel_subscription(sub["id"])
        for pm in list(self._payment_methods.values()):
            if pm["customer"] == customer_id:
                self._store(self._payment_methods, self._edit(pm, customer=None))
        stub = freeze(objects.deleted(customer_id, "customer"))
        self._customers[customer_id] = stub
        return stub

    def live_customers(self) -> Iterable[Record]:
        return (c for c in self._customers.values() if not c.get("deleted"))

    # ------------------------------------------------------------------ payment methods

    def _card_expiry(self) -> tuple[int, int]:
        today = clock.from_unix(self.now)
        return today.month, today.year + 1

    def _new_payment_method(
        self,
        card: TestCard,
        customer_id: str | None,
        metadata: Mapping[str, str] | None = None,
        billing: Mapping[str, Any] | None = None,
        expiry: tuple[int, int] | None = None,
    ) -> Record:
        pm_id = self._mint("pm")
        month, year = expiry or self._card_expiry()
        return self._store(
            self._payment_methods,
            objects.payment_method(
                pm_id,
                self._time_for(customer_id),
                objects.card_details(card, month, year),
                customer_id,
                metadata or {},
                billing,
            ),
        )

    def create_payment_method(self, p: Mapping[str, Any]) -> Record:
        card_fields = p.get("card")
        if p.get("type") != "card" or not card_fields:
            raise missing_param("card")
        if "number" in card_fields:
            raise invalid_request(RAW_NUMBER_MESSAGE, param="card[number]")
        token = card_fields.get("token")
        if token is None:
            raise missing_param("card[token]")
        card = CARD_TOKENS.get(token)
        if card is None:
            raise no_such("token", token, "card[token]")
        expiry = None
        if "exp_month" in card_fields or "exp_year" in card_fields:
            default_month, default_year = self._card_expiry()
            expiry = (
                card_fields.get("exp_month", default_month),
                card_fields.get("exp_year", default_year),
            )
        return self._new_payment_method(
            card, None, _new_metadata(p.get("metadata")), p.get("billing_details"), expiry
        )

    def get_payment_method(self, pm_id: str, param: str = "id") -> Record:
        return self._get(self._payment_methods, "PaymentMethod", pm_id, param)

    def update_payment_method(self, pm_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_payment_method(pm_id)
        changes: dict[str, Any] = {}
        if "metadata" in p:
            changes["metadata"] = _merge_metadata(current["metadata"], p["metadata"])
        if "billing_details" in p:
            changes["billing_details"] = objects.billing_details(p["billing_details"])
        if "card" in p:
            card = dict(current["card"])
            card.update({k: v for k, v in (p["card"] or {}).items() if v is not None})
            changes["card"] = card
        return self._store(self._payment_methods, self._edit(current, **changes))

    def attach_payment_method(self, pm_id: str, customer_id: str) -> Record:
        self.live_customer(customer_id)
        token_card = PAYMENT_METHOD_TOKENS.get(pm_id)
        if token_card is not None:
            # A test token mints a fresh PaymentMethod each time, as Stripe does.
            return self._new_payment_method(token_card, customer_id)
        current = self.get_payment_method(pm_id, "payment_method")
        if current["customer"] == customer_id:
            return current
        if current["customer"] is not None:
            raise invalid_request(
                "The payment method you provided has already been attached to a customer.",
                param="payment_method",
            )
        return self._store(self._payment_methods, self._edit(current, customer=customer_id))

    def detach_payment_method(self, pm_id: str) -> Record:
        current = self.get_payment_method(pm_id, "payment_method")
        owner = current["customer"]
        if owner is None:
            raise invalid_request(
                f"The payment method {pm_id} is not attached to a customer so detachment is "
                "impossible.",
                param="payment_method",
            )
        customer = self._customers.get(owner)
        if (
            customer is not None
            and not customer.get("deleted")
            and customer["invoice_settings"]["default_payment_method"] == pm_id
        ):
            self._set_default_payment_method(customer, None)
        return self._store(self._payment_methods, self._edit(current, customer=None))

    def customer_payment_method(self, customer_id: str, pm_id: str) -> Record:
        self.live_customer(customer_id, "customer")
        found = self._payment_methods.get(pm_id)
        if found is None or found["customer"] != customer_id:
            raise no_such("PaymentMethod", pm_id, "payment_method")
        return found

    # ------------------------------------------------------------------ products & prices

    def create_product(self, p: Mapping[str, Any]) -> Record:
        fields = dict(p)
        fields["metadata"] = _new_metadata(p.get("metadata"))
        return self._store(self._products, objects.product(self._mint("prod"), self.now, fields))

    def get_product(self, product_id: str, param: str = "id") -> Record:
        return self._get(self._products, "product", product_id, param)

    def create_price(self, p: Mapping[str, Any], *, active: bool = True) -> Record:
        product_id = p.get("product")
        product_data = p.get("product_data")
        if product_id is not None and product_data is not None:
            raise exclusive(("product", "product_data"))
        if product_id is None and product_data is None:
            raise invalid_request(
                "You must specify either `product` or `product_data` when creating a price.",
                param="product",
            )
        unit_amount = p.get("unit_amount")
        if unit_amount is None:
            unit_amount = _decimal_cents(p.get("unit_amount_decimal"), "unit_amount_decimal")
        if product_data is not None:
            product_id = self.create_product(product_data)["id"]
        product_id = self.get_product(str(product_id), "product")["id"]
        fields = dict(p)
        fields["metadata"] = _new_metadata(p.get("metadata"))
        return self._store(
            self._prices,
            objects.price(
                self._mint("price"),
                self.now,
                product_id,
                unit_amount,
                p.get("recurring"),
                fields,
                active,
            ),
        )

    def get_price(self, price_id: str, param: str = "id") -> Record:
        return self._get(self._prices, "price", price_id, param)

    def update_price(self, price_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_price(price_id)
        changes: dict[str, Any] = {}
        for key in ("active", "nickname", "lookup_key"):
            if key in p:
                changes[key] = p[key]
        if "metadata" in p:
            changes["metadata"] = _merge_metadata(current["metadata"], p["metadata"])
        return self._store(self._prices, self._edit(current, **changes))

    def update_product(self, product_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_product(product_id)
        changes: dict[str, Any] = {"updated": self.now}
        for key in ("name", "description", "active"):
            if key in p:
                changes[key] = p[key]
        if "metadata" in p:
            changes["metadata"] = _merge_metadata(current["metadata"], p["metadata"])
        return self._store(self._products, self._edit(current, **changes))

    # ------------------------------------------------------------------ subscriptions

    def create_subscription(self, p: Mapping[str, Any]) -> Record:
        customer = self.live_customer(p["customer"])
        now = self._time_for(customer["id"])
        method = p.get("collection_method", "charge_automatically")
        if method == "send_invoice" and p.get("days_until_due") is None:
            raise missing_param("days_until_due")
        if method != "send_invoice" and p.get("days_until_due") is not None:
            raise invalid_request(
                "days_until_due can only be set when collection_method is send_invoice.",
                param="days_until_due",
            )
        default_pm = p.get("default_payment_method")
        if default_pm is not None:
            found = self._payment_methods.get(default_pm)
            if found is None or found["customer"] != customer["id"]:
                raise invalid_request(
                    f"The customer does not have a payment method with the ID {default_pm}. "
                    "The payment method must be attached to the customer.",
                    param="default_payment_method",
                    code="resource_missing",
                )
        items = p.get("items") or []
        if not items:
            raise missing_param("items")
        for i, item in enumerate(items):
            self._subscription_price(item, i, create=False)  # refuse before any write
        prices = [
            price
            for i, item in enumerate(items)
            if (price := self._subscription_price(item, i, create=True)) is not None
        ]
        start = p.get("backdate_start_date")
        if start is not None and start > now:
            raise invalid_request(
                "backdate_start_date must be in the past.", param="backdate_start_date"
            )
        start = now if start is None else start
        recurring = prices[0]["recurring"]
        period_start = start
        period_end = _add_interval(start, recurring["interval"], recurring["interval_count"])
        while period_end <= now:
            period_start = period_end
            period_end = _add_interval(
                period_end, recurring["interval"], recurring["interval_count"]
            )
        sub_id = self._mint("sub")
        sub_items = [
            objects.subscription_item(
                self._mint("si"),
                now,
                sub_id,
                price,
                item.get("quantity") or 1,
                _new_metadata(item.get("metadata")),
                (period_start, period_end),
            )
            for item, price in zip(items, prices, strict=True)
        ]
        fields = dict(p)
        fields["metadata"] = _new_metadata(p.get("metadata"))
        fields["collection_method"] = method
        return self._store(
            self._subscriptions,
            objects.subscription(sub_id, now, customer, sub_items, start, fields),
        )

    def _subscription_price(
        self, item: Mapping[str, Any], index: int, *, create: bool
    ) -> Record | None:
        """The recurring price an item bills; with ``create=False`` only check it."""
        param = f"items[{index}][price]"
        if item.get("price") is not None and item.get("price_data") is not None:
            raise exclusive((param, f"items[{index}][price_data]"))
        if item.get("price") is not None:
            price = self.get_price(item["price"], param)
            if price["recurring"] is None:
                raise invalid_request(_ONE_TIME_ONLY, param=param)
            return price
        data = item.get("price_data")
        if data is None:
            raise missing_param(param)
        if data.get("recurring") is None:
            raise missing_param(f"items[{index}][price_data][recurring]")
        self.get_product(data["product"], f"items[{index}][price_data][product]")
        return self.create_price(data, active=False) if create else None

    def get_subscription(self, sub_id: str, param: str = "id") -> Record:
        return self._get(self._subscriptions, "subscription", sub_id, param)

    def update_subscription(self, sub_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_subscription(sub_id)
        changes: dict[str, Any] = {}
        if "metadata" in p:
            changes["metadata"] = _merge_metadata(current["metadata"], p["metadata"])
        others = [k for k in p if k not in ("metadata", "expand")]
        if current["status"] == "canceled" and others:
            raise invalid_request(
                "A canceled subscription can only update its cancellation_details and metadata.",
                param=sorted(others)[0],
            )
        for key in ("description", "days_until_due", "cancel_at_period_end"):
            if key in p:
                changes[key] = p[key]
        if "default_payment_method" in p:
            pm_id = p["default_payment_method"]
            if pm_id is not None:
                found = self._payment_methods.get(pm_id)
                if found is None or found["customer"] != current["customer"]:
                    raise invalid_request(
                        f"The customer does not have a payment method with the ID {pm_id}. "
                        "The payment method must be attached to the customer.",
                        param="default_payment_method",
                        code="resource_missing",
                    )
            changes["default_payment_method"] = pm_id
        return self._store(self._subscriptions, self._edit(current, **changes))

    def cancel_subscription(self, sub_id: str) -> Record:
        current = self.get_subscription(sub_id)
        if current["status"] == "canceled":
            raise invalid_request(
                f"This subscription has already been canceled ({sub_id}).", param="id"
            )
        now = self._time_for(current["customer"])
        details = dict(current["cancellation_details"])
        details["reason"] = "cancellation_requested"
        return self._store(
            self._subscriptions,
            self._edit(
                current,
                status="canceled",
                canceled_at=now,
                ended_at=now,
                cancellation_details=details,
            ),
        )

    # ------------------------------------------------------------------ invoice items

    def create_invoice_item(self, p: Mapping[str, Any]) -> Record:
        customer = self.live_customer(p["customer"])
        now = self._time_for(customer["id"])
        sources = [
            k
            for k in ("amount", "unit_amount", "unit_amount_decimal", "price_data", "pricing")
            if p.get(k) is not None
        ]
        if len(sources) > 1:
            raise exclusive(tuple(sources))
        period = p.get("period") or {"start": now, "end": now}
        if period["end"] < period["start"]:
            raise invalid_request(
                "The period end must be greater than or equal to the period start.",
                param="period[end]",
            )
        invoice_id = p.get("invoice")
        if invoice_id is not None:
            target = self.get_invoice(invoice_id, "invoice")
            if target["customer"] != customer["id"]:
                raise invalid_request(
                    f"The invoice {invoice_id} belongs to a different customer.", param="invoice"
                )
            if target["status"] != "draft":
                raise invalid_request(
                    "Invalid invoice: This invoice is no longer editable",
                    param="invoice",
                    code="invoice_not_editable",
                )
        quantity = p.get("quantity")
        price_record: Record | None = None
        if "amount" in sources:
            if quantity not in (None, 1):
                raise exclusive(("amount", "quantity"))
            amount = p["amount"]
        elif "unit_amount" in sources or "unit_amount_decimal" in sources:
            unit = (
                Decimal(p["unit_amount"])
                if "unit_amount" in sources
                else _decimal(p["unit_amount_decimal"], "unit_amount_decimal")
            )
            amount = _round_cents(unit * (quantity or 1))
        elif "price_data" in sources:
            price_record = self.create_price(p["price_data"], active=False)
            amount = price_record["unit_amount"] * (quantity or 1)
        elif "pricing" in sources:
            price_id = p["pricing"].get("price")
            if price_id is None:
                raise missing_param("pricing[price]")
            price_record = self.get_price(price_id, "pricing[price]")
            amount = price_record["unit_amount"] * (quantity or 1)
        else:
            raise missing_param("amount")
        fields = dict(p)
        fields["metadata"] = _new_metadata(p.get("metadata"))
        item = self._store(
            self._invoice_items,
            objects.invoice_item(
                self._mint("ii"),
                now,
                customer["id"],
                amount,
                quantity or 1,
                period,
                price_record,
                fields,
                invoice_id,
                customer["test_clock"],
            ),
        )
        if invoice_id is not None:
            self._add_lines(invoice_id, [item])
        return item

    def get_invoice_item(self, item_id: str, param: str = "id") -> Record:
        return self._get(self._invoice_items, "invoiceitem", item_id, param)

    def update_invoice_item(self, item_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_invoice_item(item_id)
        invoice = self._editable_invoice_of(current)
        changes: dict[str, Any] = {}
        if "description" in p:
            changes["description"] = p["description"]
        if "metadata" in p:
            changes["metadata"] = _merge_metadata(current["metadata"], p["metadata"])
        if "period" in p and p["period"] is not None:
            changes["period"] = {"end": p["period"]["end"], "start": p["period"]["start"]}
        if "amount" in p:
            changes["amount"] = changes["net_amount"] = p["amount"]
        item = self._store(self._invoice_items, self._edit(current, **changes))
        if invoice is not None:
            self._rebuild_lines(invoice["id"], {item_id: item})
        return item

    def delete_invoice_item(self, item_id: str) -> Record:
        current = self.get_invoice_item(item_id)
        invoice = self._editable_invoice_of(current)
        if invoice is not None:
            self._rebuild_lines(invoice["id"], {item_id: None})
        del self._invoice_items[item_id]
        return freeze(objects.deleted(item_id, "invoiceitem"))

    def _editable_invoice_of(self, item: Record) -> Record | None:
        """The draft an item sits on (None when pending); refuse a finalized or deleted one."""
        if item["invoice"] is None:
            return None
        invoice = self._invoices.get(item["invoice"])
        if invoice is None or invoice.get("deleted") or invoice["status"] != "draft":
            raise invalid_request(
                "Invalid invoice: This invoice is no longer editable",
                param="invoice",
                code="invoice_not_editable",
            )
        return invoice

    # ------------------------------------------------------------------ invoices

    def get_invoice(self, invoice_id: str, param: str = "id") -> Record:
        found = self._get(self._invoices, "invoice", invoice_id, param)
        if found.get("deleted"):
            raise no_such("invoice", invoice_id, param)
        return found

    def _check_payment_method_of(self, customer_id: str, pm_id: str, param: str) -> Record:
        found = self._payment_methods.get(pm_id)
        if found is None:
            raise no_such("PaymentMethod", pm_id, param)
        if found["customer"] != customer_id:
            raise invalid_request(
                f"The customer does not have a payment method with the ID {pm_id}. The payment "
                "method must be attached to the customer.",
                param=param,
            )
        return found

    def _due_date(self, p: Mapping[str, Any], method: str, created: int) -> int | None:
        due_date, days = p.get("due_date"), p.get("days_until_due")
        if due_date is not None and days is not None:
            raise exclusive(("due_date", "days_until_due"))
        if method == "send_invoice":
            if due_date is None and days is None:
                raise invalid_request(
                    "If invoice collection method is 'send_invoice', you must specify "
                    "'due_date' or 'days_until_due'."
                )
        elif due_date is not None or days is not None:
            raise invalid_request(
                "You can only specify 'due_date' or 'days_until_due' if invoice collection "
                "method is 'send_invoice'."
            )
        if days is not None:
            return int(created + days * DAY)
        if due_date is not None and due_date <= created:
            raise invalid_request("Invoice due_date must be in the future.", param="due_date")
        return due_date

    def create_invoice(self, p: Mapping[str, Any]) -> Record:
        customer = self.live_customer(p["customer"])
        created = self._time_for(customer["id"])
        method = p.get("collection_method") or "charge_automatically"
        fields = dict(p)
        fields["collection_method"] = method
        fields["due_date"] = self._due_date(p, method, created)
        fields["metadata"] = _new_metadata(p.get("metadata"))
        if p.get("default_payment_method") is not None:
            self._check_payment_method_of(
                customer["id"], p["default_payment_method"], "default_payment_method"
            )
        invoice_id = self._mint("in")
        self._invoice_lines[invoice_id] = ()
        invoice = self._store(
            self._invoices, objects.invoice(invoice_id, created, customer, fields)
        )
        if p.get("pending_invoice_items_behavior", "exclude") == "include":
            # Stripe sweeps every pending item of the customer, newest first.
            pending = [
                item
                for item in reversed(self._invoice_items.values())
                if item["customer"] == customer["id"] and item["invoice"] is None
            ]
            if pending:
                swept = [
                    self._store(self._invoice_items, self._edit(item, invoice=invoice_id))
                    for item in pending
                ]
                invoice = self._add_lines(invoice_id, swept)
        return invoice

    def _add_lines(self, invoice_id: str, items: list[Record]) -> Record:
        """Prepend lines for ``items`` (newest first, as Stripe orders them)."""
        new_lines = [freeze(objects.line_item(self._mint("il"), i, invoice_id)) for i in items]
        lines = (*new_lines, *self._invoice_lines.get(invoice_id, ()))
        self._invoice_lines[invoice_id] = lines
        return self._store(self._invoices, objects.with_lines(self._invoices[invoice_id], lines))

    def _rebuild_lines(self, invoice_id: str, changed: Mapping[str, Record | None]) -> Record:
        """Refresh (or drop, for ``None``) the lines of the given invoice items."""
        lines: list[Record] = []
        for line in self._invoice_lines.get(invoice_id, ()):
            item_id = line["parent"]["invoice_item_details"]["invoice_item"]
            if item_id not in changed:
                lines.append(line)
                continue
            item = changed[item_id]
            if item is not None:
                lines.append(freeze(objects.line_item(line["id"], item, invoice_id)))
        self._invoice_lines[invoice_id] = tuple(lines)
        return self._store(self._invoices, objects.with_lines(self._invoices[invoice_id], lines))

    def update_invoice(self, invoice_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_invoice(invoice_id)
        fields = [k for k in p if k != "expand"]
        changes: dict[str, Any] = {}
        if current["status"] != "draft":
            # Stripe allows only metadata (and auto_advance) once an invoice is finalized:
            # this is why a due-date extension fails on a real bill.
            refused = sorted(k for k in fields if k not in ("metadata", "auto_advance"))
            if refused:
                raise invalid_request(_NOT_EDITABLE, param=refused[0])
        else:
            for key in ("description", "footer"):
                if key in p:
                    changes[key] = p[key]
            if any(k in p for k in ("collection_method", "due_date", "days_until_due")):
                method = p.get("collection_method") or current["collection_method"]
                wanted = {k: p[k] for k in ("due_date", "days_until_due") if k in p}
                if not wanted and method == "send_invoice":
                    wanted["due_date"] = current["due_date"]
                changes["collection_method"] = method
                changes["due_date"] = self._due_date(wanted, method, current["created"])
            if "default_payment_method" in p:
                if p["default_payment_method"] is not None:
                    self._check_payment_method_of(
                        current["customer"], p["default_payment_method"], "default_payment_method"
                    )
                changes["default_payment_method"] = p["default_payment_method"]
        if "auto_advance" in p:
            changes["auto_advance"] = p["auto_advance"]
            if current["status"] == "draft":
                changes["automatically_finalizes_at"] = (
                    current["created"] + 3601 if p["auto_advance"] else None
                )
        if "metadata" in p:
            changes["metadata"] = _merge_metadata(current["metadata"], p["metadata"])
        return self._store(self._invoices, self._edit(current, **changes))

    def _finalize(self, invoice: Record) -> Record:
        customer = self._customers[invoice["customer"]]
        now = self._time_for(invoice["customer"])
        sequence = int(customer.get("next_invoice_sequence") or 1)
        if not customer.get("deleted"):
            self._store(self._customers, self._edit(customer, next_invoice_sequence=sequence + 1))
        prefix = customer.get("invoice_prefix") or objects.invoice_prefix(invoice["customer"])
        transitions = dict(invoice["status_transitions"])
        transitions["finalized_at"] = now
        changes: dict[str, Any] = {
            # The customer details freeze on the bill at finalization.
            "customer_address": customer.get("address"),
            "customer_email": customer.get("email"),
            "customer_name": customer.get("name"),
            "customer_phone": customer.get("phone"),
            "number": f"{prefix}-{sequence:04d}",
            "status": "open",
            "status_transitions": transitions,
            "effective_at": now,
            "automatically_finalizes_at": None,
            "ending_balance": 0,
        }
        finalized = self._store(self._invoices, self._edit(invoice, **changes))
        if finalized["amount_due"] == 0:
            # Stripe settles a zero invoice the moment it is finalized.
            transitions["paid_at"] = now
            finalized = self._store(
                self._invoices,
                self._edit(
                    finalized, status="paid", attempted=True, status_transitions=transitions
                ),
            )
        return finalized

    def finalize_invoice(self, invoice_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_invoice(invoice_id)
        if current["status"] != "draft":
            raise invalid_request(
                "This invoice is already finalized, you can't re-finalize a non-draft invoice."
            )
        if "auto_advance" in p:
            current = self._store(
                self._invoices, self._edit(current, auto_advance=p["auto_advance"])
            )
        return self._finalize(current)

    def pay_invoice(self, invoice_id: str, p: Mapping[str, Any]) -> Record:
        current = self.get_invoice(invoice_id)
        status = current["status"]
        if status == "paid":
            raise invalid_request("Invoice is already paid")
        if status == "void":
            raise invalid_request(
                "This invoice can no longer be paid because it has a status of void."
            )
        out_of_band = bool(p.get("paid_out_of_band"))
        if out_of_band and p.get("payment_method") is not None:
            raise exclusive(("paid_out_of_band", "payment_method"))
        pm: Record | None = None
        if not out_of_band:
            pm = self._payment_method_for(current, p.get("payment_method"))
        if status == "draft":
            # Paying a draft finalizes it inside the same call, as Stripe does.
            current = self._finalize(current)
            if current["status"] == "paid":
                return current
        now = self._time_for(current["customer"])
        if pm is None:
            transitions = dict(current["status_transitions"])
            transitions["paid_at"] = now
            remaining = current["amount_remaining"]
            return self._store(
                self._invoices,
                self._edit(
                    current,
                    status="paid",
                    amount_paid=current["amount_paid"] + remaining,
                    amount_paid_off_stripe=current["amount_paid_off_stripe"] + remaining,
                    amount_remaining=0,
                    status_transitions=transitions,
                ),
            )
        return self._collect(current, pm, now)

    def _payment_method_for(self, invoice: Record, explicit: str | None) -> Record:
        customer_id = invoice["customer"]
        if explicit is not None:
            return self._check_payment_method_of(customer_id, explicit, "payment_method")
        for candidate in (
            invoice["default_payment_method"],
            self._customers[customer_id].get("invoice_settings", {}).get("default_payment_method"),
        ):
            if candidate is not None:
                found = self._payment_methods.get(candidate)
                if found is not None and found["customer"] == customer_id:
                    return found
        raise invalid_request(_NO_PAYMENT_METHOD)

    def _collect(self, invoice: Record, pm: Record, now: int) -> Record:
        """Charge ``pm`` for what the invoice still owes; a decline raises the 402."""
        amount = invoice["amount_remaining"]
        customer_id = invoice["customer"]
        description = "Payment for Invoice"
        payment_id = self._open_payment_of(invoice)
        if payment_id is None:
            intent = self._store(
                self._payment_intents,
                objects.payment_intent(self._mint("pi"), now, amount, customer_id, description),
            )
            payment = self._store(
                self._invoice_payments,
                objects.invoice_payment(
                    self._mint("inpay"), now, invoice["id"], amount, intent["id"]
                ),
            )
        else:
            payment = self._invoice_payments[payment_id]
            intent = self._payment_intents[payment["payment"]["payment_intent"]]
        card = card_by_last4(pm["card"]["brand"], pm["card"]["last4"])
        decline = card.decline if card is not None else None
        charge = self._store(
            self._charges,
            objects.charge(
                self._mint("ch"),
                now,
                amount,
                customer_id,
                pm,
                intent["id"],
                description,
                decline,
                None if decline is not None else self._mint("txn"),
            ),
        )
        attempts = {"attempted": True, "attempt_count": invoice["attempt_count"] + 1}
        if decline is not None:
            error_fields = {
                "charge": charge["id"],
                "code": decline.code,
                "decline_code": decline.decline_code,
                "doc_url": "https://stripe.com/docs/error-codes/" + decline.code.replace("_", "-"),
                "message": decline.message,
                "payment_method": pm,
                "type": "card_error",
            }
            intent = self._store(
                self._payment_intents,
                self._edit(
                    intent,
                    status="requires_payment_method",
                    latest_charge=charge["id"],
                    payment_method=None,
                    last_payment_error={k: v for k, v in error_fields.items() if v is not None},
                ),
            )
            self._store(self._invoices, self._edit(invoice, **attempts))
            raise card_declined(
                code=decline.code,
                message=decline.message,
                decline_code=decline.decline_code,
                extra={"charge": charge["id"], "payment_intent": intent, "payment_method": pm},
            )
        self._store(
            self._payment_intents,
            self._edit(
                intent,
                status="succeeded",
                amount_received=amount,
                latest_charge=charge["id"],
                payment_method=pm["id"],
                last_payment_error=None,
            ),
        )
        payment_transitions = dict(payment["status_transitions"])
        payment_transitions["paid_at"] = now
        self._store(
            self._invoice_payments,
            self._edit(
                payment, status="paid", amount_paid=amount, status_transitions=payment_transitions
            ),
        )
        transitions = dict(invoice["status_transitions"])
        transitions["paid_at"] = now
        return self._store(
            self._invoices,
            self._edit(
                invoice,
                status="paid",
                amount_paid=invoice["amount_paid"] + amount,
                amount_remaining=0,
                status_transitions=transitions,
                **attempts,
            ),
        )

    def _open_payment_of(self, invoice: Record) -> str | None:
        for payment in reversed(self._invoice_payments.values()):
            if payment["invoice"] == invoice["id"] and payment["status"] == "open":
                return str(payment["id"])
        return None

    def void_invoice(self, invoice_id: str) -> Record:
        current = self.get_invoice(invoice_id)
        if current["status"] == "paid":
            raise invalid_request("Invoices with `paid` payments cannot be voided.")
        if current["status"] != "open":
            raise invalid_request("You can only pass in open invoices. This invoice isn't open.")
        transitions = dict(current["status_transitions"])
        transitions["voided_at"] = self._time_for(current["customer"])
        return self._store(
            self._invoices,
            self._edit(current, status="void", status_transitions=transitions),
        )

    def mark_uncollectible(self, invoice_id: str) -> Record:
        current = self.get_invoice(invoice_id)
        if current["status"] == "uncollectible":
            raise invalid_request("This invoice has already been marked uncollectible.")
        if current["status"] != "open":
            raise invalid_request("You can only pass in open invoices. This invoice isn't open.")
        transitions = dict(current["status_transitions"])
        transitions["marked_uncollectible_at"] = self._time_for(current["customer"])
        return self._store(
            self._invoices,
            self._edit(current, status="uncollectible", status_transitions=transitions),
        )

    def delete_invoice(self, invoice_id: str) -> Record:
        current = self.get_invoice(invoice_id)
        if current["status"] != "draft":
            raise invalid_request("You can only delete draft invoices.")
        # Stripe leaves the swept items attached to the deleted draft (they are not released).
        stub = freeze(objects.deleted(invoice_id, "invoice"))
        self._invoices[invoice_id] = stub
        return stub

    def invoice_line_list(self, invoice_id: str) -> tuple[Record, ...]:
        self.get_invoice(invoice_id, "invoice")
        return self._invoice_lines.get(invoice_id, ())

    # ------------------------------------------------------------------ charges & intents

    def get_charge(self, charge_id: str, param: str = "id") -> Record:
        return self._get(self._charges, "charge", charge_id, param)

    def get_payment_intent(self, intent_id: str, param: str = "intent") -> Record:
        return self._get(self._payment_intents, "payment_intent", intent_id, param)

    def get_invoice_payment(self, payment_id: str, param: str = "id") -> Record:
        return self._get(self._invoice_payments, "invoice_payment", payment_id, param)

    # ------------------------------------------------------------------ idempotency

    def remembered(self, scope: str) -> Record | None:
        return self._idempotency.get(scope)

    def remember(self, scope: str, record: Mapping[str, Any]) -> None:
        self._idempotency[scope] = freeze(record)

    def forget_idempotency_keys(self) -> None:
        """Drop every stored idempotent result (Stripe expires them after 24 hours).

        A snapshot builder can call this after seeding so clones do not carry the
        seeding requests' keys.
        """
        self._idempotency.clear()


def _decimal(text: Any, param: str) -> Decimal:
    try:
        value = Decimal(str(text))
    except InvalidOperation as exc:
        raise invalid_request(f"Invalid decimal: {text}", param=param) from exc
    # Stripe takes at most 12 decimal places; a huge exponent would not survive rounding.
    if not value.is_finite() or abs(value) >= 10**15 or value != round(value, 12):
        raise invalid_request(f"Invalid decimal: {text}", param=param)
    return value


def _round_cents(value: Decimal) -> int:
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _decimal_cents(text: Any, param: str) -> int:
    if text is None:
        raise missing_param("unit_amount")
    return _round_cents(_decimal(text, param))


__all__ = ["TABLES", "Record", "StripeState"]
