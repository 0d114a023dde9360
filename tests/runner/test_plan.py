"""What a run will do: task selection, stack names, and casting identical across stacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vamos_env.envs.energy.env import resolve_tasks
from vamos_env.runner.plan import plan_calls, resolve_stack, select_tasks


def test_named_sets_and_prefixes() -> None:
    exam = select_tasks("exam")
    assert exam.source == "exam" and len(exam.task_ids) == 100
    assert list(exam.task_ids) == sorted(exam.task_ids)
    assert select_tasks("exam:7").task_ids == exam.task_ids[:7]
    with pytest.raises(ValueError, match="exam:N with N >= 1"):
        select_tasks("exam:0")


def test_task_ids_are_found_in_their_set_and_unknown_ones_named() -> None:
    exam = select_tasks("exam")
    picked = select_tasks(f"{exam.task_ids[5]}, {exam.task_ids[2]}")
    assert picked.source == "exam" and picked.task_ids == (exam.task_ids[2], exam.task_ids[5])
    with pytest.raises(ValueError, match=r"unknown task ids .*no-such-task"):
        select_tasks(f"{exam.task_ids[0]},no-such-task")


def test_a_task_file(tmp_path: Path) -> None:
    exam = resolve_tasks("exam")
    path = tmp_path / "mine.json"
    subset = exam.model_copy(update={"name": "mine", "tasks": exam.tasks[:3]})
    path.write_text(json.dumps(subset.model_dump(mode="json")))
    picked = select_tasks(str(path))
    assert picked.source == str(path.resolve()) and len(picked.task_ids) == 3
    with pytest.raises(ValueError, match="no task file"):
        select_tasks(str(tmp_path / "absent.json"))


def test_every_stack_meets_the_same_callers_and_a_subset_the_full_runs_casting() -> None:
    full = plan_calls(["a", "b"], select_tasks("exam"), repeats=3, trial_id="t")
    assert len(full) == 600
    by_stack: dict[str, list[Any]] = {"a": [], "b": []}
    for spec in full:
        by_stack[spec.stack].append(
            (spec.task_id, spec.repeat, spec.persona, spec.background, spec.seed)
        )
    assert by_stack["a"] == by_stack["b"]
    # 150 calls per persona and 75 per background, as published.
    personas = [p for _, _, p, _, _ in by_stack["a"]]
    backgrounds = [b for _, _, _, b, _ in by_stack["a"]]
    assert personas.count("calm") == personas.count("angry") == 150
    assert all(backgrounds.count(b) == 75 for b in ("clean", "street", "cafe", "television"))
    small = plan_calls(["a"], select_tasks("exam:10"), repeats=3, trial_id="t")
    assert [(s.task_id, s.repeat, s.persona, s.background, s.seed) for s in small] == by_stack["a"][
        :30
    ]
    assert len({s.key for s in full}) == 600


def test_stack_names(test_stack: Any) -> None:
    ref = resolve_stack(test_stack("mine", "VerifyThenLeave"))
    assert (
        ref.name == "mine" and ref.offline and ref.entry_point.endswith("stacks.py:VerifyThenLeave")
    )
    assert not resolve_stack(test_stack("waits", "AsyncWaiter")).offline
    with pytest.raises(ValueError, match="unknown stack 'nope'"):
        resolve_stack("nope")
    with pytest.raises(ValueError, match="a stack name is letters"):
        resolve_stack("a/b=x:y")
    with pytest.raises(ValueError, match="to name a callable"):
        resolve_stack(test_stack("x", "no_such_factory"))
