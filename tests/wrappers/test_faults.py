"""FaultInjection: vendor-shaped 5xx and timeouts under the clients, seeded, and tagged."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import httpx
import numpy as np
import pytest
import stripe

from vamos_env.clients.fineract import FineractError
from vamos_env.clients.services import ServiceClients
from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.wrappers import FaultInjection, FaultyRoutes
from vamos_env.wrappers.faults import FaultPlan

TOOLS = [
    ("verify_caller", "account"),
    ("get_account", {}),
    ("list_bills", {}),
    ("get_supplier_info", {}),
    ("set_paperless_billing", {"enabled": True}),
]


def faulty_clients(kind: Any, rate: float = 1.0) -> tuple[ServiceClients, FaultPlan]:
    twins = default_snapshot().clone()
    plan = FaultPlan(np.random.default_rng(0), rate, kinds=(kind,))
    clients = ServiceClients.in_process(
        FaultyRoutes(twins.billing, "billing", plan), FaultyRoutes(twins.loans, "loans", plan)
    )
    return clients, plan


def test_clients_see_what_the_real_services_would_send() -> None:
    clients, plan = faulty_clients("server_error")
    with pytest.raises(stripe.APIError) as stripe_500:
        clients.stripe.v1.customers.list()
    assert stripe_500.value.http_status == 500
    assert stripe_500.value.json_body["error"]["type"] == "api_error"  # type: ignore[index]
    with pytest.raises(FineractError) as fineract_500:
        clients.fineract.get_business_date()
    assert fineract_500.value.status == 500
    assert fineract_500.value.code == "error.msg.platform.server.side.error"

    clients, plan = faulty_clients("timeout")
    with pytest.raises(stripe.APIConnectionError):
        clients.stripe.v1.customers.list()
    with pytest.raises(httpx.TimeoutException):
        clients.fineract.get_business_date()
    assert [(f.service, f.kind, f.status) for f in plan.injected] == [
        ("billing", "timeout", None),
        ("loans", "timeout", None),
    ]


def _every_tool(env: FaultInjection, call: ModuleType, seed: int) -> list[dict[str, Any]]:
    env.reset(seed=seed, options=call.CALM_CLEAN)
    infos = []
    for name, arguments in TOOLS:
        args = call.ACCOUNT if arguments == "account" else arguments
        _, _, _, _, info = env.step({"type": "tool_call", "name": name, "arguments": args})
        infos.append(info)
    return infos


def test_rate_one_fails_every_tool_and_tags_the_call(call: ModuleType) -> None:
    env = FaultInjection(call.make_env(), rate=1.0, seed=3)
    infos = _every_tool(env, call, seed=5)
    for info in infos:
        assert "error" in info["tool_results"][0]["result"]
    faults = infos[-1]["faults_injected"]
    assert faults and faults[0]["turn"] == 1 and faults[0]["service"] == "billing"
    assert {f["kind"] for f in faults} <= {"timeout", "server_error"}
    _, reward, terminated, _, info = env.step({"type": "end_call"})
    assert terminated and reward == 0.0
    assert info["faults_injected"] == faults  # still tagged at the end
    # Nothing reached the services: no account change was made.
    assert info["verdict"]["actions"]["checks"][0]["passed"] is False


def test_faults_are_reproducible_from_the_seeds(call: ModuleType) -> None:
    def faults(wrapper_seed: int) -> list[Any]:
        env = FaultInjection(call.make_env(), rate=0.3, seed=wrapper_seed)
        seen = []
        for reset_seed in (7, 8, 9):
            steps = call.run(env, call.PASSING, seed=reset_seed, options=call.CALM_CLEAN)
            seen.append([(s[0], s[4]["faults_injected"]) for s in steps])
        return seen

    first = faults(1)
    assert any(f for call_steps in first for _, f in call_steps)
    assert faults(1) == first
    assert faults(2) != first


def test_rate_zero_changes_nothing(call: ModuleType) -> None:
    env = FaultInjection(call.make_env(), rate=0.0)
    steps = call.run(env, [*call.PASSING, {"type": "end_call"}], seed=0, options=call.CALM_CLEAN)
    assert steps[-1][1] == 1.0 and steps[-1][4]["faults_injected"] == []


def test_only_the_chosen_service_fails(call: ModuleType) -> None:
    env = FaultInjection(call.make_env(), rate=1.0, services=("loans",))
    infos = _every_tool(env, call, seed=0)
    faults = infos[-1]["faults_injected"]
    assert faults and {f["service"] for f in faults} == {"loans"}
    assert all(f["path"].startswith("/fineract-provider/api/v1/") for f in faults)


@pytest.mark.parametrize(
    "kwargs",
    [{"rate": 1.5}, {"rate": -0.1}, {"kinds": ()}, {"kinds": ("boom",)}, {"services": ("x",)}],
)
def test_bad_settings_fail_fast(call: ModuleType, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        FaultInjection(call.make_env(), **kwargs)
