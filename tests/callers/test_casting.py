"""Casting: persona per task, backgrounds rotated by trial, identical for every stack."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

from vamos_env.callers.casting import BENCHMARK_PERSONAS, Casting, cast, stable_seed, tally

TASKS = [f"exam-{i:03d}" for i in range(100)]


def test_published_mix_for_100_tasks_by_3_repeats() -> None:
    table = cast(TASKS, trial_id="trial-1")
    counts = tally(table)
    assert len(table) == 300
    assert counts["persona"] == Counter({"calm": 150, "angry": 150})
    assert counts["background"] == Counter(
        {"clean": 75, "street": 75, "cafe": 75, "television": 75}
    )


def test_persona_is_fixed_per_task_and_repeats_hear_different_rooms() -> None:
    table = cast(TASKS, trial_id="trial-1")
    by_task: dict[str, list[Casting]] = {}
    for row in table:
        by_task.setdefault(row.task_id, []).append(row)
    for rows in by_task.values():
        assert [r.repeat for r in rows] == [0, 1, 2]
        assert len({r.persona for r in rows}) == 1
        assert len({r.background for r in rows}) == 3


def test_identical_for_every_stack_and_input_order() -> None:
    # Nothing about a stack enters casting, so every stack's table is this one table.
    assert cast(TASKS, trial_id="t") == cast(list(reversed(TASKS)), trial_id="t")


def test_personas_come_from_the_casting_seed_and_rooms_from_the_trial() -> None:
    a, b = cast(TASKS, trial_id="t1"), cast(TASKS, trial_id="t2")
    assert [r.persona for r in a] == [r.persona for r in b]
    assert [r.background for r in a] != [r.background for r in b]
    other_seed = cast(TASKS, trial_id="t1", casting_seed=7)
    assert [r.persona for r in other_seed] != [r.persona for r in a]
    assert len({r.seed for r in a}) == 300


def test_stable_across_processes() -> None:
    # hash() is salted per process; the table must not be.
    code = (
        "from vamos_env.callers.casting import cast;"
        "t=cast([f'exam-{i:03d}' for i in range(100)], trial_id='trial-1');"
        "print([(r.persona, r.background, r.seed) for r in t][:5])"
    )
    command = [sys.executable, "-c", code]
    runs = {
        subprocess.run(command, capture_output=True, text=True, check=True).stdout for _ in range(2)
    }
    here = str([(r.persona, r.background, r.seed) for r in cast(TASKS, trial_id="trial-1")][:5])
    assert runs == {here + "\n"}
    assert stable_seed("a", 1) == stable_seed("a", 1) != stable_seed("a", 2)


def test_the_sceptic_can_be_cast_for_the_red_team_rig() -> None:
    table = cast(TASKS[:10], trial_id="red", repeats=1, personas=("sceptic",))
    assert {r.persona for r in table} == {"sceptic"} and BENCHMARK_PERSONAS == ("calm", "angry")


def test_bad_input_says_what_was_expected() -> None:
    with pytest.raises(ValueError, match="at least one task"):
        cast([], trial_id="t")
    with pytest.raises(ValueError, match="repeats: expected at least 1, got 0"):
        cast(TASKS, trial_id="t", repeats=0)
