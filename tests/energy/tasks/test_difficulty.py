"""The difficulty model: features, the logistic fit, results files and the bootstrap prior."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path as FilePath

import numpy as np
import pytest

from vamos_env.envs.energy.tasks.catalogue import RequestSpec
from vamos_env.envs.energy.tasks.compose import Builder, Path, Pool
from vamos_env.envs.energy.tasks.difficulty import (
    FEATURE_NAMES,
    PUBLISHED_DEV_RESULTS,
    LogisticModel,
    OutcomeFileError,
    TaskOutcome,
    features,
    fit_outcomes,
    load_outcomes,
)
from vamos_env.envs.energy.tasks.exam import bootstrap_bytes, data_dir
from vamos_env.envs.energy.tasks.state import AccountState


def test_features_describe_the_call(states: dict[str, AccountState], builder: Builder) -> None:
    specs = [RequestSpec.parse("pay_after_decline-aug"), RequestSpec.parse("payment_history")]
    path = builder.path("A04", states["A04"], specs)
    assert isinstance(path, Path)
    x = dict(zip(FEATURE_NAMES, features(path), strict=True))
    assert x["kind:pay_after_decline"] == 1 and x["kind:payment_history"] == 1
    assert x["requests:2"] == 1 and x["requests:4"] == 0
    assert x["past_due:50_to_499"] == 1 and x["declining_card"] == 1
    assert x["answers_after_write"] == 1 and x["writes"] == 1 and x["ends_in_transfer"] == 0


def test_the_fit_recovers_a_planted_effect() -> None:
    rng = np.random.default_rng(7)
    x = np.zeros((400, len(FEATURE_NAMES)))
    x[:, 0] = 1.0
    hard = FEATURE_NAMES.index("kind:pay_after_decline")
    easy = FEATURE_NAMES.index("kind:supplier")
    x[:, hard] = rng.integers(0, 2, 400)
    x[:, easy] = rng.integers(0, 2, 400)
    truth = 1 / (1 + np.exp(-(1.0 - 3.0 * x[:, hard] + 1.5 * x[:, easy])))
    y = (rng.random(400) < truth).astype(float)
    model = LogisticModel.fit(x, y, l2=0.1)
    weights = dict(zip(model.names, model.weights, strict=True))
    assert weights["kind:pay_after_decline"] < -2.0
    assert weights["kind:supplier"] > 0.8
    p = model.predict(x)
    assert np.all((p > 0) & (p < 1))
    assert LogisticModel.fit(x, y, l2=0.1) == model


def test_the_fit_needs_passes_and_failures() -> None:
    x = np.ones((3, len(FEATURE_NAMES)))
    with pytest.raises(ValueError, match="both passes and failures"):
        LogisticModel.fit(x, np.ones(3))


def write(tmp_path: FilePath, text: str) -> FilePath:
    path = tmp_path / "results.jsonl"
    path.write_text(text)
    return path


def test_results_files_in_every_accepted_shape(tmp_path: FilePath) -> None:
    lines = [
        {"_comment": "development run"},
        {"task_id": "s-balance-a01", "passed": True},
        {"task": "s-balance-a02", "reward": 0.0, "stack": "gpt", "repeat": 1},
        {"task_id": "s-balance-a03", "verdict": {"passed": True, "assertions": {}}},
        {"task_id": "s-balance-a04", "passed": False, "excluded": True},
    ]
    path = write(tmp_path, "\n".join(json.dumps(r) for r in lines) + "\n\n")
    assert load_outcomes(path) == [
        TaskOutcome("s-balance-a01", True),
        TaskOutcome("s-balance-a02", False),
        TaskOutcome("s-balance-a03", True),
    ]
    as_array = tmp_path / "results.json"
    as_array.write_text(json.dumps(lines[1:3]))
    assert len(load_outcomes(as_array)) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"passed": true}\n',
            r"results.jsonl:1: expected a 'task_id' \(or 'task'\) string, got null",
        ),
        ('{"task_id": "s-balance-a01"}\n', r":1: expected 'passed', 'verdict.passed' or 'reward'"),
        (
            '{"task_id": "x", "passed": "yes"}\n',
            r":1: expected true or false for 'passed', got 'yes'",
        ),
        ('{"_comment": "only"}\n\n{oops\n', r"results.jsonl:3: expected a JSON object"),
        ('{"_comment": "only"}\n', r"expected at least one outcome record"),
        ("[1]\n", r"item 0: expected a JSON object, got int"),
    ],
)
def test_bad_results_files_name_the_line_and_the_problem(
    tmp_path: FilePath, text: str, message: str
) -> None:
    with pytest.raises(OutcomeFileError, match=message):
        load_outcomes(write(tmp_path, text))


def test_outcomes_for_unknown_tasks_are_counted_not_fitted(
    states: dict[str, AccountState], builder: Builder
) -> None:
    outcomes = [
        TaskOutcome("s-balance-a01", True),
        TaskOutcome("c-a04-pay_bill-aug.create_arrangement-6", True),  # invalid path
        TaskOutcome("not-a-task", False),
        TaskOutcome("s-supervisor-a01", False),
    ]
    fit = fit_outcomes(outcomes, states, builder)
    assert fit.used == 2
    assert fit.unknown_task_ids == ("c-a04-pay_bill-aug.create_arrangement-6", "not-a-task")


def test_the_shipped_prior_is_reproducible_and_labelled(pool: Pool) -> None:
    shipped = (data_dir() / "bootstrap_outcomes.jsonl").read_bytes()
    assert bootstrap_bytes() == shipped
    records = [json.loads(line) for line in shipped.decode().splitlines()]
    assert "PRIOR, NOT A MEASUREMENT" in records[0]["_comment"]
    rows = records[1:]
    assert all(r["source"] == "prior" for r in rows)
    attempted = Counter(r["request_count"] for r in rows)
    passed = Counter(r["request_count"] for r in rows if r["passed"])
    for count, (wins, tries) in PUBLISHED_DEV_RESULTS.items():
        assert (passed[count], attempted[count]) == (wins, tries)
    known = {p.id for p in pool.singles} | {p.id for p in pool.combinations}
    assert {r["task_id"] for r in rows} <= known
