"""The exam: the published mix, the limits, determinism, refitting, and the shipped files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path as FilePath

import pytest

from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.tasks.compose import Pool, parse_task_id, single_id
from vamos_env.envs.energy.tasks.exam import (
    EXAM_MIX,
    ExamBuild,
    ExamLimits,
    build_exam,
    data_dir,
    exam_eligible,
    feature_matrix,
    select_exam,
    shipped_exam_path,
    shipped_singles_path,
)
from vamos_env.envs.energy.tasks.schema import Task, load_task_set
from vamos_env.twins.snapshot import Snapshot


def test_the_shipped_exam_has_the_published_mix() -> None:
    exam = load_task_set(shipped_exam_path())
    assert len(exam.tasks) == 100
    assert Counter(t.meta.request_count for t in exam.tasks) == {2: 6, 3: 30, 4: 64}
    assert all(
        t.meta.source == "composed" and t.meta.predicted_success is not None for t in exam.tasks
    )
    assert not any(
        c.tool == "request_due_date_extension" for t in exam.tasks for c in t.expected_changes
    )
    factors = Counter(t.caller.second_factor.kind for t in exam.tasks)
    assert set(factors) == {"card_last4", "postal_code", "last_bill_amount"}
    assert max(factors.values()) - min(factors.values()) <= 1


def test_the_exam_keeps_within_its_limits(build: ExamBuild) -> None:
    # Lengths are filled longest first, each with the limits the summary records for it
    # (relaxed where the base limits could not fill it); a count is never raised past the
    # loosest limits used so far.
    used = {int(n): ExamLimits(**x) for n, x in build.summary["exam_limits"].items()}
    assert used[2] == used[3] == ExamLimits()
    for length in sorted(EXAM_MIX, reverse=True):
        tasks = [t for t in build.exam.tasks if t.meta.request_count >= length]
        so_far = [x for n, x in used.items() if n >= length]
        accounts = Counter(t.meta.account_slot for t in tasks)
        assert max(accounts.values()) <= max(x.per_account for x in so_far)
        uses: Counter[str] = Counter()
        for task in tasks:
            slot, specs = parse_task_id(task.task_id)
            uses.update(single_id(slot, spec) for spec in specs)
        assert max(uses.values()) <= max(x.per_single for x in so_far)
        kinds = Counter(k for t in tasks for k in set(t.meta.request_kinds))
        assert max(kinds.values()) <= max(x.per_kind for x in so_far)
        shapes = Counter(
            (t.meta.account_slot, frozenset(parse_task_id(t.task_id)[1])) for t in tasks
        )
        assert max(shapes.values()) <= max(x.per_request_set for x in so_far)


def _requires_transfer(task: Task) -> bool:
    return (
        any(r.expected_outcome == "transferred" for r in task.requests)
        or any(c.tool == "transfer_to_human" for c in task.expected_changes)
        or any(c.kind == "called" and c.tool == "transfer_to_human" for c in task.checks)
    )


def test_no_exam_task_requires_a_transfer(build: ExamBuild) -> None:
    shipped = load_task_set(shipped_exam_path())
    assert not [t.task_id for t in shipped.tasks if _requires_transfer(t)]
    assert not [t.task_id for t in build.exam.tasks if _requires_transfer(t)]
    # Nor does a transfer come in under another name: none of the kinds that end in one.
    kinds = {k for t in shipped.tasks for k in t.meta.request_kinds}
    assert not kinds & {"supervisor", "protections", "arrangement_down_payment"}
    assert "arrangement_shutoff" not in kinds
    assert build.summary["exam_excluded_requiring_transfer"] > 0


def test_singles_keep_their_transfers() -> None:
    singles = load_task_set(shipped_singles_path())
    transfers = [t for t in singles.tasks if _requires_transfer(t)]
    assert {k for t in transfers for k in t.meta.request_kinds} == {
        "supervisor",
        "protections",
        "arrangement_down_payment",
        "arrangement_shutoff",
    }


def test_selection_skips_a_transfer_even_when_it_is_the_hardest(pool: Pool) -> None:
    # Rank every call that requires a transfer as certain to fail: none is chosen even so.
    predictions = {p.id: 0.0 if p.requires_transfer else 0.5 for p in pool.combinations}
    chosen = select_exam(pool, predictions, mix={2: 3, 3: 3, 4: 3}).paths
    assert len(chosen) == 9 and not any(p.requires_transfer for p in chosen)
    assert any(p.requires_transfer for p in pool.combinations)


def test_the_exam_is_harder_than_the_pool(build: ExamBuild, pool: Pool) -> None:
    predicted = build.fit.model.predict(feature_matrix(pool.combinations))
    by_id = {p.id: float(x) for p, x in zip(pool.combinations, predicted, strict=True)}
    chosen = {t.task_id for t in build.exam.tasks}
    for length in EXAM_MIX:
        of_length = [p.id for p in pool.combinations if len(p) == length and exam_eligible(p)]
        exam_mean = sum(by_id[i] for i in of_length if i in chosen) / EXAM_MIX[length]
        pool_mean = sum(by_id[i] for i in of_length) / len(of_length)
        assert exam_mean < pool_mean
    # The four-request tasks are picked first, with nothing yet counted against a limit, so
    # one of the hardest of them (ties broken by the seeded shuffle) is in.
    fours = [p.id for p in pool.combinations if len(p) == 4 and exam_eligible(p)]
    assert min(round(by_id[i], 6) for i in fours if i in chosen) == min(
        round(by_id[i], 6) for i in fours
    )


def test_two_builds_are_byte_identical_and_match_the_shipped_files(
    build: ExamBuild, snapshot: Snapshot[SeedReport]
) -> None:
    again = build_exam(report=snapshot.report)
    assert again.files() == build.files()
    for name, data in build.files().items():
        assert (data_dir() / name).read_bytes() == data, (
            f"{name} is out of date: run vamos tasks build"
        )


def test_another_seed_is_also_deterministic(snapshot: Snapshot[SeedReport]) -> None:
    first = build_exam(seed=3, report=snapshot.report)
    second = build_exam(seed=3, report=snapshot.report)
    assert first.files() == second.files()
    assert Counter(t.meta.request_count for t in first.exam.tasks) == {2: 6, 3: 30, 4: 64}
    assert json.loads(first.files()["exam.json"])["seed"] == 3


def test_refitting_on_other_outcomes_changes_the_exam(
    tmp_path: FilePath, build: ExamBuild, pool: Pool, snapshot: Snapshot[SeedReport]
) -> None:
    # Pretend agents fail every call that holds a supplier question and pass the rest.
    lines = [
        {"task_id": p.id, "passed": not any(s.spec.kind == "supplier" for s in p.steps)}
        for p in [*pool.singles, *pool.combinations][::3]
    ]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in lines))
    refit = build_exam(outcomes=results, report=snapshot.report)
    assert refit.summary["outcomes_used"] == len(lines)
    assert refit.summary["model_weights"]["kind:supplier"] < -1.0
    supplier_share = sum("supplier" in t.meta.request_kinds for t in refit.exam.tasks)
    assert supplier_share > sum("supplier" in t.meta.request_kinds for t in build.exam.tasks)
    assert build_exam(outcomes=results, report=snapshot.report).files() == refit.files()


def test_an_impossible_mix_is_reported(pool: Pool) -> None:
    predictions = {p.id: 0.5 for p in pool.combinations}
    with pytest.raises(ValueError, match=r"could fill only .* of 5000 4-request tasks"):
        select_exam(pool, predictions, mix={4: 5000}, max_relaxations=1)
