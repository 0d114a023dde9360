"""The main job: the offline stacks, then the report, and where it is."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from vamos_env.runner import mainjob


def test_the_main_job_runs_the_offline_stacks_and_names_the_report(
    tmp_path: Path, test_stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        mainjob,
        "offline_stacks",
        lambda: [test_stack("a", "VerifyThenLeave"), test_stack("b", "Crashes")],
    )
    said = io.StringIO()
    out = tmp_path / "exam"
    code = mainjob.run_main_job(out, tasks="exam:2", repeats=2, executor="local", stream=said)
    assert code == 0
    text = said.getvalue()
    assert "Evaluating 2 offline stacks" in text and "8 calls run" in text
    assert f"Report: {out / 'report.html'}" in text and (out / "report.html").exists()
    again = io.StringIO()
    assert mainjob.run_main_job(out, tasks="exam:2", repeats=2, executor="local", stream=again) == 0
    assert "0 calls run" in again.getvalue() and "8 were already stored" in again.getvalue()


def test_without_offline_stacks_it_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(mainjob, "offline_stacks", lambda: [])
    assert mainjob.run_main_job(tmp_path) == 2
    assert "no offline stack is registered" in capsys.readouterr().err
