"""ServedTwins: the call's own twins on loopback, its request log, and Twilio call control."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from vamos_env.bridges.served import ServedTwins
from vamos_env.clients.config import ServiceEndpoints
from vamos_env.clients.services import ServiceClients
from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.twins.snapshot import Twins

STRIPE = {"authorization": "Bearer sk_test_vamos"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def twins() -> Twins:
    return default_snapshot().clone()


@pytest.fixture
def served(twins: Twins) -> Iterator[tuple[ServedTwins, Clock]]:
    clock = Clock()
    with ServedTwins(twins, clock=clock) as running:
        yield running, clock


def test_env_names_the_published_variables_and_the_clients_reach_the_call_twins(
    served: tuple[ServedTwins, Clock], twins: Twins
) -> None:
    server, _ = served
    env = server.env
    for name in (
        "STRIPE_API_BASE",
        "STRIPE_API_KEY",
        "FINERACT_API_BASE",
        "FINERACT_USER",
        "FINERACT_PASSWORD",
        "FINERACT_TENANT",
        "RORY_REFERENCE_TIME",
        "TWILIO_API_BASE",
        "TWILIO_ACCOUNT_SID",
        "TWILIO_AUTH_TOKEN",
        "TWILIO_CALL_SID",
    ):
        assert env[name], name
    assert env["STRIPE_API_BASE"] == env["FINERACT_API_BASE"] == server.base_url
    clients = ServiceClients.over_http(ServiceEndpoints.from_env(env))
    try:
        customer = next(iter(twins.billing.state.customers.values()))
        clients.stripe.raw_request(
            "post", f"/v1/customers/{customer['id']}", metadata={"paperless": "true"}
        )
    finally:
        clients.close()
    # The write landed in the very twins of the call (the ones its ledger is read from).
    after = twins.billing.state.customers[customer["id"]]
    assert after["metadata"]["paperless"] == "true"


def test_the_log_has_times_on_the_call_clock_and_parsed_requests(
    served: tuple[ServedTwins, Clock],
) -> None:
    server, clock = served
    base = server.base_url
    clock.now = 3.25
    httpx.get(f"{base}/v1/customers", params={"limit": 2}, headers=STRIPE)
    clock.now = 7.5
    httpx.post(f"{base}/v1/customers", data={"name": "Ada", "metadata[tier]": "x"}, headers=STRIPE)
    clock.now = 9.0
    httpx.get(
        f"{base}/fineract-provider/api/v1/clients",
        params={"externalId": "1374-90128"},
        auth=("mifos", "password"),
        headers={"fineract-platform-tenantid": "default"},
    )
    log = server.log
    assert [(e.time_s, e.method, e.path, e.service, e.status) for e in log] == [
        (3.25, "GET", "/v1/customers", "stripe", 200),
        (7.5, "POST", "/v1/customers", "stripe", 200),
        (9.0, "GET", "/fineract-provider/api/v1/clients", "fineract", 200),
    ]
    assert log[0].query == {"limit": "2"}
    assert log[1].body == {"name": "Ada", "metadata": {"tier": "x"}}
    assert log[1].response["object"] == "customer"
    assert log[2].response["pageItems"][0]["externalId"] == "1374-90128"


def test_admin_routes_are_not_logged(served: tuple[ServedTwins, Clock]) -> None:
    server, _ = served
    token = server.server.admin_token
    answer = httpx.get(
        f"{server.base_url}/__vamos/health", headers={"authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200
    httpx.get(f"{server.base_url}/__vamos/health")  # refused: no token; still not logged
    assert server.log == []
    httpx.get(f"{server.base_url}/nowhere")  # an agent's stray request is logged
    assert [(e.path, e.status, e.service) for e in server.log] == [("/nowhere", 404, "other")]


def test_concurrent_requests_are_each_logged_once(served: tuple[ServedTwins, Clock]) -> None:
    server, _ = served
    errors: list[BaseException] = []

    def hammer(k: int) -> None:
        try:
            with httpx.Client(base_url=server.base_url, headers=STRIPE) as client:
                for j in range(15):
                    client.get("/v1/customers", params={"limit": 1, "email": f"t{k}-{j}@x"})
                    _ = server.log  # reading while others write
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    emails = [e.query["email"] for e in server.log]
    assert len(emails) == 120 and len(set(emails)) == 120


def test_twilio_call_update_transfers_and_hangs_up(served: tuple[ServedTwins, Clock]) -> None:
    server, _ = served
    calls = server.calls
    url = f"{server.base_url}/2010-04-01/Accounts/{calls.account_sid}/Calls/{calls.call_sid}.json"
    auth = (calls.account_sid, calls.auth_token)
    assert httpx.post(url, data={"Status": "completed"}).status_code == 401
    other = url.replace(calls.call_sid, "CA" + "0" * 32)
    assert httpx.post(other, data={"Status": "completed"}, auth=auth).json()["code"] == 20404
    dial = "<Response><Dial>+18005550123</Dial></Response>"
    answer = httpx.post(url, data={"Twiml": dial}, auth=auth)
    assert answer.status_code == 200
    body = answer.json()
    assert body["sid"] == calls.call_sid and body["account_sid"] == calls.account_sid
    assert body["status"] == "in-progress" and calls.transferred_to == "+18005550123"
    assert httpx.post(url, data={"Status": "completed"}, auth=auth).json()["status"] == "completed"
    assert calls.ended
    late = httpx.post(url, data={"Twiml": dial}, auth=auth)
    assert late.status_code == 400 and late.json()["code"] == 21220
    logged = [(e.service, e.status, e.body) for e in server.log]
    assert logged[2] == ("twilio", 200, {"Twiml": dial})
    assert logged[3] == ("twilio", 200, {"Status": "completed"})


def test_stop_frees_the_port_and_keeps_the_log(twins: Twins) -> None:
    served = ServedTwins(twins, clock=lambda: 1.0).start()
    httpx.get(f"{served.base_url}/v1/customers", headers=STRIPE)
    served.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{served.base_url}/v1/customers", headers=STRIPE, timeout=1)
    assert len(served.log) == 1
