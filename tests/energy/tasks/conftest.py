"""Fixtures for the task tests: the seeded world, its accounts as the builder sees them, a build."""

from __future__ import annotations

import pytest

from vamos_env.envs.energy.seed import SeedReport, default_snapshot
from vamos_env.envs.energy.tasks.compose import (
    Builder,
    Pool,
    account_states,
    compose,
    select_singles,
)
from vamos_env.envs.energy.tasks.exam import ExamBuild, build_exam
from vamos_env.envs.energy.tasks.state import AccountState
from vamos_env.twins.snapshot import Snapshot


@pytest.fixture(scope="session")
def snapshot() -> Snapshot[SeedReport]:
    return default_snapshot()


@pytest.fixture(scope="session")
def states(snapshot: Snapshot[SeedReport]) -> dict[str, AccountState]:
    return account_states(snapshot.report)


@pytest.fixture(scope="session")
def pool(states: dict[str, AccountState]) -> Pool:
    return compose(states, select_singles(states))


@pytest.fixture(scope="session")
def build(snapshot: Snapshot[SeedReport]) -> ExamBuild:
    return build_exam(report=snapshot.report)


@pytest.fixture
def builder() -> Builder:
    return Builder()
