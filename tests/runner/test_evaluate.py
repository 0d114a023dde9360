"""``evaluate`` in this process: resume without duplicates, growing a run, refusing a mix-up."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from vamos_env.channel.parameters import parameters_digest
from vamos_env.runner import EvalConfig, RunFolderError, evaluate, read_store


def config(out: Path, stacks: list[str] | None = None, **overrides: Any) -> EvalConfig:
    values: dict[str, Any] = {
        "stacks": stacks or [],
        "out": out,
        "tasks": "exam:3",
        "repeats": 2,
        "executor": "local",
        "stream": io.StringIO(),
    }
    values.update(overrides)
    return EvalConfig(**values)


def test_a_rerun_resumes_and_a_grown_run_runs_only_the_new_calls(
    tmp_path: Path, test_stack: Any
) -> None:
    one = [test_stack("v", "VerifyThenLeave")]
    first = evaluate(config(tmp_path, one))
    assert (first.planned, first.already_done, first.ran) == (6, 0, 6)
    again = evaluate(config(tmp_path, one))
    assert (again.already_done, again.ran) == (6, 0)
    grown = evaluate(config(tmp_path, [*one, test_stack("w", "AsyncWaiter")], repeats=3))
    assert (grown.planned, grown.already_done, grown.ran) == (18, 6, 12)
    keys = [r.key for r in read_store(tmp_path)]
    assert len(keys) == len(set(keys)) == 18
    manifest = json.loads((tmp_path / "run.json").read_text())
    assert set(manifest["stacks"]) == {"v", "w"} and manifest["repeats"] == 3
    assert grown.async_stats.peak_in_flight >= 1


def test_a_run_folder_keeps_its_trial_and_caller(tmp_path: Path, test_stack: Any) -> None:
    one = [test_stack("v", "VerifyThenLeave")]
    evaluate(config(tmp_path, one, tasks="exam:1", repeats=1))
    with pytest.raises(RunFolderError, match="trial_id='default', not 'other'"):
        evaluate(config(tmp_path, one, tasks="exam:1", repeats=1, trial_id="other"))
    with pytest.raises(RunFolderError, match="max_agent_turns"):
        evaluate(config(tmp_path, one, tasks="exam:1", repeats=1, max_agent_turns=10))
    # Calls made under another text-channel parameter file are not comparable either.
    manifest = json.loads((tmp_path / "run.json").read_text())
    assert manifest["channel_parameters"] == parameters_digest()
    (tmp_path / "run.json").write_text(json.dumps(manifest | {"channel_parameters": "0" * 16}))
    with pytest.raises(RunFolderError, match="channel_parameters='0000000000000000'"):
        evaluate(config(tmp_path, one, tasks="exam:1", repeats=1))


def test_the_progress_line_says_done_pass_rate_and_eta(tmp_path: Path, test_stack: Any) -> None:
    stream = io.StringIO()
    evaluate(config(tmp_path, [test_stack("v", "VerifyThenLeave")], stream=stream))
    last = stream.getvalue().strip().splitlines()[-1]
    assert last.startswith("[6/6] 100.0% calls | pass 0.0% of 6 counted |")
    assert "calls/s | ETA" in last


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"repeats": 0}, "--repeats"),
        ({"max_concurrency": 0}, "--max-concurrency"),
        ({"timeout_s": 0}, "--timeout"),
        ({"stacks": []}, "--stacks"),
    ],
)
def test_bad_settings_name_the_option(
    tmp_path: Path, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(config(tmp_path, **{"stacks": ["x"], **overrides}))


def test_a_stack_named_twice_is_refused(tmp_path: Path, test_stack: Any) -> None:
    with pytest.raises(ValueError, match="expected each stack once"):
        evaluate(config(tmp_path, [test_stack("v", "VerifyThenLeave"), test_stack("v", "Slow")]))


def _mark_excluded(store: Path, keys: set[str]) -> None:
    """Rewrite stored calls as benchmark faults (as an outage of our platform leaves them)."""
    lines = []
    for line in store.read_text().splitlines():
        row = json.loads(line)
        if row["key"] in keys:
            row["status"] = "excluded"
            row["exclusions"] = [{"kind": "lost_session", "detail": "step failed: outage"}]
        lines.append(json.dumps(row))
    store.write_text("\n".join(lines) + "\n")


def test_retry_faults_reruns_the_excluded_calls_in_place_exactly_once(
    tmp_path: Path, test_stack: Any
) -> None:
    stacks = [test_stack("v", "VerifyThenLeave")]
    first = evaluate(config(tmp_path, stacks))
    store = tmp_path / "results.jsonl"
    keys = [r.key for r in read_store(tmp_path)]
    _mark_excluded(store, set(keys[:3]))
    # A plain rerun keeps the faults (and says so); --retry-faults runs them again.
    again = evaluate(config(tmp_path, stacks))
    assert again.ran == 0 and again.excluded_stored == 3
    retried = evaluate(config(tmp_path, stacks, retry_faults=True))
    assert retried.retried == 3 and retried.ran == 3 and retried.excluded_stored == 0
    records = read_store(tmp_path)
    assert sorted(r.key for r in records) == sorted(keys)  # every call once
    assert len(store.read_text().splitlines()) == first.planned
    assert all(r.status != "excluded" for r in records)
    archived = (tmp_path / "results.retried.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["key"] for x in archived) == sorted(keys[:3])
    assert evaluate(config(tmp_path, stacks, retry_faults=True)).retried == 0


def test_repair_moves_a_torn_middle_line_aside_and_its_call_runs_again(
    tmp_path: Path, test_stack: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from vamos_env.cli import main

    stacks = [test_stack("v", "VerifyThenLeave")]
    evaluate(config(tmp_path, stacks))
    store = tmp_path / "results.jsonl"
    lines = store.read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]  # torn in the middle of the file
    store.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"results\.jsonl:2: .*vamos repair"):
        evaluate(config(tmp_path, stacks))
    assert main(["repair", str(tmp_path)]) == 0
    assert "moved 1 unreadable line(s) (line(s) 2)" in capsys.readouterr().out
    assert (tmp_path / "results.rejected.jsonl").exists()
    resumed = evaluate(config(tmp_path, stacks))
    assert resumed.ran == 1 and len(read_store(tmp_path)) == resumed.planned


def test_the_recogniser_profile_reaches_each_call_and_fixes_the_folder(tmp_path: Path) -> None:
    evaluate(config(tmp_path, ["reference"], tasks="exam:2", repeats=1, recogniser="ideal"))
    manifest = json.loads((tmp_path / "run.json").read_text())
    assert manifest["recogniser"] == "ideal"
    # The ideal profile passes the caller's words as said: the reference solves both calls.
    assert all(r.status == "pass" for r in read_store(tmp_path))
    with pytest.raises(RunFolderError, match="recogniser='ideal'"):
        evaluate(config(tmp_path, ["reference"], tasks="exam:2", repeats=1))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        # A speech-to-speech caller speaks: only in a duplex call.
        ({"caller": "realtime"}, "--caller realtime: a model session speaks; use --mode duplex"),
        # A chat model answers text turns: not in a duplex call.
        (
            {"caller": "openai", "mode": "duplex", "stacks": ["cascade"]},
            "--caller openai: a duplex call's caller is scripted or a model session",
        ),
        # The session's own preflight: its key.
        (
            {"caller": "gemini-live", "mode": "duplex", "stacks": ["cascade"]},
            "--caller gemini-live: expected GOOGLE_API_KEY",
        ),
    ],
)
def test_a_model_caller_is_for_duplex_calls_and_needs_its_key(
    tmp_path: Path, overrides: dict[str, Any], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vamos_env.channel.audio.engines import missing_reason

    if overrides.get("mode") == "duplex" and missing_reason() is not None:
        pytest.skip(str(missing_reason()))
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(ValueError, match=message):
        evaluate(config(tmp_path, **{"stacks": ["reference"], **overrides}))
