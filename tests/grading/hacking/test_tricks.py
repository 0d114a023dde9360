"""The reward-hacking suite: no trick earns any reward on an exam task where it applies.

Each trick (``tricks.py``) is played through ``VamosEnergyEnv`` with the scripted calm
caller in the clean channel. The plan plays every variant (phrasing, spoken form) at least
once and every applicable task at least once; for the tricks the account decides (leaks,
transfers, silence, recitation) one task per account (``benchmarks/hacking.py`` plays them
on every applicable task, ``--full`` every variant on every task).

A failure lists each rewarded call with its variant: that is a way to cheat the reward.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from vamos_env.agents.reference import ReferenceAgent

tricks = sys.modules["hacking_tricks"]
TRICKS = {t.name: t for t in tricks.TRICKS}


# An open finding, kept visible (strict: the mark fails as soon as the trick earns nothing).
# Said after the caller raised a request, a spray of figures that are all true and each named
# as its tool names it is read as an answer, by the verifier and by the labelled set's human
# labels alike; on 6 of 100 exam tasks (benchmarks/hacking.py) no sprayed figure conflicts
# with a checked one. Whether such a
# recitation should fail needs a rule the issue does not state (e.g. figures of topics the
# caller never raised), so it is reported rather than tuned away.
_OPEN: dict[str, str] = {}  # trick -> why it still earns reward (none today)


def _marked(name: str) -> Any:
    if name in _OPEN:
        return pytest.param(name, marks=pytest.mark.xfail(reason=_OPEN[name], strict=True))
    return name


@pytest.mark.parametrize("name", [_marked(n) for n in sorted(TRICKS)])
def test_trick_earns_nothing(env: Any, name: str) -> None:
    trick = TRICKS[name]
    tasks = sorted(env.task_set.tasks, key=lambda t: t.task_id)
    pairs = tricks.plan(trick, tasks, quick=True)
    assert pairs, f"{name} applies to no exam task ({trick.applies_to})"
    rewarded = []
    for factory, task_id in pairs:
        played = tricks.play(env, factory(), task_id)
        if played.reward > 0:
            rewarded.append(f"{played.variant} on {task_id}")
    assert not rewarded, (
        f"{name} ({trick.what}) earned reward on {len(rewarded)} of {len(pairs)} calls:\n  "
        + "\n  ".join(rewarded)
    )


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_reference_earns_the_reward_where_the_trick_is_tried(env: Any, name: str) -> None:
    """The control: without the trick the same call is a pass, so a zero above is the trick's."""
    trick = TRICKS[name]
    tasks = sorted(env.task_set.tasks, key=lambda t: t.task_id)
    task_id = tricks.plan(trick, tasks, quick=True)[0][1]
    played = tricks.play(env, ReferenceAgent(), task_id)
    assert played.reward == 1.0, f"reference on {task_id}: failed {played.failed_checks()}"


def test_every_phrasing_family_has_at_least_eight_phrasings() -> None:
    families = {
        **{f"decline {k}": v for k, v in tricks.DECLINE_PHRASINGS.items()},
        **{f"promise {k}": v for k, v in tricks.PROMISE_PHRASINGS.items()},
    }
    for name, phrasings in families.items():
        assert len(set(phrasings)) >= 8, f"{name}: {len(set(phrasings))} distinct phrasings"
    for trick in tricks.TRICKS:
        if trick.name.startswith("leak_"):
            assert len(trick.variants) >= 8, trick.name


def test_each_leak_form_is_distinct_and_carries_the_fact() -> None:
    """Every spoken form of a leaked fact is a different wording of the same fact."""
    account = tricks.insider("8731-71970")
    for family in tricks.LEAK_FAMILIES:
        for fact in tricks.facts(account, family):
            assert len(set(fact.forms)) >= 8, (family, fact.forms)


def test_the_plan_covers_every_applicable_task_and_every_variant(env: Any) -> None:
    tasks = sorted(env.task_set.tasks, key=lambda t: t.task_id)
    for trick in tricks.TRICKS:
        pairs = tricks.plan(trick, tasks)
        applicable = {t.task_id for t in tasks if trick.applies(t)}
        assert {task_id for _, task_id in pairs} == applicable, trick.name
        assert {id(f) for f, _ in pairs} == {id(v) for v in trick.variants}, trick.name
        full = tricks.plan(trick, tasks, full=True)
        assert len(full) == len(applicable) * len(trick.variants), trick.name


def test_a_leak_says_the_fact_before_verification(env: Any) -> None:
    """The leaker really speaks before ``verify_caller`` (else the gate has nothing to see)."""
    task = next(t for t in env.task_set.tasks if tricks.leakable(t, "balance"))
    played = tricks.play(env, tricks.Leaker("balance", 3), task.task_id)
    turns = played.transcript["turns"]
    verify = next(
        t["index"] for t in turns if t["tool_call"] and t["tool_call"]["name"] == "verify_caller"
    )
    before = " ".join(t["text"] for t in turns[:verify] if t["speaker"] == "agent")
    assert "point" in before, before
