"""Tenant, authentication, routing and garbage input: always Fineract's shapes, never a 500."""

from __future__ import annotations

import json

import pytest

from vamos_env.clients.fineract import FineractClient, FineractError
from vamos_env.twins.transport import TwinTransport


def test_missing_tenant_is_the_filter_400(loans):
    with loans.http(tenant=None) as http:
        response = http.get("/clients")
    assert response.status_code == 400
    body = response.json()
    assert body["status"] == 400 and body["error"] == "Bad Request"
    assert "No tenant identifier found" in body["message"]
    assert body["path"] == "/fineract-provider/api/v1/clients"


def test_tenant_identifier_query_parameter_is_accepted(loans):
    with loans.http(tenant=None) as http:
        response = http.get("/offices", params={"tenantIdentifier": "default"})
    assert response.status_code == 200
    assert response.json()[0]["name"] == "Head Office"


def test_unknown_tenant_is_refused(loans):
    with loans.http(tenant="acme") as http:
        response = http.get("/offices")
    assert response.status_code == 400
    assert response.json()["message"] == "The tenant identifier: acme is not valid."


@pytest.mark.parametrize("auth", [("mifos", "wrong"), ("nobody", "password"), None])
def test_bad_or_missing_credentials_are_401(loans, auth):
    with loans.http(auth=auth) as http:
        response = http.get("/clients")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Basic realm="Fineract Platform API"'
    body = response.json()
    assert body["userMessageGlobalisationCode"] == "error.msg.not.authenticated"
    assert body["defaultUserMessage"] == "Unauthenticated. Please login."


def test_malformed_basic_header_is_401(loans):
    with loans.http(auth=None) as http:
        response = http.get("/clients", headers={"Authorization": "Basic !!!not-base64"})
    assert response.status_code == 401


def test_client_raises_fineract_error_on_bad_password(loans):
    wrong = FineractClient(loans.base_url, "mifos", "nope", transport=TwinTransport(loans.twin))
    with wrong, pytest.raises(FineractError) as caught:
        wrong.list_payment_types()
    assert caught.value.status == 401
    assert caught.value.code == "error.msg.not.authenticated"


def test_unknown_route_is_404_in_fineract_shape(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.request("GET", "/savingsaccounts/1/frobnicate")
    assert caught.value.status == 404
    assert caught.value.body["userMessageGlobalisationCode"] == "error.msg.resource.not.found"


def test_wrong_method_on_known_path_is_405(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.request("DELETE", "/clients")
    assert caught.value.status == 405


def test_non_numeric_id_is_404(loans):
    with loans.http() as http:
        response = http.get("/loans/abc")
    assert response.status_code == 404


def test_path_outside_the_api_is_404(loans):
    if loans.base_url != "http://fineract.twin":
        pytest.skip("the loopback server shares its root with Stripe: it owns paths outside both")
    with loans.http() as http:
        response = http.get(loans.base_url + "/actuator/health")
    assert response.status_code == 404
    assert response.json()["httpStatusCode"] == "404"


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b"{not json",
        b"[1, 2, 3]",
        b'"just a string"',
        b"null",
        b'{"officeId": NaN}',
        b"\xff\xfe\x00garbage",
        b"[" * 5000 + b"]" * 5000,
    ],
)
@pytest.mark.parametrize("path", ["/clients", "/loans", "/loanproducts", "/businessdate"])
def test_garbage_bodies_get_invalid_request_body(loans, raw, path):
    with loans.http() as http:
        response = http.post(path, content=raw)
    assert response.status_code == 400
    body = response.json()
    assert body["userMessageGlobalisationCode"] == "error.msg.invalid.request.body"


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/loans/1", {"command": "approve"}),
        ("/loans/1", {"command": "disburse"}),
        ("/loans/1/transactions", {"command": "repayment"}),
    ],
)
def test_garbage_bodies_on_commands(loans, path, params):
    loans.open_loan(10_000, 2)
    with loans.http() as http:
        for raw in (b"", b"{", b"[]", b"42"):
            response = http.post(path, params=params, content=raw)
            assert response.status_code == 400, raw
            assert (
                response.json()["userMessageGlobalisationCode"] == "error.msg.invalid.request.body"
            )


def test_unsupported_parameter_is_named(loans):
    with loans.http() as http:
        response = http.post(
            "/clients",
            content=json.dumps({"officeId": 1, "fullname": "A B", "legalFormId": 1, "shoeSize": 9}),
        )
    assert response.status_code == 400
    body = response.json()
    assert body["userMessageGlobalisationCode"] == "validation.msg.validation.errors.exist"
    assert body["errors"] == [
        {
            "developerMessage": "The parameter shoeSize is not supported.",
            "defaultUserMessage": "The parameter shoeSize is not supported.",
            "userMessageGlobalisationCode": "error.msg.parameter.unsupported",
            "parameterName": "shoeSize",
            "value": None,
            "args": [{"value": "shoeSize"}],
        }
    ]


@pytest.mark.parametrize("command", ["frobnicate", None])
def test_unknown_or_missing_loan_command(loans, command):
    loan_id = loans.open_loan(10_000, 2)
    params = {} if command is None else {"command": command}
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", f"/loans/{loan_id}", params=params, json={})
    assert caught.value.status == 400
    assert caught.value.code == "error.msg.query.parameter.value.unsupported"
    assert caught.value.errors[0]["parameterName"] == "command"


def test_known_but_unmodelled_command_is_a_domain_refusal(loans):
    loan_id = loans.open_loan(10_000, 2)
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST", f"/loans/{loan_id}/transactions", params={"command": "writeoff"}, json={}
        )
    assert caught.value.status == 403
    assert caught.value.code == "error.msg.twin.feature.not.supported"


@pytest.mark.parametrize(
    "payload",
    [
        {"clientId": "abc"},
        {"clientId": True},
        {"clientId": 1.5},
        {"productId": [1]},
        {"productId": {"id": 1}},
        {"productId": 99999999999999999999999},
        {"productId": 1, "clientId": 1, "principal": "lots", "locale": "en"},
        {"productId": 1, "clientId": 1, "principal": 1e400, "locale": "en"},
        {"productId": 1, "clientId": 1, "numberOfRepayments": "3.5", "locale": "en"},
        {"productId": 1, "clientId": 1, "submittedOnDate": 20260910},
        {"productId": 1, "clientId": 1, "locale": "xx_YY", "principal": 5},
        {"productId": 1, "clientId": 1, "locale": "", "principal": 5},
        {
            "productId": 1,
            "clientId": 1,
            "dateFormat": "dd MMMM yyyy HH",
            "locale": "en",
            "submittedOnDate": "10 September 2026",
        },
    ],
)
def test_wrongly_typed_loan_fields_never_500(loans, payload):
    loans.product()
    loans.customer()
    with loans.http() as http:
        response = http.post("/loans", content=json.dumps(payload))
    assert 400 <= response.status_code < 500
    assert response.json()["userMessageGlobalisationCode"]
