"""``vamos eval``, ``vamos report`` and ``vamos redteam`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vamos_env.cli import grading as cli_grading
from vamos_env.cli.evaluation import main
from vamos_env.runner import read_store


def test_eval_then_report(
    tmp_path: Path, test_stack: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "--stacks", test_stack("v", "VerifyThenLeave"), "--tasks", "exam:2"]
    args += ["--repeats", "1", "--out", str(tmp_path), "--executor", "local", "--report"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "2 call(s) run" in out and f"Report: {tmp_path / 'report.html'}" in out
    assert main(["report", str(tmp_path), "--title", "Again"]) == 0
    assert (tmp_path / "summary.md").read_text().startswith("# Again")


def test_usage_problems_exit_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--stacks", "no-such-stack", "--out", str(tmp_path)]) == 2
    assert "unknown stack 'no-such-stack'" in capsys.readouterr().err
    assert main(["eval", "--stacks", "x", "--tasks", "exam:0", "--out", str(tmp_path)]) == 2
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "expected a run folder (runs/NAME), got no such folder" in capsys.readouterr().err


def test_redteam_gate_fails_an_agent_that_promises_what_it_cannot(
    tmp_path: Path, test_stack: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["redteam", "--stack", test_stack("waiver", "Waiver"), "--scripted", "3"]
    assert main([*args, "--sceptic", "3", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "6 calls (3 scripted, 3 sceptic" in out and "run: FAIL" in out
    assert "scope_discipline" in out and "BELOW FLOOR" in out
    judged = [json.loads(x) for x in (tmp_path / "judged.jsonl").read_text().splitlines()]
    assert [j["persona"] for j in judged][3:] == ["sceptic"] * 3
    assert all(j["background"] == "clean" and j["judge"]["judge"] == "heuristic" for j in judged)
    # The grading CLI re-reads the judged calls and reaches the same decision.
    assert cli_grading.main(["judge", "gate", str(tmp_path / "judged.jsonl")]) == 1


def test_redteam_gate_passes_a_run_the_rubric_accepts(
    test_stack: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["redteam", "--stack", test_stack("leaver", "VerifyThenLeave")]
    assert main([*args, "--scripted", "2", "--sceptic", "2"]) == 0
    assert "run: PASS" in capsys.readouterr().out


def test_an_agent_emitting_surrogates_and_deep_arguments_costs_only_its_own_calls(
    tmp_path: Path, test_stack: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "eval", "--stacks", f"reference,{test_stack('mangler', 'Mangler')}", "--tasks", "exam:3",
        "--repeats", "2", "--out", str(tmp_path), "--executor", "local", "--quiet", "--report",
    ]  # fmt: skip
    assert main(argv) == 0
    records = {r.key: r for r in read_store(tmp_path)}
    assert len(records) == 12  # every call stored, the reference's and the mangler's
    mangled = [r for r in records.values() if r.stack == "mangler"]
    # The mangler's calls are counted, as misses: nothing it sent excluded them.
    assert all(r.status == "fail" and r.counted and not r.exclusions for r in mangled)
    assert all(r.replaced_code_points >= 3 for r in mangled)
    for record in mangled:
        refused = [t for t in record.trace if "max_depth" in (t.error or "")]
        assert len(refused) == 2, record.trace
        assert record.transcript is not None
        said = record.transcript.said_by("agent")
        assert said[0].text == "Hello \ufffd, Acme Energy here \ufffd\ufffd"
        assert said[1].text == "One \ufffd"  # the null text part says nothing, not "None"
    assert (tmp_path / "report.html").exists()
    assert "mangler" in capsys.readouterr().out
