"""The results store: whole lines, torn tails cut, keys never written twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vamos_env.runner.store import ResultStore, StoreError, read_store


def line(key: str, status: str = "fail", **extra: object) -> tuple[str, str, str]:
    return key, status, json.dumps({"key": key, "status": status, **extra})


def test_appended_keys_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    with ResultStore(path) as store:
        assert store.append([line("a/t1/0", "pass"), line("a/t1/1")]) == 2
    with ResultStore(path) as store:
        assert store.keys == {"a/t1/0": "pass", "a/t1/1": "fail"}
        assert "a/t1/0" in store and len(store) == 2


def test_a_stored_key_is_never_written_again(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    with ResultStore(path) as store:
        store.append([line("a/t1/0")])
        assert store.append([line("a/t1/0"), line("a/t1/1")]) == 1
    rows = [json.loads(x)["key"] for x in path.read_text().splitlines()]
    assert rows == ["a/t1/0", "a/t1/1"]


def test_a_torn_last_line_is_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    whole = json.dumps({"key": "a/t1/0", "status": "pass"}) + "\n"
    torn = json.dumps({"key": "a/t1/1", "status": "fail", "transcript": "x" * 100})[:40]
    path.write_text(whole + torn)
    with ResultStore(path) as store:
        assert store.torn_bytes == len(torn)
        assert store.keys == {"a/t1/0": "pass"}  # the torn call runs again
        store.append([line("a/t1/1")])
    lines = path.read_text().splitlines()
    assert [json.loads(x)["key"] for x in lines] == ["a/t1/0", "a/t1/1"]


def test_reading_tolerates_a_torn_tail_but_not_a_corrupt_middle(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "a", "status": "pass"}\n{"key": "b", "sta')
    # The report reads a store while a run is killed mid-write: the torn tail is no record.
    assert [k for k, _ in ResultStore(path)._rows()] == [1]
    path.write_text('{"key": "a", "status": "pass"}\nnot json\n{"key": "c", "status": "fail"}\n')
    with pytest.raises(StoreError, match=r"results\.jsonl:2: expected a JSON line.*vamos repair"):
        ResultStore(path).open()


def test_a_line_without_a_key_is_refused_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "a", "status": "pass"}\n{"status": "pass"}\n')
    with pytest.raises(StoreError, match=r":2: expected a call record with a key"):
        ResultStore(path).open()


def test_read_store_needs_a_results_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results file"):
        read_store(tmp_path)


def test_appending_needs_an_open_store(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="open"):
        ResultStore(tmp_path / "r.jsonl").append([line("a")])
