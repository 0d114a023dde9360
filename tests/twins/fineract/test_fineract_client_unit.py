"""Our httpx Fineract client: conversions, errors, environment, async twin."""

from __future__ import annotations

import asyncio
from datetime import date
from decimal import Decimal

import httpx
import pytest

from vamos_env import clock
from vamos_env.clients.fineract import (
    AsyncFineractClient,
    FineractClient,
    FineractError,
    fineract_date,
    parse_date,
    to_cents,
    to_major,
)
from vamos_env.twins.fineract import LoanTwin
from vamos_env.twins.transport import TwinTransport


def test_dates_out_and_in():
    assert fineract_date(date(2026, 9, 10)) == "10 September 2026"
    assert fineract_date(date(2027, 1, 3)) == "03 January 2027"
    assert parse_date([2026, 9, 10]) == date(2026, 9, 10)
    assert parse_date("2026-09-10") == date(2026, 9, 10)
    with pytest.raises(ValueError):
        parse_date(None)


@pytest.mark.parametrize(
    ("value", "cents"),
    [(658.41, 65841), ("658.410000", 65841), (0, 0), (100, 10000), (0.1 + 0.2, 30), (16.67, 1667)],
)
def test_to_cents(value, cents):
    assert to_cents(value) == cents


def test_to_major_is_exact():
    assert to_major(65841) == Decimal("658.41")
    assert to_major(5) == Decimal("0.05")
    assert str(to_major(100000)) == "1000.00"


def test_error_code_prefers_the_specific_error():
    domain = FineractError(
        403,
        {
            "userMessageGlobalisationCode": "validation.msg.domain.rule.violation",
            "errors": [{"userMessageGlobalisationCode": "error.msg.x", "defaultUserMessage": "X"}],
        },
    )
    assert domain.code == "error.msg.x" and "X" in str(domain)
    bare = FineractError(400, {"userMessageGlobalisationCode": "error.msg.invalid.request.body"})
    assert bare.code == "error.msg.invalid.request.body" and bare.errors == []
    servlet = FineractError(400, {"status": 400, "error": "Bad Request", "message": "No tenant"})
    assert servlet.code == "" and "No tenant" in str(servlet)


def test_from_env_reads_the_agents_variables():
    env = {
        "FINERACT_API_BASE": "https://fineract.example:8443/",
        "FINERACT_USER": "u",
        "FINERACT_PASSWORD": "p",
        "FINERACT_TENANT": "t",
    }
    with FineractClient.from_env(env) as client:
        http = client._http
        assert str(http.base_url) == "https://fineract.example:8443/fineract-provider/api/v1/"
        assert http.headers["Fineract-Platform-TenantId"] == "t"
    with pytest.raises(KeyError):
        FineractClient.from_env({})


def test_every_call_carries_auth_tenant_and_exact_amounts():
    seen: list[httpx.Request] = []
    twin = LoanTwin()
    inner = TwinTransport(twin)

    class Spy(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            seen.append(request)
            return inner.handle_request(request)

    with FineractClient("http://x", "mifos", "password", transport=Spy()) as client:
        product = client.create_loan_product(name="P", short_name="P")
        person = client.create_client(
            firstname="A", lastname="B", external_id="E", activation_date=date(2024, 1, 1)
        )
        client.submit_loan(
            client_id=person,
            product_id=product,
            principal_cents=65_841,
            installments=6,
            submitted_on=clock.TODAY,
            expected_disbursement_on=clock.TODAY,
        )
    assert all(r.headers["Fineract-Platform-TenantId"] == "default" for r in seen)
    assert all(r.headers["Authorization"].startswith("Basic ") for r in seen)
    assert b'"principal":658.41' in seen[-1].content
    assert b'"dateFormat":"dd MMMM yyyy"' in seen[-1].content
    assert b'"submittedOnDate":"10 September 2026"' in seen[-1].content


def test_request_passthrough_and_non_json_answers():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/html"):
            return httpx.Response(502, text="<html>bad gateway</html>")
        return httpx.Response(200, json={"echo": request.url.params.get("q")})

    with FineractClient("http://x", "u", "p", transport=httpx.MockTransport(handler)) as client:
        assert client.request("GET", "/anything", params={"q": "1"}) == {"echo": "1"}
        with pytest.raises(FineractError) as caught:
            client.request("GET", "/html")
    assert caught.value.status == 502 and "bad gateway" in caught.value.body["raw"]


def test_async_client_against_the_twin():
    async def scenario() -> dict:
        twin = LoanTwin()
        async with AsyncFineractClient(
            "http://twin", "mifos", "password", transport=TwinTransport(twin)
        ) as client:
            assert await client.get_business_date() == clock.TODAY
            product = await client.create_loan_product(name="P", short_name="P")
            person = await client.create_client(
                firstname="A", lastname="B", external_id="4417-1", activation_date=date(2024, 1, 1)
            )
            found = await client.find_client_by_external_id("4417-1")
            assert found is not None and found["id"] == person
            loan_id = await client.submit_loan(
                client_id=person,
                product_id=product,
                principal_cents=10_000,
                installments=3,
                submitted_on=clock.TODAY,
                expected_disbursement_on=clock.TODAY,
            )
            await client.approve_loan(loan_id, on=clock.TODAY)
            await client.disburse_loan(loan_id, on=clock.TODAY)
            await client.make_repayment(loan_id, amount_cents=10_000, on=clock.TODAY)
            with pytest.raises(FineractError):
                await client.make_repayment(loan_id, amount_cents=1, on=date(2027, 1, 1))
            assert len(await client.list_payment_types()) >= 1
            assert len(await client.list_loan_products()) == 1
            assert (await client.get_client(person))["externalId"] == "4417-1"
            await client.set_business_date(date(2026, 9, 11))
            return await client.get_loan(loan_id)

    loan = asyncio.run(scenario())
    assert loan["status"]["id"] == 600
