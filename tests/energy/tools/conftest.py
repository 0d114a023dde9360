"""Fixtures for the tool tests: fresh clones of the seeded world and verified sessions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from vamos_env.envs.energy.policy import AccountFacts
from vamos_env.envs.energy.seed import SeedReport, default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.world import Account, Manifest
from vamos_env.twins.snapshot import Snapshot, Twins


@pytest.fixture(scope="session")
def snapshot() -> Snapshot[SeedReport]:
    return default_snapshot()


@pytest.fixture(scope="session")
def report(snapshot: Snapshot[SeedReport]) -> SeedReport:
    return snapshot.report


@pytest.fixture(scope="session")
def manifest(report: SeedReport) -> Manifest:
    return report.manifest


@pytest.fixture
def twins(snapshot: Snapshot[SeedReport]) -> Twins:
    return snapshot.clone()


@pytest.fixture
def session(twins: Twins) -> Iterator[CallSession]:
    clients = twins.clients()
    yield CallSession(clients)
    clients.close()


def second_factor(account: Account, kind: str) -> str:
    """A correct second factor of the given kind for ``account``."""
    if kind == "card":
        return account.cards[-1].last4
    if kind == "postal":
        return account.mailing_address.postal_code
    total = account.last_bill_amount_cents
    amount = f"{total // 100}.{total % 100:02d}"
    return f"${amount}" if kind == "bill_dollar" else amount


@pytest.fixture
def factor_of() -> Callable[[Account, str], str]:
    return second_factor


@pytest.fixture
def verified(session: CallSession, manifest: Manifest) -> Callable[[str], CallSession]:
    """Verify the session as the holder of an account (postal code as second factor)."""

    def verify(account_number: str, kind: str = "postal") -> CallSession:
        account = manifest.account(account_number)
        result = session.call(
            "verify_caller",
            {
                "account_number": account.account_number,
                "name_on_account": account.full_name,
                "second_factor": second_factor(account, kind),
            },
        )
        assert result == {"status": "verified"}, result
        return session

    return verify


def manifest_facts(account: Account, **changes: Any) -> AccountFacts:
    """The policy's facts for an account, computed from the manifest (not from the tools)."""
    values: dict[str, Any] = {
        "past_due_cents": account.past_due_cents(),
        "days_past_due": account.days_past_due(),
        "open_balance_cents": account.open_balance_cents(),
        "arrangement_active": account.existing_arrangement is not None,
        "income_fpl_pct": account.income_fpl_pct,
        "household_size": account.household_size,
        "prior_arrangement_default_on": account.prior_arrangement_default_on,
        "last_extension_on": account.last_extension_on,
        "medical_certificate_until": account.medical_certificate_until,
    }
    values.update(changes)
    return AccountFacts(**values)


@pytest.fixture
def facts_of() -> Callable[..., AccountFacts]:
    return manifest_facts


def all_cents_have_displays(value: Any) -> bool:
    if isinstance(value, dict):
        for key, item in value.items():
            is_cents = key.endswith("_cents") and type(item) is int
            if is_cents and key[: -len("_cents")] + "_display" not in value:
                return False
            if not all_cents_have_displays(item):
                return False
    if isinstance(value, list):
        return all(all_cents_have_displays(item) for item in value)
    return True


@pytest.fixture
def displays_ok() -> Callable[[Any], bool]:
    return all_cents_have_displays
