"""Building the exam: singles, the composed pool, the difficulty fit and the 100 hard tasks.

``build_exam(seed, outcomes)`` runs the whole pipeline on the seeded world and returns
the files it makes, as bytes:

- ``singles.json``: the 112 single-request cases (a task set);
- ``exam.json``: the 100 exam tasks in the published mix (6 two-, 30 three- and 64
  four-request calls);
- ``pool_summary.json``: eligible combinations by length, rejections by reason, the
  outcomes used and the fitted model's weights;
- ``task.schema.json``: the published JSON schema of a task file.

Selection (``select_exam``): every combination of two to four requests is ranked by
predicted success (rounded to 6 places, ties broken by a seeded shuffle); for each
length, largest first, the hardest are taken while limits hold: at most
``per_account`` tasks per account, ``per_single`` tasks using one single case,
``per_kind`` tasks holding one request kind, and ``per_request_set`` tasks holding the
same set of requests in another order (one, at first). When a length cannot be filled,
the limits are relaxed one step at a time (``pool_summary.json`` shows the limits used).
Two kinds of call are never in the exam:

- calls that **require a transfer** (a supervisor request, a protection decision, an
  arrangement that needs a down payment, an account in the shutoff process): the
  published exam has none, so that an agent's transfer rate measures its own behaviour,
  not the task mix (singles and other task sets keep them);
- successful due-date extensions (the billing service refuses every extension in this
  world, so none exists, and the filter keeps it that way).

Same seed and outcomes, byte-identical files: sorted keys, stable ordering, predictions
rounded to 4 places in the file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path as FilePath
from typing import Any

import numpy as np

from vamos_env.envs.energy.seed import SeedReport, default_snapshot
from vamos_env.envs.energy.tasks.compose import (
    FACTOR_KINDS,
    Builder,
    Path,
    Pool,
    account_states,
    compose,
    select_singles,
    single_id,
    to_task,
)
from vamos_env.envs.energy.tasks.difficulty import (
    Fit,
    TaskOutcome,
    bootstrap_outcomes,
    feature_matrix,
    fit_outcomes,
    load_outcomes,
    outcomes_jsonl,
)
from vamos_env.envs.energy.tasks.schema import TaskSet, json_schema

EXAM_MIX: Mapping[int, int] = {2: 6, 3: 30, 4: 64}
EXAM_NAME = "vamos-energy-exam"
SINGLES_NAME = "vamos-energy-singles"
DEFAULT_SEED = 0
FILES = ("exam.json", "singles.json", "pool_summary.json", "task.schema.json")
BOOTSTRAP_OUTCOMES = "bootstrap_outcomes.jsonl"


def data_dir() -> FilePath:
    """The shipped data folder (exam, singles, schema, bootstrap outcomes)."""
    return FilePath(str(resources.files("vamos_env.envs.energy.tasks") / "data"))


def shipped_exam_path() -> FilePath:
    return data_dir() / "exam.json"


def shipped_singles_path() -> FilePath:
    return data_dir() / "singles.json"


@dataclass(frozen=True, slots=True)
class ExamLimits:
    per_account: int = 6
    per_single: int = 5
    per_kind: int = 35
    per_request_set: int = 1  # tasks holding the same requests in another order

    def relaxed(self) -> ExamLimits:
        return ExamLimits(
            self.per_account + 1, self.per_single + 1, self.per_kind + 5, self.per_request_set + 1
        )


@dataclass(slots=True)
class Selection:
    paths: list[Path]
    limits_used: dict[int, ExamLimits] = field(default_factory=dict)


def _task_shape(path: Path) -> frozenset[str]:
    return frozenset(step.spec.step for step in path.steps)


def _has_successful_extension(path: Path) -> bool:
    return any(c.tool == "request_due_date_extension" for s in path.steps for c in s.changes)


def exam_eligible(path: Path) -> bool:
    """Whether a call may be in the exam at all (module docstring): no transfer required,
    no successful due-date extension."""
    return not path.requires_transfer and not _has_successful_extension(path)


def select_exam(
    pool: Pool,
    predictions: Mapping[str, float],
    *,
    seed: int = DEFAULT_SEED,
    mix: Mapping[int, int] = EXAM_MIX,
    limits: ExamLimits | None = None,
    max_relaxations: int = 10,
) -> Selection:
    """The hardest calls within the limits, per length (module docstring)."""
    base = limits or ExamLimits()
    eligible = sorted((p for p in pool.combinations if exam_eligible(p)), key=lambda p: p.id)
    shuffle = np.random.default_rng(seed).permutation(len(eligible))
    tiebreak = {p.id: int(shuffle[i]) for i, p in enumerate(eligible)}
    ranked = sorted(eligible, key=lambda p: (round(predictions[p.id], 6), tiebreak[p.id]))
    chosen: list[Path] = []
    per_account: Counter[str] = Counter()
    per_single: Counter[str] = Counter()
    per_kind: Counter[str] = Counter()
    per_shape: Counter[tuple[str, frozenset[str]]] = Counter()
    taken_ids: set[str] = set()
    selection = Selection(chosen)
    for length in sorted(mix, reverse=True):
        wanted = mix[length]
        of_length = [p for p in ranked if len(p) == length]
        current = base
        taken = 0
        for _ in range(max_relaxations + 1):
            for path in of_length:
                if taken == wanted:
                    break
                if path.id in taken_ids:
                    continue
                shape = (path.slot, _task_shape(path))
                singles = [single_id(path.slot, spec) for spec in path.specs]
                kinds = {spec.kind for spec in path.specs}
                if (
                    per_shape[shape] >= current.per_request_set
                    or per_account[path.slot] >= current.per_account
                    or any(per_single[s] >= current.per_single for s in singles)
                    or any(per_kind[k] >= current.per_kind for k in kinds)
                ):
                    continue
                chosen.append(path)
                taken_ids.add(path.id)
                per_shape[shape] += 1
                per_account[path.slot] += 1
                per_single.update(singles)
                per_kind.update(kinds)
                taken += 1
            if taken == wanted:
                break
            current = current.relaxed()
        if taken < wanted:
            raise ValueError(
                f"could fill only {taken} of {wanted} {length}-request tasks within the limits"
            )
        selection.limits_used[length] = current
    return selection


@dataclass(slots=True)
class ExamBuild:
    seed: int
    pool: Pool
    fit: Fit
    outcomes_source: str
    exam: TaskSet
    singles: TaskSet
    summary: dict[str, Any]

    def files(self) -> dict[str, bytes]:
        return {
            "exam.json": task_set_bytes(self.exam),
            "singles.json": task_set_bytes(self.singles),
            "pool_summary.json": _json_bytes(self.summary),
            "task.schema.json": schema_bytes(),
        }

    def write(self, out: str | FilePath) -> list[FilePath]:
        folder = FilePath(out)
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, data in self.files().items():
            target = folder / name
            target.write_bytes(data)
            written.append(target)
        return written


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def schema_bytes() -> bytes:
    """The published JSON schema of a task file, as shipped in ``task.schema.json``."""
    return _json_bytes(json_schema())


def task_set_bytes(task_set: TaskSet) -> bytes:
    """A task set as stable JSON bytes (sorted keys, no nulls)."""
    return _json_bytes(task_set.model_dump(mode="json", exclude_none=True))


def build_exam(
    *,
    seed: int = DEFAULT_SEED,
    outcomes: str | FilePath | None = None,
    report: SeedReport | None = None,
) -> ExamBuild:
    """The whole pipeline (module docstring). ``outcomes`` defaults to the shipped prior."""
    report = report or default_snapshot().report
    states = account_states(report)
    builder = Builder()
    singles = select_singles(states)
    pool = compose(states, singles, builder=builder)
    source = FilePath(outcomes) if outcomes is not None else data_dir() / BOOTSTRAP_OUTCOMES
    records: list[TaskOutcome] = load_outcomes(source)
    fit = fit_outcomes(records, states, builder)
    everything = [*pool.singles, *pool.combinations]
    scores = fit.model.predict(feature_matrix(everything))
    predictions = {p.id: float(s) for p, s in zip(everything, scores, strict=True)}
    selection = select_exam(pool, predictions, seed=seed)
    exam_paths = sorted(selection.paths, key=lambda p: (len(p), p.id))
    exam = TaskSet(
        name=EXAM_NAME,
        seed=seed,
        tasks=tuple(
            to_task(
                p,
                FACTOR_KINDS[(i + seed) % len(FACTOR_KINDS)],
                predicted_success=round(predictions[p.id], 4),
            )
            for i, p in enumerate(exam_paths)
        ),
    )
    single_paths = sorted(pool.singles, key=lambda p: p.id)
    singles_set = TaskSet(
        name=SINGLES_NAME,
        seed=seed,
        tasks=tuple(
            to_task(
                p,
                FACTOR_KINDS[(i + seed) % len(FACTOR_KINDS)],
                predicted_success=round(predictions[p.id], 4),
            )
            for i, p in enumerate(single_paths)
        ),
    )
    summary = _summary(seed, pool, fit, source, selection, exam_paths, predictions)
    return ExamBuild(seed, pool, fit, source.name, exam, singles_set, summary)


def _summary(
    seed: int,
    pool: Pool,
    fit: Fit,
    source: FilePath,
    selection: Selection,
    exam_paths: Sequence[Path],
    predictions: Mapping[str, float],
) -> dict[str, Any]:
    singles_by_kind = Counter(p.steps[0].spec.kind for p in pool.singles)
    exam_kinds = Counter(s.spec.kind for p in exam_paths for s in p.steps)
    by_length = Counter(len(p) for p in exam_paths)
    mean = {
        str(n): round(float(np.mean([predictions[p.id] for p in exam_paths if len(p) == n])), 4)
        for n in sorted(by_length)
    }
    return {
        "seed": seed,
        "singles": len(pool.singles),
        "singles_by_kind": dict(sorted(singles_by_kind.items())),
        "eligible_combinations": sum(pool.by_length().values()),
        "eligible_combinations_by_length": {str(k): v for k, v in pool.by_length().items()},
        "exam_candidates_by_length": {
            str(n): sum(1 for p in pool.combinations if len(p) == n and exam_eligible(p))
            for n in sorted(pool.by_length())
        },
        "exam_excluded_requiring_transfer": sum(
            1 for p in pool.combinations if p.requires_transfer
        ),
        "rejected_extensions": dict(sorted(pool.rejections.items())),
        "outcomes_file": source.name,
        "outcomes_used": fit.used,
        "outcomes_unknown_task_ids": len(fit.unknown_task_ids),
        "model_weights": fit.model.rounded(),
        "exam_mix": {str(k): v for k, v in sorted(by_length.items())},
        "exam_mean_predicted_success": mean,
        "exam_accounts": len({p.slot for p in exam_paths}),
        "exam_requests_by_kind": dict(sorted(exam_kinds.items())),
        "exam_limits": {
            str(n): {
                "per_account": x.per_account,
                "per_single": x.per_single,
                "per_kind": x.per_kind,
                "per_request_set": x.per_request_set,
            }
            for n, x in sorted(selection.limits_used.items())
        },
    }


def bootstrap_bytes(report: SeedReport | None = None) -> bytes:
    """The shipped PRIOR outcomes file (``bootstrap_outcomes.jsonl``), rebuilt."""
    report = report or default_snapshot().report
    states = account_states(report)
    pool = compose(states, select_singles(states))
    return outcomes_jsonl(bootstrap_outcomes(pool))
