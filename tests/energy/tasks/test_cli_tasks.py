"""``vamos tasks``: build, validate, show and schema, through ``register``/``run``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path as FilePath

import pytest

from vamos_env.cli.tasks import register, run
from vamos_env.envs.energy.tasks.exam import FILES, data_dir


def test_register_adds_the_tasks_command() -> None:
    parser = argparse.ArgumentParser(prog="vamos")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["tasks", "build", "--seed", "4", "--out", "x"])
    assert args.seed == 4 and args.out == FilePath("x") and callable(args.func)


def test_build_prints_the_counts_and_writes_the_shipped_files(
    tmp_path: FilePath, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["build", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "single cases: 112 (" in out
    assert "eligible combinations: 1,818 (2 requests: 334, 3: 677, 4: 807)" in out
    assert "exam: 100 tasks (2 requests: 6, 3: 30, 4: 64)" in out
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (data_dir() / name).read_bytes()


def test_build_with_a_fresh_prior_reproduces_the_shipped_one(tmp_path: FilePath) -> None:
    assert run(["build", "--out", str(tmp_path), "--write-prior"]) == 0
    prior = "bootstrap_outcomes.jsonl"
    assert (tmp_path / prior).read_bytes() == (data_dir() / prior).read_bytes()
    assert (tmp_path / "exam.json").read_bytes() == (data_dir() / "exam.json").read_bytes()


def test_build_refuses_a_bad_results_file(
    tmp_path: FilePath, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text('{"task_id": "s-balance-a01"}\n')
    assert run(["build", "--out", str(tmp_path), "--outcomes", str(results)]) == 2
    assert "results.jsonl:1: expected 'passed'" in capsys.readouterr().err
    assert not (tmp_path / "exam.json").exists()


def test_validate_the_shipped_exam(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["validate"]) == 0
    assert "100 tasks replayed through the tools" in capsys.readouterr().out


def test_validate_reports_failures_and_bad_files(
    tmp_path: FilePath, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((data_dir() / "singles.json").read_text())
    task = next(t for t in data["tasks"] if t["task_id"] == "s-balance-a05")
    check = task["checks"][0]
    check["value"] += 1
    data["tasks"] = [task]
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(data))
    assert run(["validate", str(wrong)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL s-balance-a05: request 0 (balance): check {check['id']}: expected" in out
    assert "1 tasks replayed through the tools" in out and "0 valid, 1 failed" in out

    task["meta"]["request_kinds"] = ["supplier"]
    wrong.write_text(json.dumps(data))
    assert run(["validate", str(wrong)]) == 2
    assert "meta.request_kinds: expected ('balance',), got ('supplier',)" in capsys.readouterr().err


def test_show_prints_a_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["show", "s-pay_after_decline-a04-aug"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("s-pay_after_decline-a04-aug  (1 request(s), account A04")
    assert "make_payment: amount_cents=21986" in out
    assert "r0_no_success_claim: not_said; after make_payment (failure), before make_payment" in out
    assert run(["show", "s-pay_after_decline-a04-aug", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["task_id"] == "s-pay_after_decline-a04-aug"
    assert run(["show", "s-nothing-a01"]) == 1
    assert "no task 's-nothing-a01'" in capsys.readouterr().err


def test_schema_prints_or_writes_the_published_schema(
    tmp_path: FilePath, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["$id"] == "vamos-env:task-set:v1"
    target = tmp_path / "task.schema.json"
    assert run(["schema", "--out", str(target)]) == 0
    assert target.read_bytes() == (data_dir() / "task.schema.json").read_bytes()
