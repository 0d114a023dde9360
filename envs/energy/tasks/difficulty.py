"""The difficulty model: per-task outcomes in, a logistic model of success out.

Features of a call (``features``): which request kinds it holds, how many requests,
traits of the account it runs on (past-due band, an active arrangement, an overdue
instalment while the bills are paid, two premises, income unknown, a card that
declines, paperless on) and of the path (requests answered after a write changed the
account, the number of writes, ending in a transfer). ``LogisticModel.fit`` is an
L2-regularised logistic regression solved by Newton's method in numpy: deterministic,
no random start.

Outcomes come from a results file (``load_outcomes``): JSON lines, one per attempt,
keyed by task id. Until real agent runs exist, ``bootstrap_outcomes`` writes a PRIOR,
not a measurement: the published development pass counts per request count (94/112,
29/39, 32/51, 27/106) spread over our tasks by a stated per-kind hardness guess. Refit
on real results with ``vamos tasks build --outcomes FILE``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

import numpy as np

from vamos_env.envs.energy.tasks.catalogue import KIND_ORDER
from vamos_env.envs.energy.tasks.compose import Builder, Path, Pool, Rejection, parse_task_id
from vamos_env.envs.energy.tasks.state import AccountState

PAST_DUE_BANDS = ("none", "under_50", "50_to_499", "500_plus")
FEATURE_NAMES: tuple[str, ...] = (
    "bias",
    *(f"kind:{kind}" for kind in KIND_ORDER),
    "requests:2",
    "requests:3",
    "requests:4",
    *(f"past_due:{band}" for band in PAST_DUE_BANDS),
    "arrangement_active",
    "arrangement_overdue_bills_paid",
    "two_premises",
    "income_unknown",
    "declining_card",
    "paperless_on",
    "answers_after_write",
    "writes",
    "ends_in_transfer",
)
_INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}
# Published development-run outcomes by request count: (passed, attempted).
PUBLISHED_DEV_RESULTS: Mapping[int, tuple[int, int]] = {
    1: (94, 112),
    2: (29, 39),
    3: (32, 51),
    4: (27, 106),
}
# The bootstrap prior's guess of how hard each kind is for an agent (logit units, higher is
# harder): an assumption read from the published failure analysis (overdue instalment with a
# current bill balance unsolved, declines, read-backs before actions), not a measurement.
PRIOR_KIND_HARDNESS: Mapping[str, float] = {
    "balance": 0.2,
    "explain_bill": 0.5,
    "compare_bills": 0.8,
    "payment_history": 0.3,
    "pay_bill": 0.6,
    "pay_after_decline": 1.4,
    "quote_arrangement": 0.8,
    "create_arrangement": 1.0,
    "arrangement_too_little_owed": 0.6,
    "arrangement_already_active": 0.5,
    "arrangement_down_payment": 1.2,
    "arrangement_shutoff": 0.5,
    "arrangement_status": 1.6,
    "record_arrangement_payment": 1.0,
    "promise_to_pay": 0.9,
    "due_date_extension": 1.0,
    "paperless_status": 0.2,
    "enable_paperless": 0.8,
    "disable_paperless": 0.4,
    "supplier": 0.3,
    "protections": 0.9,
    "supervisor": 0.1,
}
PRIOR_SEED = 2026
PRIOR_NOTE = (
    "PRIOR, NOT A MEASUREMENT. Synthetic development outcomes that reproduce the published "
    "pass counts per request count (1: 94/112, 2: 29/39, 3: 32/51, 4: 27/106) over this "
    "build's tasks; which tasks pass is decided by a stated per-kind hardness guess plus "
    "seeded noise (vamos_env.envs.energy.tasks.difficulty.PRIOR_KIND_HARDNESS). Replace it "
    "with real agent results: vamos tasks build --outcomes FILE."
)


def _past_due_band(state: AccountState) -> str:
    cents = state.past_due_cents
    if cents == 0:
        return "none"
    if cents < 5_000:
        return "under_50"
    return "50_to_499" if cents < 50_000 else "500_plus"


def features(path: Path) -> np.ndarray:
    """The feature vector of one call (see ``FEATURE_NAMES``)."""
    x = np.zeros(len(FEATURE_NAMES))
    x[_INDEX["bias"]] = 1.0
    for step in path.steps:
        x[_INDEX[f"kind:{step.spec.kind}"]] += 1.0
    if len(path) > 1:
        x[_INDEX[f"requests:{len(path)}"]] = 1.0
    start = path.start
    x[_INDEX[f"past_due:{_past_due_band(start)}"]] = 1.0
    arrangement = start.arrangement
    x[_INDEX["arrangement_active"]] = float(arrangement is not None)
    x[_INDEX["arrangement_overdue_bills_paid"]] = float(
        arrangement is not None
        and bool(arrangement.overdue(start.today))
        and start.open_balance_cents == 0
    )
    x[_INDEX["two_premises"]] = float(start.two_premises)
    x[_INDEX["income_unknown"]] = float(start.income_fpl_pct is None)
    x[_INDEX["declining_card"]] = float(bool(start.declining_cards))
    x[_INDEX["paperless_on"]] = float(start.paperless)
    before = [start] + [step.after for step in path.steps[:-1]]
    x[_INDEX["answers_after_write"]] = float(sum(1 for s in before if s.writes))
    x[_INDEX["writes"]] = float(sum(len(step.changes) for step in path.steps))
    x[_INDEX["ends_in_transfer"]] = float(path.steps[-1].ends_call)
    return x


def feature_matrix(paths: Sequence[Path]) -> np.ndarray:
    if not paths:
        return np.zeros((0, len(FEATURE_NAMES)))
    return np.vstack([features(p) for p in paths])


@dataclass(frozen=True, slots=True)
class LogisticModel:
    """P(success) = sigmoid(x . weights), one weight per feature name."""

    names: tuple[str, ...]
    weights: tuple[float, ...]

    @classmethod
    def fit(
        cls, x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, iterations: int = 100
    ) -> LogisticModel:
        """Newton's method on the L2-penalised log-likelihood (the bias is not penalised)."""
        if x.shape[0] != y.shape[0] or x.shape[1] != len(FEATURE_NAMES):
            raise ValueError(
                f"expected x of shape (n, {len(FEATURE_NAMES)}) and y of length n, got "
                f"{x.shape} and {y.shape}"
            )
        if len(set(y.tolist())) < 2:
            raise ValueError("outcomes need both passes and failures to fit a model")
        penalty = np.full(x.shape[1], l2)
        penalty[_INDEX["bias"]] = 0.0
        w = np.zeros(x.shape[1])
        for _ in range(iterations):
            p = _sigmoid(x @ w)
            gradient = x.T @ (p - y) + penalty * w
            hessian = (x.T * (p * (1.0 - p))) @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
            step = np.linalg.solve(hessian, gradient)
            w = w - step
            if float(np.max(np.abs(step))) < 1e-10:
                break
        return cls(FEATURE_NAMES, tuple(float(v) for v in w))

    def predict(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(x @ np.asarray(self.weights))

    def rounded(self, places: int = 4) -> dict[str, float]:
        return {n: round(w, places) for n, w in zip(self.names, self.weights, strict=True)}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0))))


# --- outcomes ----------------------------------------------------------------------------------


class OutcomeFileError(ValueError):
    """A results file that cannot be read: names the line, what was expected and what arrived."""


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    task_id: str
    passed: bool


def _outcome_of(record: Mapping[str, Any], where: str) -> TaskOutcome | None:
    if set(record) <= {"_comment"}:
        return None
    if record.get("excluded"):
        return None  # a benchmark fault, excluded whether passed or failed
    task = record.get("task_id", record.get("task"))
    if not isinstance(task, str) or not task:
        raise OutcomeFileError(
            f"{where}: expected a 'task_id' (or 'task') string, got {json.dumps(task)}"
        )
    if "passed" in record:
        passed = record["passed"]
    elif isinstance(record.get("verdict"), Mapping) and "passed" in record["verdict"]:
        passed = record["verdict"]["passed"]
    elif "reward" in record:
        reward = record["reward"]
        if isinstance(reward, bool) or not isinstance(reward, int | float):
            raise OutcomeFileError(f"{where}: expected a number for 'reward', got {reward!r}")
        passed = reward >= 0.5
    else:
        raise OutcomeFileError(
            f"{where}: expected 'passed', 'verdict.passed' or 'reward', got keys {sorted(record)}"
        )
    if not isinstance(passed, bool):
        raise OutcomeFileError(f"{where}: expected true or false for 'passed', got {passed!r}")
    return TaskOutcome(task, passed)


def load_outcomes(path: str | FilePath) -> list[TaskOutcome]:
    """Per-task outcomes from a results file.

    JSON lines (or one JSON array) of records such as ``{"task_id": ..., "passed": true}``;
    ``task`` may stand for ``task_id``, and ``verdict.passed`` or ``reward`` (>= 0.5 is a
    pass) for ``passed``, as the runner's result records carry them. Records marked
    ``"excluded": true`` and comment lines (``{"_comment": ...}``) are skipped. Repeats of a
    task are separate observations.
    """
    path = FilePath(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise OutcomeFileError(f"{path}: could not read the results file: {exc}") from exc
    records: list[tuple[str, Any]] = []
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OutcomeFileError(f"{path}: expected a JSON array of records: {exc}") from exc
        records = [(f"{path} item {i}", item) for i, item in enumerate(items)]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"{path}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise OutcomeFileError(f"{path}:{number}: expected a JSON object: {exc}") from exc
    out = []
    for where, record in records:
        if not isinstance(record, Mapping):
            raise OutcomeFileError(f"{where}: expected a JSON object, got {type(record).__name__}")
        outcome = _outcome_of(record, where)
        if outcome is not None:
            out.append(outcome)
    if not out:
        raise OutcomeFileError(f"{path}: expected at least one outcome record, found none")
    return out


@dataclass(frozen=True, slots=True)
class Fit:
    model: LogisticModel
    used: int
    unknown_task_ids: tuple[str, ...]


def fit_outcomes(
    outcomes: Iterable[TaskOutcome], states: Mapping[str, AccountState], builder: Builder
) -> Fit:
    """Fit the model on outcomes whose task ids this build can rebuild; count the others."""
    paths: list[Path] = []
    ys: list[float] = []
    unknown: set[str] = set()
    for outcome in outcomes:
        path = _path_for(outcome.task_id, states, builder)
        if path is None:
            unknown.add(outcome.task_id)
            continue
        paths.append(path)
        ys.append(1.0 if outcome.passed else 0.0)
    model = LogisticModel.fit(feature_matrix(paths), np.asarray(ys))
    return Fit(model, len(paths), tuple(sorted(unknown)))


def _path_for(task: str, states: Mapping[str, AccountState], builder: Builder) -> Path | None:
    try:
        slot, specs = parse_task_id(task)
    except ValueError:
        return None
    if slot not in states:
        return None
    built = builder.path(slot, states[slot], specs)
    return None if isinstance(built, Rejection) else built


# --- the bootstrap prior ---------------------------------------------------------------------


def bootstrap_outcomes(pool: Pool, *, seed: int = PRIOR_SEED) -> list[dict[str, Any]]:
    """The PRIOR outcome records (see ``PRIOR_NOTE``): one comment line, then one per task.

    For each request count n with published (passed, attempted): take ``attempted`` tasks
    of that length (all singles for n = 1; a seeded sample of the pool otherwise), score
    each by the summed kind hardness (+0.3 per answer after a write, +1.0 for an overdue
    instalment while the bills are paid) plus normal noise (sd 0.5), and let the
    ``passed`` easiest pass.
    """
    rng = np.random.default_rng(seed)
    records: list[dict[str, Any]] = [{"_comment": PRIOR_NOTE}]
    for count, (passed, attempted) in sorted(PUBLISHED_DEV_RESULTS.items()):
        if count == 1:
            group = sorted(pool.singles, key=lambda p: p.id)
        else:
            same = sorted((p for p in pool.combinations if len(p) == count), key=lambda p: p.id)
            if len(same) < attempted:
                raise ValueError(f"only {len(same)} tasks of {count} requests, need {attempted}")
            picks = sorted(rng.choice(len(same), size=attempted, replace=False).tolist())
            group = [same[i] for i in picks]
        if len(group) != attempted:
            raise ValueError(f"expected {attempted} tasks of {count} requests, got {len(group)}")
        noise = rng.normal(0.0, 0.5, size=len(group))
        scores = [_prior_hardness(p) + float(e) for p, e in zip(group, noise, strict=True)]
        order = sorted(range(len(group)), key=lambda i: (scores[i], group[i].id))
        passing = set(order[:passed])
        for i, path in enumerate(group):
            records.append(
                {
                    "task_id": path.id,
                    "passed": i in passing,
                    "request_count": count,
                    "source": "prior",
                }
            )
    return records


def _prior_hardness(path: Path) -> float:
    x = features(path)
    score = sum(PRIOR_KIND_HARDNESS[step.spec.kind] for step in path.steps)
    score += 0.3 * x[_INDEX["answers_after_write"]]
    score += 1.0 * x[_INDEX["arrangement_overdue_bills_paid"]]
    return float(score)


def outcomes_jsonl(records: Iterable[Mapping[str, Any]]) -> bytes:
    """Records as JSON lines with sorted keys (stable bytes)."""
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode()
