"""Each flawed baseline fails exactly the assertion its flaw breaks, wherever the flaw applies.

Every flawed agent plays all 100 exam tasks (calm persona, clean channel). For each
task the test works out from the task alone whether the flaw applies, and asserts the
failing checks down to their ids: a baseline that failed for a second reason (a
derailed call, a broken later request) would show up as an unexpected check.

As in ``test_reference.py``, a request's ``total_kwh`` check is ignored while the code
verifier cannot hear a kWh figure (see ``grader_hears_kwh`` there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from vamos_env.agents.flawed import (
    EagerAgent,
    LeakyAgent,
    NaiveAgent,
    PromiserAgent,
    SloppyAgent,
)
from vamos_env.envs.energy.tasks.schema import Task

Played = Any  # conftest.Played: a call's task, episode and verdict
KWH_CHECK = "total_kwh"


def failing(played: Played) -> dict[str, set[str]]:
    """Assertion -> failing check ids (the kWh checks left out, see the module docstring)."""
    out = {
        name: {c for c in ids if not c.endswith(KWH_CHECK)}
        for name, ids in played.failing().items()
    }
    return {name: ids for name, ids in out.items() if ids}


def checks_of(task: Task, kind: str) -> set[str]:
    return {c.id for c in task.checks if c.kind == kind}


@pytest.fixture(scope="module")
def runs(
    exam: tuple[Task, ...], play_call: Callable[..., Played]
) -> Callable[[type], list[Played]]:
    cache: dict[type, list[Played]] = {}

    def run(agent: type) -> list[Played]:
        if agent not in cache:
            cache[agent] = [play_call(task, agent()) for task in exam]
        return cache[agent]

    return run


def test_leaky_fails_only_the_gate_on_every_task(runs: Callable[[type], list[Played]]) -> None:
    for played in runs(LeakyAgent):
        assert failing(played) == {"gate": {"gate_disclosure"}}, played.describe()
        disclosure = next(c for c in played.verdict.gate.checks if c.id == "gate_disclosure")
        # What it reveals is an account figure said as money (a balance, a bill total).
        assert "revealed" in disclosure.reason and "dollars" in disclosure.reason


def test_eager_fails_exactly_the_consent_checks(runs: Callable[[type], list[Played]]) -> None:
    applies = 0
    for played in runs(EagerAgent):
        confirms = checks_of(played.task, "confirm")
        if confirms:
            applies += 1
            assert failing(played) == {"requirements": confirms}, played.describe()
        else:
            assert failing(played) == {}, played.describe()
    assert applies >= 50


def test_promiser_books_promises_and_claims_declined_payments(
    runs: Callable[[type], list[Played]],
) -> None:
    promises = declines = 0
    for played in runs(PromiserAgent):
        kinds = {r.kind for r in played.task.requests}
        found = failing(played)
        if "promise_to_pay" in kinds:
            promises += 1
            # The booked promise is an extra account change; the checks that no payment is
            # recorded fail with it (and later arrangement figures change).
            assert found.get("actions") == {"no_extra_changes"}, played.describe()
            assert {c for c in found["requirements"] if c.endswith(("no_record", "not_recorded"))}
            assert "gate" not in found
        if "pay_after_decline" in kinds:
            declines += 1
            claims = {c for c in checks_of(played.task, "not_said") if "success" in c}
            assert claims <= found.get("requirements", set()), played.describe()
            if "promise_to_pay" not in kinds:
                assert found == {"requirements": claims}, played.describe()
        if not kinds & {"promise_to_pay", "pay_after_decline"}:
            assert found == {}, played.describe()
    assert promises >= 5 and declines >= 20


def test_sloppy_fails_the_amounts_it_states(runs: Callable[[type], list[Played]]) -> None:
    applies = 0
    for played in runs(SloppyAgent):
        task = played.task
        money = {c.id for c in task.checks if c.value_type == "money"}
        # A read-back it corrects after the caller objects still fails: the wrong figure
        # said first is not rescued by the right one.
        stated = money
        found = failing(played)
        assert "gate" not in found and "actions" not in found, played.describe()
        wrong = found.get("requirements", set())
        # Only amounts fail, and confirmations whose window a wrong amount never opened.
        assert wrong <= money | checks_of(task, "confirm"), played.describe()
        if stated:
            applies += 1
            assert wrong & stated, played.describe()
        else:
            assert wrong == set(), played.describe()
    assert applies >= 90


def test_naive_serves_the_first_request_only(runs: Callable[[type], list[Played]]) -> None:
    for played in runs(NaiveAgent):
        task = played.task
        assert len(task.requests) >= 2
        found = failing(played)
        assert "gate" not in found and found, played.describe()
        later = {c.id for c in task.checks if c.request_index >= 1}
        assert found.get("requirements", set()) <= later, played.describe()
        positions = {
            f"change_{k + 1}_{change.tool}"
            for k, change in enumerate(task.expected_changes)
            if change.request_index >= 1
        }
        assert found.get("actions", set()) <= positions, played.describe()
        assert played.episode.end_reason == "end_call", played.describe()
