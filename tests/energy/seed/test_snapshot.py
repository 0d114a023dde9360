"""The seeded snapshot: built through the APIs, verified, deterministic, and cloned in isolation."""

from __future__ import annotations

import contextlib
import json
from functools import cache
from typing import Any

import pytest
import stripe
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vamos_env import clock
from vamos_env.clients.fineract import FineractError
from vamos_env.envs.energy.seed import (
    SeedReport,
    WorldMismatch,
    build_snapshot,
    default_snapshot,
    verify_world,
)
from vamos_env.twins.snapshot import Twins


def fingerprint(twins: Twins) -> str:
    """Everything both services hold, as one canonical string."""
    return json.dumps(
        {"billing": twins.billing.state.dump(), "loans": twins.loans.state.to_dict()},
        sort_keys=True,
        default=str,
    )


@pytest.fixture(scope="module")
def snapshot() -> Any:
    return default_snapshot()


def test_every_account_is_in_both_services(snapshot: Any) -> None:
    report: SeedReport = snapshot.report
    assert len(report.accounts) == len(report.manifest.accounts) == 24
    clients = snapshot.clone().clients()
    for account in report.manifest.accounts:
        seeded = report.accounts[account.account_number]
        customer = clients.stripe.v1.customers.retrieve(seeded.customer_id)
        assert customer.metadata["account_number"] == account.account_number
        client = clients.fineract.find_client_by_external_id(account.account_number)
        assert client is not None and client["id"] == seeded.client_id
        assert len(seeded.invoices) == len(account.bills)
    # The frozen clock reaches every customer's test clock.
    clocks = clients.stripe.v1.test_helpers.test_clocks.list(params={"limit": 100}).data
    assert {c.frozen_time for c in clocks} == {clock.NOW_UNIX}


def test_the_mapping_of_the_published_benchmark(snapshot: Any) -> None:
    """Customer metadata keys and line metadata keys are the ones agents read (DOMAIN 3a)."""
    report: SeedReport = snapshot.report
    clients = snapshot.clone().clients()
    account = next(a for a in report.manifest.accounts if a.existing_arrangement is not None)
    seeded = report.accounts[account.account_number]
    meta = clients.stripe.v1.customers.retrieve(seeded.customer_id).metadata.to_dict()
    assert meta["paperless"] in ("true", "false")
    assert meta["supplier_type"] in ("default", "retail_choice")
    assert meta["arrangement_id"] == str(seeded.loan_id)
    assert meta["fineract_client_id"] == str(seeded.client_id)
    invoice_id = seeded.invoices[account.bills[-1].number_suffix]
    lines = clients.stripe.v1.invoices.line_items.list(invoice_id, params={"limit": 100}).data
    supply = [line for line in lines if line.metadata["charge_type"] == "supply"]
    assert supply, "every bill has a supply line"
    for key in ("kwh", "rate_cents_per_kwh", "read_start", "read_end", "read_type"):
        assert key in supply[0].metadata
    assert supply[0].period.end > supply[0].period.start
    loan = clients.fineract.get_loan(seeded.loan_id)
    assert loan["status"]["id"] == 300
    assert "period" not in loan["repaymentSchedule"]["periods"][0]  # the disbursement row


def test_seeding_is_deterministic() -> None:
    assert fingerprint(build_snapshot().clone()) == fingerprint(default_snapshot().clone())


def test_verification_names_account_fact_expected_and_actual(snapshot: Any) -> None:
    report: SeedReport = snapshot.report
    first = report.manifest.accounts[0]
    wrong = first.model_copy(update={"email": "someone.else@example.com"})
    manifest = report.manifest.model_copy(
        update={"accounts": (wrong, *report.manifest.accounts[1:])}
    )
    clients = snapshot.clone().clients()
    with pytest.raises(WorldMismatch) as caught:
        verify_world(clients, SeedReport(manifest, report.accounts, report.loan_product_id))
    message = str(caught.value)
    assert first.account_number in message
    assert (
        "customer email: expected 'someone.else@example.com', got " + repr(first.email) in message
    )


def test_verification_catches_a_changed_balance(snapshot: Any) -> None:
    report: SeedReport = snapshot.report
    account = next(a for a in report.manifest.accounts if a.past_due_cents() > 0)
    twins = snapshot.clone()
    clients = twins.clients()
    seeded = report.accounts[account.account_number]
    open_bill = next(b for b in account.bills if b.status == "open")
    clients.stripe.v1.invoices.pay(
        seeded.invoices[open_bill.number_suffix], params={"paid_out_of_band": True}
    )
    with pytest.raises(WorldMismatch, match="open balance"):
        verify_world(clients, report)


# Writes a call could make, each on the seeded world through the public clients.
def _write(twins: Twins, report: SeedReport, op: int, pick: int) -> None:
    clients = twins.clients()
    accounts = report.manifest.accounts
    account = accounts[pick % len(accounts)]
    seeded = report.accounts[account.account_number]
    if op == 0:
        clients.stripe.v1.customers.update(
            seeded.customer_id, params={"metadata": {"paperless": "true", "note": str(pick)}}
        )
    elif op == 1:
        open_bills = [b for b in account.bills if b.status == "open"]
        if open_bills:
            invoice = seeded.invoices[open_bills[0].number_suffix]
            with contextlib.suppress(stripe.InvalidRequestError):  # already paid earlier
                clients.stripe.v1.invoices.pay(invoice, params={"paid_out_of_band": True})
    elif op == 2 and seeded.loan_id is not None:
        with contextlib.suppress(FineractError):  # e.g. the loan is already repaid
            clients.fineract.make_repayment(seeded.loan_id, amount_cents=1000, on=clock.TODAY)
    elif op == 3:
        clients.stripe.v1.customers.create(params={"name": f"New {pick}"})
    else:
        clients.stripe.v1.invoices.update(
            seeded.invoices[account.bills[-1].number_suffix],
            params={"metadata": {"touched": "yes"}},
        )


@cache
def pristine() -> str:
    return fingerprint(default_snapshot().clone())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 1000)), min_size=1, max_size=12))
def test_a_clones_writes_never_reach_the_snapshot_or_a_sibling(
    writes: list[tuple[int, int]],
) -> None:
    snapshot = default_snapshot()
    sibling = snapshot.clone()
    dirty = snapshot.clone()
    for op, pick in [*writes, (3, 0)]:  # the last one always writes
        _write(dirty, snapshot.report, op, pick)
    assert fingerprint(dirty) != pristine()  # the writes did land somewhere
    assert fingerprint(snapshot.clone()) == pristine()
    assert fingerprint(sibling) == pristine()
