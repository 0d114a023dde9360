"""``vamos llm serve`` refusals and ``vamos grade calibrate --verifier llm --model local``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from vamos_env.cli import main
from vamos_env.envs.energy.env import resolve_tasks
from vamos_env.grading import grade
from vamos_env.grading.records import GradedCall, read_records, write_records
from vamos_env.llm import server as local
from vamos_env.testing.fake_openai import FakeOpenAIServer
from vamos_env.types import Transcript

LABELLED = Path(__file__).resolve().parents[1] / "grading" / "labelled"
CHECK_HEADER = re.compile(r"^check (\S+) \((\w+)\):", re.MULTILINE)


def test_serve_refuses_a_missing_model_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["llm", "serve", "--model", "/no/such.gguf"]) == 2
    assert "--model: expected a GGUF file" in capsys.readouterr().err


def test_serve_refuses_a_host_off_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["llm", "serve", "--host", "0.0.0.0"])
    assert caught.value.code == 2
    assert "expected a loopback host" in capsys.readouterr().err


def _verdicts(request: Any) -> str:
    user = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
    checks = [
        {"id": i, "verdict": "pass", "evidence_turns": [], "quote": "", "reason": "heard it"}
        for i, _ in CHECK_HEADER.findall(user)
    ]
    return json.dumps({"checks": checks})


def test_calibrate_asks_the_local_model_for_missing_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = json.loads((LABELLED / "calls.jsonl").read_text().splitlines()[0])
    tasks = {t.task_id: t for t in resolve_tasks(LABELLED / "tasks.json").tasks}
    task = tasks[raw["task_id"]]
    transcript = Transcript.model_validate(raw["transcript"])
    from vamos_env.grading.ledger import LedgerDiff

    verdict = grade(task, transcript, LedgerDiff())
    record = GradedCall(key="k1", task_id=task.task_id, transcript=transcript, verdict=verdict)
    results = tmp_path / "results.jsonl"
    write_records(results, [record])
    filled = tmp_path / "filled.jsonl"
    with FakeOpenAIServer(_verdicts, models=("local",)) as fake:
        monkeypatch.setenv(local.BASE_URL_VARIABLE, fake.base_url)
        status = main(
            [
                "grade",
                "calibrate",
                str(results),
                "--verifier",
                "llm",
                "--model",
                "local",
                "--tasks",
                str(LABELLED / "tasks.json"),
                "--write",
                str(filled),
            ]
        )
        body = fake.model_requests()[0].body
    assert status == 0
    assert body["model"] == "local"
    assert body["response_format"]["json_schema"]["strict"] is True
    out = capsys.readouterr().out
    assert f"checks compared: {len(task.checks)}" in out
    (stored,) = list(read_records(filled))
    assert stored.llm_checks is not None
    assert {c.id for c in stored.llm_checks} == {c.id for c in task.checks}


def test_calibrate_names_a_task_it_cannot_find(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    record = GradedCall(key="k", task_id="no-such-task", transcript=Transcript(task_id="x"))
    results = tmp_path / "r.jsonl"
    write_records(results, [record])
    with FakeOpenAIServer(models=("local",)) as fake:
        monkeypatch.setenv(local.BASE_URL_VARIABLE, fake.base_url)
        status = main(["grade", "calibrate", str(results), "--verifier", "llm", "--model", "local"])
    assert status == 2
    assert "no-such-task" in capsys.readouterr().err
