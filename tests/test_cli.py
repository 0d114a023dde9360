"""The command line: the demo job and ``vamos twins serve`` for outside agents."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import stripe

from vamos_env.cli import main
from vamos_env.clients.config import ServiceEndpoints
from vamos_env.clients.services import ServiceClients
from vamos_env.envs.energy.seed import SeedReport, default_snapshot, seed_world, verify_world


@contextmanager
def served(*extra: str) -> Iterator[dict[str, str]]:
    """Run ``vamos twins serve`` in a child process; yield the variables it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "vamos_env.cli", "twins", "serve", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    env: dict[str, str] = {}
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "=" in line and not line.startswith("#"):
                key, value = line.strip().split("=", 1)
                env[key] = value
            if line.startswith("# health:"):
                env["ADMIN_TOKEN"] = line.split("Bearer ", 1)[1].split("'", 1)[0]
                break
        assert env, process.stderr.read() if process.stderr else "no output"
        yield env
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_demo_prints_the_accounts_and_the_clone_timing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["twins", "show", "--clones", "50"]) == 0
    out = capsys.readouterr().out
    for account in default_snapshot().report.manifest.accounts:
        assert account.account_number in out
    assert "clone() of both twins: median" in out
    assert "SYNTHETIC" in out


def test_serve_prints_what_an_outside_agent_needs_and_seeding_works_over_http() -> None:
    with served() as env:
        assert env.pop("ADMIN_TOKEN")
        assert set(env) == {
            "STRIPE_API_BASE",
            "STRIPE_API_KEY",
            "FINERACT_API_BASE",
            "FINERACT_USER",
            "FINERACT_PASSWORD",
            "FINERACT_TENANT",
            "RORY_REFERENCE_TIME",
        }
        assert env["RORY_REFERENCE_TIME"] == "2026-09-10T00:59:09Z"
        # The same seeding code that fills the in-process twins, over real sockets.
        clients = ServiceClients.over_http(ServiceEndpoints.from_env(env))
        try:
            report: SeedReport = seed_world(clients, default_snapshot().report.manifest)
            verify_world(clients, report)
        finally:
            clients.close()
        assert report.api_calls == default_snapshot().report.api_calls


def test_seeded_server_answers_like_the_in_process_clone_and_resets() -> None:
    snapshot = default_snapshot()
    account = next(a for a in snapshot.report.manifest.accounts if a.past_due_cents() > 0)
    seeded = snapshot.report.accounts[account.account_number]
    local = snapshot.clone().clients()
    with served("--seeded") as env:
        remote = ServiceClients.over_http(ServiceEndpoints.from_env(env))
        query = {"query": f"metadata['account_number']:'{account.account_number}'"}
        assert (
            remote.stripe.v1.customers.search(params=query).to_dict()
            == local.stripe.v1.customers.search(params=query).to_dict()
        )
        assert remote.fineract.find_client_by_external_id(
            account.account_number
        ) == local.fineract.find_client_by_external_id(account.account_number)

        invoice = seeded.invoices[account.past_due_bills()[0].number_suffix]
        remote.stripe.v1.invoices.pay(invoice, params={"paid_out_of_band": True})
        with pytest.raises(stripe.InvalidRequestError, match="already paid"):
            remote.stripe.v1.invoices.pay(invoice, params={"paid_out_of_band": True})

        base = env["STRIPE_API_BASE"]
        admin = {"authorization": f"Bearer {env['ADMIN_TOKEN']}"}
        assert httpx.post(f"{base}/__vamos/reset").status_code == 401
        assert httpx.post(f"{base}/__vamos/reset", headers=admin).json() == {
            "status": "reset",
            "resets": 1,
        }
        assert remote.stripe.v1.invoices.retrieve(invoice).status == "open"
        assert httpx.get(f"{base}/__vamos/health", headers=admin).json()["status"] == "ok"
        remote.close()
