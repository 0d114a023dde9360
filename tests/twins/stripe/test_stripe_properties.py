"""Property tests: idempotency never double-charges, clones never leak, garbage never crashes."""

from __future__ import annotations

import json

import stripe
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vamos_env.twins.http import Request
from vamos_env.twins.stripe import BillingTwin
from vamos_env.twins.transport import TwinStripeHTTPClient

FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# --------------------------------------------------------------------------- (1) idempotency

PAY_ACTIONS = st.lists(
    st.tuples(
        st.integers(0, 2),  # which invoice
        st.integers(0, 4),  # which idempotency key
        st.booleans(),  # True: the good card, False: an insufficient-funds card
    ),
    min_size=1,
    max_size=12,
)


@FAST
@given(actions=PAY_ACTIONS)
def test_idempotent_replays_never_double_charge(billing, actions):
    twin = billing.twin.clone()  # each example starts from the fixture's empty twin
    client = billing.connect(twin)
    customer = client.v1.customers.create(params={"name": "Prop"})
    good = client.v1.payment_methods.attach("pm_card_visa", params={"customer": customer.id})
    bad = client.v1.payment_methods.attach(
        "pm_card_chargeDeclinedInsufficientFunds", params={"customer": customer.id}
    )
    invoices = []
    for amount in (1000, 2500, 4000):
        client.v1.invoice_items.create(params={"customer": customer.id, "amount": amount})
        invoice = client.v1.invoices.create(
            params={
                "customer": customer.id,
                "collection_method": "send_invoice",
                "days_until_due": 20,
                "pending_invoice_items_behavior": "include",
            }
        )
        invoices.append(client.v1.invoices.finalize_invoice(invoice.id))

    first_use: dict[int, tuple[tuple[int, bool], str]] = {}
    paid = [False, False, False]
    expected_charges = 0
    for invoice_index, key_index, use_good in actions:
        key = f"pay-{key_index}"
        request = (invoice_index, use_good)
        pm = good if use_good else bad
        try:
            client.v1.invoices.pay(
                invoices[invoice_index].id,
                params={"payment_method": pm.id},
                options={"idempotency_key": key},
            )
            outcome = "paid"
        except stripe.IdempotencyError:
            outcome = "conflict"
        except stripe.CardError:
            outcome = "declined"
        except stripe.InvalidRequestError:
            outcome = "refused"
        if key_index in first_use:
            first_request, first_outcome = first_use[key_index]
            # Same key: the same request replays the first outcome, another one conflicts.
            assert outcome == (first_outcome if first_request == request else "conflict")
            continue
        first_use[key_index] = (request, outcome)
        if paid[invoice_index]:
            assert outcome == "refused"
            continue
        expected_charges += 1
        assert outcome == ("paid" if use_good else "declined")
        paid[invoice_index] = paid[invoice_index] or use_good

    charges = list(twin.state.charges.values())
    assert len(charges) == expected_charges
    for index, invoice in enumerate(invoices):
        stored = twin.state.invoices[invoice.id]
        succeeded = [
            c
            for c in charges
            if c["status"] == "succeeded"
            and twin.state.payment_intents[c["payment_intent"]]["id"]
            in {
                p["payment"]["payment_intent"]
                for p in twin.state.invoice_payments.values()
                if p["invoice"] == invoice.id
            }
        ]
        assert len(succeeded) == (1 if paid[index] else 0)
        assert stored["amount_paid"] == (invoice.amount_due if paid[index] else 0)
        assert stored["status"] == ("paid" if paid[index] else "open")


# --------------------------------------------------------------------------- (2) clones

WRITES = st.lists(
    st.sampled_from(
        [
            "customer",
            "metadata",
            "unset_metadata",
            "card",
            "detach",
            "item",
            "invoice",
            "finalize",
            "pay",
            "decline",
            "void",
            "delete_customer",
            "clock",
            "subscription",
        ]
    ),
    min_size=1,
    max_size=15,
)


def _seeded() -> BillingTwin:
    twin = BillingTwin()
    client = stripe.StripeClient(
        "sk_test_vamos",
        http_client=TwinStripeHTTPClient(twin),
        base_addresses={"api": "http://billing.twin"},
        max_network_retries=0,
    )
    for i in range(3):
        customer = client.v1.customers.create(
            params={"name": f"Seed {i}", "metadata": {"account_number": f"1000-0000{i}"}}
        )
        client.v1.payment_methods.attach("pm_card_visa", params={"customer": customer.id})
        client.v1.invoice_items.create(params={"customer": customer.id, "amount": 1000 + i})
        invoice = client.v1.invoices.create(
            params={
                "customer": customer.id,
                "collection_method": "send_invoice",
                "days_until_due": 20,
                "pending_invoice_items_behavior": "include",
            }
        )
        client.v1.invoices.finalize_invoice(invoice.id)
    return twin


SEEDED = _seeded()


def _apply(client: stripe.StripeClient, twin: BillingTwin, write: str, step: int) -> None:
    v1 = client.v1
    customers = [c for c in twin.state.customers.values() if not c.get("deleted")]
    target = customers[step % len(customers)]["id"] if customers else None
    invoices = [i for i in twin.state.invoices.values() if not i.get("deleted")]
    invoice = invoices[step % len(invoices)]["id"] if invoices else None
    cards = [p for p in twin.state.payment_methods.values() if p["customer"] == target]
    if write == "customer":
        v1.customers.create(params={"name": f"New {step}", "metadata": {"k": str(step)}})
    elif write == "metadata" and target:
        v1.customers.update(target, params={"metadata": {"paperless": str(step)}})
    elif write == "unset_metadata" and target:
        v1.customers.update(target, params={"metadata": {"account_number": ""}})
    elif write == "card" and target:
        v1.payment_methods.attach("pm_card_amex", params={"customer": target})
    elif write == "detach" and cards:
        v1.payment_methods.detach(cards[0]["id"])
    elif write == "item" and target:
        v1.invoice_items.create(params={"customer": target, "amount": 50 + step})
    elif write == "invoice" and target:
        v1.invoices.create(
            params={
                "customer": target,
                "collection_method": "send_invoice",
                "days_until_due": 10,
                "pending_invoice_items_behavior": "include",
            }
        )
    elif write == "finalize" and invoice:
        v1.invoices.finalize_invoice(invoice)
    elif write == "pay" and invoice:
        v1.invoices.pay(invoice, params={"paid_out_of_band": True})
    elif write == "decline" and invoice and target:
        pm = v1.payment_methods.attach("pm_card_chargeDeclined", params={"customer": target})
        v1.invoices.pay(invoice, params={"payment_method": pm.id})
    elif write == "void" and invoice:
        v1.invoices.void_invoice(invoice)
    elif write == "delete_customer" and target:
        v1.customers.delete(target)
    elif write == "clock":
        v1.test_helpers.test_clocks.create(params={"frozen_time": 1_700_000_000 + step})
    elif write == "subscription" and target:
        product = v1.products.create(params={"name": "P"})
        v1.subscriptions.create(
            params={
                "customer": target,
                "items": [
                    {
                        "price_data": {
                            "currency": "usd",
                            "product": product.id,
                            "unit_amount": 0,
                            "recurring": {"interval": "month"},
                        }
                    }
                ],
            }
        )


@FAST
@given(writes=WRITES)
def test_a_clones_writes_never_change_the_original(billing, writes):
    before = json.dumps(SEEDED.state.dump(), sort_keys=True)
    clone = SEEDED.clone()
    client = billing.connect(clone)
    for step, write in enumerate(writes):
        try:
            _apply(client, clone, write, step)
        except stripe.StripeError as error:
            assert error.http_status in (400, 402, 404), error  # refusals, never a 500
    assert json.dumps(SEEDED.state.dump(), sort_keys=True) == before
    # and a second clone sees the seed, not the first clone's writes
    assert json.dumps(SEEDED.clone().state.dump(), sort_keys=True) == before


# --------------------------------------------------------------------------- (3) garbage

PATH_PARTS = st.sampled_from(
    [
        "v1",
        "customers",
        "invoices",
        "invoiceitems",
        "payment_methods",
        "subscriptions",
        "prices",
        "products",
        "charges",
        "payment_intents",
        "test_helpers",
        "test_clocks",
        "search",
        "lines",
        "pay",
        "finalize",
        "attach",
        "detach",
        "advance",
        "void",
        "payment_methods",
        "cus_x",
        "in_x",
        "pm_card_visa",
        "%00",
        "%ZZ",
        "",
        "..",
    ]
)
FIELD_NAMES = st.sampled_from(
    [
        "customer",
        "amount",
        "metadata",
        "metadata[a]",
        "items[0][price]",
        "items[x][price_data][recurring][interval]",
        "expand[]",
        "expand[0]",
        "limit",
        "starting_after",
        "ending_before",
        "query",
        "page",
        "due_date",
        "days_until_due",
        "collection_method",
        "payment_method",
        "paid_out_of_band",
        "pending_invoice_items_behavior",
        "period[start]",
        "period[end]",
        "address[line1]",
        "invoice_settings[default_payment_method]",
        "frozen_time",
        "created[gte]",
        "type",
        "card[token]",
        "price_data[product]",
        "unit_amount_decimal",
        "quantity",
        "a[b][c][d]",
        "[]",
        "x[",
    ]
)
VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "0",
            "-1",
            "abc",
            "true",
            "99999999999999999999999",
            "1e999999",
            "NaN",
            "12.5",
            "data.customer",
            "email:'x'",
            "pm_card_visa",
            "tok_visa",
        ]
    ),
    st.text(max_size=12),
)
FORMS = st.lists(st.tuples(FIELD_NAMES, VALUES), max_size=6).map(
    lambda pairs: "&".join(f"{k}={v}" for k, v in pairs)
)


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", ""]),
    parts=st.lists(PATH_PARTS, max_size=5),
    form=st.one_of(FORMS, st.text(max_size=40)),
    raw_body=st.binary(max_size=40),
    use_raw=st.booleans(),
    auth=st.sampled_from(
        ["Bearer sk_test_vamos", "Bearer sk_test_vamos", "", "Basic !!", "Bearer x", "Token a"]
    ),
    idempotency_key=st.one_of(st.none(), st.sampled_from(["k", "k2"])),
)
def test_garbage_requests_never_raise_and_never_500(
    method, parts, form, raw_body, use_raw, auth, idempotency_key
):
    twin = SEEDED.clone()
    headers = {"authorization": auth} if auth else {}
    if idempotency_key:
        headers["idempotency-key"] = idempotency_key
    path = "/" + "/".join(parts)
    body = raw_body if use_raw else form.encode()
    for _ in range(2):  # the second send exercises idempotent replay and conflicts
        before = _ledger(twin)
        response = twin.handle(Request(method, path, form, headers, body))
        assert response.status != 500, response.body
        payload = json.loads(response.body)
        assert isinstance(payload, dict)
        if response.status >= 400:
            assert set(payload) == {"error"} and "message" in payload["error"]
            # A refusal (other than a card decline) leaves the ledger as it was.
            assert response.status == 402 or _ledger(twin) == before


def _ledger(twin: BillingTwin) -> str:
    state = twin.state.dump()
    del state["idempotency"], state["counters"]
    return json.dumps(state, sort_keys=True)
