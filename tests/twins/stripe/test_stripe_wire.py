"""The wire layer: auth, routing, parameter errors, idempotency, headers, form decoding, cloning."""

from __future__ import annotations

import base64
import json
import pickle

import pytest
import stripe

from vamos_env.twins.stripe import BillingTwin
from vamos_env.twins.stripe.forms import decode_form
from vamos_env.twins.stripe.frozen import FrozenDict, freeze

# --------------------------------------------------------------------------- auth


def test_missing_api_key_is_401(billing):
    response = billing.raw("GET", "/v1/customers", auth=False)
    assert response.status == 401
    error = json.loads(response.body)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("You did not provide an API key.")


def test_empty_bearer_is_401(billing):
    response = billing.raw("GET", "/v1/customers", headers={"Authorization": "Bearer "})
    assert response.status == 401
    assert 'Authorization header to "Bearer' in json.loads(response.body)["error"]["message"]


def test_unknown_key_through_the_sdk_is_authentication_error(billing):
    client = billing.connect(billing.twin, "sk_test_wrong_key_123456")
    with pytest.raises(stripe.AuthenticationError) as caught:
        client.v1.customers.list()
    assert caught.value.http_status == 401
    assert caught.value.user_message == "Invalid API Key provided: sk_test_************3456"


def test_basic_auth_with_key_as_username(billing):
    token = base64.b64encode(b"sk_test_vamos:").decode()
    response = billing.raw("GET", "/v1/customers", headers={"Authorization": f"Basic {token}"})
    assert response.status == 200


def test_several_keys_can_be_accepted(billing):
    twin = BillingTwin(api_keys=("sk_test_a", "sk_test_b"))
    assert billing.connect(twin, "sk_test_b").v1.customers.list().data == []


# --------------------------------------------------------------------------- routing & params


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/v1/foo"), ("GET", "/v1/customers/"), ("PUT", "/v1/customers"), ("GET", "/")],
)
def test_unknown_routes_are_404_unrecognized(billing, method, path):
    response = billing.raw(method, path)
    assert response.status == 404
    message = json.loads(response.body)["error"]["message"]
    assert message.startswith(f"Unrecognized request URL ({method}: {path}).")
    if path.endswith("/") and path != "/":
        assert "remove the trailing slash" in message


def test_missing_required_param(billing):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.create(params={})
    error = caught.value
    assert (error.http_status, error.code, error.param) == (400, "parameter_missing", "customer")
    assert error.user_message == "Missing required param: customer."


def test_unknown_param_top_level_and_nested(billing):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.create(params={"nmae": "typo"})
    assert caught.value.code == "parameter_unknown" and caught.value.param == "nmae"
    assert caught.value.user_message == "Received unknown parameter: nmae"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.create(params={"address": {"zip": "19104"}})
    assert caught.value.param == "address[zip]"


def test_wrong_types(billing):
    customer = billing.customer()
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoice_items.create(params={"customer": customer.id, "amount": "abc"})
    error = caught.value
    assert (error.code, error.param, error.user_message) == (
        "parameter_invalid_integer",
        "amount",
        "Invalid integer: abc",
    )
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.create(params={"customer": customer.id, "auto_advance": "maybe"})
    assert caught.value.user_message == "Invalid boolean: maybe"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.create(params={"customer": customer.id, "collection_method": "cash"})
    assert caught.value.user_message == (
        "Invalid collection_method: must be one of charge_automatically or send_invoice"
    )
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.list(params={"limit": 101})
    assert caught.value.param == "limit"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.update(customer.id, params={"metadata": "oops"})
    assert caught.value.param == "metadata"
    response = billing.raw("POST", "/v1/customers", body="name=")
    assert response.status == 200  # name is one of the fields Stripe lets you unset
    response = billing.raw("POST", "/v1/products", body="name=")
    assert json.loads(response.body)["error"]["code"] == "parameter_invalid_empty"


def test_missing_object_in_a_param_names_the_param(billing):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.create(params={"customer": "cus_ghost"})
    assert (caught.value.http_status, caught.value.param) == (404, "customer")
    assert caught.value.user_message == "No such customer: 'cus_ghost'"


# --------------------------------------------------------------------------- headers


def test_response_headers_echo_version_and_carry_request_id(billing):
    response = billing.raw("GET", "/v1/customers", headers={"Stripe-Version": "2024-06-20"})
    assert response.headers["stripe-version"] == "2024-06-20"
    assert response.headers["request-id"].startswith("req_")
    assert response.headers["content-type"] == "application/json"
    default = billing.raw("GET", "/v1/customers")
    assert default.headers["stripe-version"] == stripe.api_version
    assert default.headers["request-id"] != response.headers["request-id"]


def test_error_bodies_carry_a_request_log_url(billing):
    response = billing.raw("GET", "/v1/customers/cus_nope")
    error = json.loads(response.body)["error"]
    assert error["request_log_url"].endswith(response.headers["request-id"])
    assert error["doc_url"].endswith("/resource-missing")


# --------------------------------------------------------------------------- idempotency


def test_idempotent_replay_returns_the_first_response(billing):
    first = billing.v1.customers.create(
        params={"name": "Once"}, options={"idempotency_key": "create-once"}
    )
    second = billing.v1.customers.create(
        params={"name": "Once"}, options={"idempotency_key": "create-once"}
    )
    assert first.id == second.id
    assert len(billing.twin.state.customers) == 1
    raw = billing.raw(
        "POST", "/v1/customers", body="name=Once", headers={"Idempotency-Key": "create-once"}
    )
    assert raw.headers["idempotent-replayed"] == "true"
    assert json.loads(raw.body)["id"] == first.id


def test_idempotency_key_with_other_params_is_an_idempotency_error(billing):
    billing.v1.customers.create(params={"name": "A"}, options={"idempotency_key": "k1"})
    with pytest.raises(stripe.IdempotencyError) as caught:
        billing.v1.customers.create(params={"name": "B"}, options={"idempotency_key": "k1"})
    assert caught.value.http_status == 400
    assert caught.value.json_body["error"]["type"] == "idempotency_error"
    with pytest.raises(stripe.IdempotencyError):
        billing.v1.products.create(params={"name": "A"}, options={"idempotency_key": "k1"})
    assert len(billing.twin.state.customers) == 1


def test_idempotency_is_scoped_per_api_key(billing):
    twin = BillingTwin(api_keys=("sk_test_a", "sk_test_b"))
    a = billing.connect(twin, "sk_test_a").v1.customers.create(
        params={"name": "A"}, options={"idempotency_key": "same"}
    )
    b = billing.connect(twin, "sk_test_b").v1.customers.create(
        params={"name": "B"}, options={"idempotency_key": "same"}
    )
    assert a.id != b.id


def test_a_replayed_decline_does_not_charge_again(billing):
    customer = billing.customer()
    pm = billing.card(customer.id, "pm_card_chargeDeclined")
    invoice = billing.bill(customer.id)
    for _ in range(3):
        with pytest.raises(stripe.CardError):
            billing.v1.invoices.pay(
                invoice.id, params={"payment_method": pm.id}, options={"idempotency_key": "pay-1"}
            )
    assert len(billing.twin.state.charges) == 1


def test_validation_failures_are_not_remembered(billing):
    with pytest.raises(stripe.InvalidRequestError):
        billing.v1.customers.create(params={"nmae": "x"}, options={"idempotency_key": "fix-me"})
    fixed = billing.v1.customers.create(params={"name": "x"}, options={"idempotency_key": "fix-me"})
    assert fixed.name == "x"


# --------------------------------------------------------------------------- forms & records


def test_decode_form_bracket_notation():
    form = decode_form(
        "name=A%20B&metadata[k]=v&items[0][price]=p1&items[1][price]=p2"
        "&expand[]=customer&expand[]=data.x&address[line1]=1%20Main&metadata[empty]="
    )
    assert form == {
        "name": "A B",
        "metadata": {"k": "v", "empty": ""},
        "items": {"0": {"price": "p1"}, "1": {"price": "p2"}},
        "expand": ["customer", "data.x"],
        "address": {"line1": "1 Main"},
    }
    assert decode_form("a[b=1") == {"a[b": "1"}
    assert decode_form("") == {}


def test_decode_form_conflicting_shapes_are_refused(billing):
    response = billing.raw("POST", "/v1/customers", body="metadata=x&metadata[k]=v")
    assert response.status == 400
    assert json.loads(response.body)["error"]["param"] == "metadata"


def test_stored_records_are_immutable(billing):
    customer = billing.customer(metadata={"a": "1"})
    record = billing.twin.state.customers[customer.id]
    assert isinstance(record, FrozenDict)
    with pytest.raises(TypeError):
        record["name"] = "mutated"
    with pytest.raises(TypeError):
        record["metadata"]["a"] = "2"
    with pytest.raises(TypeError):
        billing.twin.state.customers["cus_x"] = record  # the view is read-only too
    assert freeze({"a": [1, {"b": 2}]}) == {"a": (1, {"b": 2})}


def test_a_refused_write_leaves_no_trace(billing):
    customer = billing.customer()
    before = billing.twin.state.dump()
    with pytest.raises(stripe.InvalidRequestError):  # the write runs, the expansion fails
        billing.v1.customers.update(
            customer.id, params={"name": "Changed", "expand": ["nonexistent"]}
        )
    after = billing.twin.state.dump()
    del before["idempotency"], after["idempotency"]
    assert after == before


def test_unexpected_exceptions_become_stripe_api_errors(billing, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(billing.twin.state, "get_customer", explode)
    response = billing.raw("GET", "/v1/customers/cus_x")
    assert response.status == 500
    assert json.loads(response.body)["error"]["type"] == "api_error"


# --------------------------------------------------------------------------- cloning


def test_clone_is_independent_and_ids_are_deterministic(billing):
    customer = billing.customer(metadata={"account_number": "4417-90781"})
    billing.bill(customer.id)
    snapshot = json.dumps(billing.twin.state.dump(), sort_keys=True)
    left, right = billing.twin.clone(), billing.twin.clone()
    ids = []
    for twin in (left, right):
        client = billing.connect(twin)
        made = client.v1.customers.create(params={"name": "Clone"})
        client.v1.customers.update(customer.id, params={"metadata": {"paperless": "true"}})
        ids.append(made.id)
    assert ids[0] == ids[1]
    assert json.dumps(billing.twin.state.dump(), sort_keys=True) == snapshot
    assert customer.id in left.state.customers
    assert "paperless" not in billing.twin.state.customers[customer.id]["metadata"]


def test_twin_pickles_for_shipping_to_workers(billing):
    customer = billing.customer(metadata={"account_number": "4417-90781"})
    billing.bill(customer.id)
    copy = pickle.loads(pickle.dumps(billing.twin))
    assert copy.state.dump() == billing.twin.state.dump()
    assert isinstance(copy.state.customers[customer.id], FrozenDict)
    assert billing.connect(copy).v1.customers.retrieve(customer.id).id == customer.id
