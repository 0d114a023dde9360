"""An invalid task file fails at load time naming the field, the expected and the actual value."""

from __future__ import annotations

import json
from pathlib import Path as FilePath
from typing import Any

import pytest

from vamos_env.envs.energy.tasks.exam import shipped_exam_path
from vamos_env.envs.energy.tasks.schema import TaskFileError, load_task_set


def shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(shipped_exam_path().read_text())
    return data


def load_broken(tmp_path: FilePath, data: dict[str, Any]) -> str:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TaskFileError) as error:
        load_task_set(path)
    return str(error.value)


def test_a_wrong_request_count(tmp_path: FilePath) -> None:
    data = shipped()
    task = data["tasks"][0]
    task["meta"]["request_count"] = 3
    message = load_broken(tmp_path, data)
    assert "meta.request_count: expected 2 (the requests), got 3" in message


def test_an_unknown_request_kind(tmp_path: FilePath) -> None:
    data = shipped()
    data["tasks"][5]["requests"][1]["kind"] = "pay_everything"
    message = load_broken(tmp_path, data)
    assert "tasks.5.requests.1.kind: Input should be 'balance', 'explain_bill'" in message
    assert '(got "pay_everything")' in message


def test_an_unexpected_field_and_a_wrong_type(tmp_path: FilePath) -> None:
    data = shipped()
    changing = next(i for i, t in enumerate(data["tasks"]) if t["expected_changes"])
    other = (changing + 1) % len(data["tasks"])
    data["tasks"][changing]["expected_changes"][0]["amount"] = 12
    data["tasks"][other]["caller"]["account_number"] = "12-345"
    message = load_broken(tmp_path, data)
    assert (
        f"tasks.{changing}.expected_changes.0.amount: Extra inputs are not permitted (got 12)"
        in message
    )
    assert f"tasks.{other}.caller.account_number: String should match pattern" in message
    assert '(got "12-345")' in message


def test_a_window_naming_a_missing_check(tmp_path: FilePath) -> None:
    data = shipped()
    task = next(t for t in data["tasks"] if any(c["kind"] == "confirm" for c in t["checks"]))
    confirm = next(c for c in task["checks"] if c["kind"] == "confirm")
    confirm["window"]["after_check"] = "r9_nothing"
    message = load_broken(tmp_path, data)
    assert f"checks[{confirm['id']}].window.after_check: expected one of" in message
    assert "got 'r9_nothing'" in message


def test_not_json_at_all(tmp_path: FilePath) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{tasks: [")
    with pytest.raises(TaskFileError, match="expected a JSON task file"):
        load_task_set(path)
