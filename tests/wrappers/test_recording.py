"""RecordEpisode: one whole JSON line per finished call, and no partial line after a crash."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

from vamos_env.wrappers import FaultInjection, RecordEpisode, read_records

END = {"type": "end_call"}


def test_one_line_per_call_with_everything_needed(call: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "runs" / "calls.jsonl"
    env = RecordEpisode(call.make_env(), path)
    call.run(env, [*call.PASSING, END], seed=3, options=call.CALM_CLEAN)
    call.run(env, [call.PASSING[0], END], seed=4, options={"task_id": call.TASK})
    env.close()

    lines = path.read_bytes().split(b"\n")
    assert len(lines) == 3 and lines[-1] == b""  # two records, each ending its line
    first, second = read_records(path)
    assert first["task_id"] == second["task_id"] == call.TASK
    assert (first["seed"], second["seed"]) == (3, 4)
    assert first["options"] == call.CALM_CLEAN
    assert (first["persona"], first["background"]) == ("calm", "clean")
    assert first["reward"] == 1.0 and first["verdict"]["passed"] is True
    assert second["reward"] == 0.0 and second["end_reason"] == "end_call"
    assert first["terminated"] and not first["truncated"]
    assert [e["tool"] for e in first["trace"]] == [
        "verify_caller",
        "get_account",
        "set_paperless_billing",
    ]
    assert first["trace"][2]["writes"] and first["trace"][2]["verified"] is True
    assert first["transcript"]["turns"][0]["speaker"] == "caller"
    assert "system_prompt" not in first and "tool_results" not in first


def test_an_abandoned_call_is_not_recorded(call: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    env = RecordEpisode(call.make_env(), path)
    call.run(env, call.PASSING[:2], seed=0, options=call.CALM_CLEAN)  # reset before it ends
    call.run(env, [END], seed=1, options=call.CALM_CLEAN)
    assert [r["seed"] for r in read_records(path)] == [1]


def test_what_inner_wrappers_add_is_kept(call: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    env = RecordEpisode(FaultInjection(call.make_env(), rate=1.0), path)
    call.run(env, [call.PASSING[1], END], seed=0, options=call.CALM_CLEAN)
    (record,) = read_records(path)
    assert record["faults_injected"] and record["faults_injected"][0]["turn"] == 1


CRASH = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {helpers!r})
    import paperless_call as call
    from vamos_env.wrappers import RecordEpisode

    env = RecordEpisode(call.make_env(), {path!r})
    call.run(env, [*call.PASSING, {{"type": "end_call"}}], seed=0, options=call.CALM_CLEAN)
    call.run(env, call.PASSING[:3], seed=1, options=call.CALM_CLEAN)
    os._exit(3)  # the process dies mid-call: no close, no clean-up
    """
)


def test_a_crash_mid_call_leaves_only_whole_lines(call: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    script = CRASH.format(helpers=str(Path(str(call.__file__)).parent), path=str(path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert done.returncode == 3, done.stderr.decode()
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data)["seed"] == 0


def test_a_write_cut_short_is_cut_off_before_appending(call: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    env = RecordEpisode(call.make_env(), path)
    call.run(env, [END], seed=0, options=call.CALM_CLEAN)
    env.close()
    whole = path.read_bytes()
    with path.open("ab") as handle:  # what a process killed inside write() could leave
        handle.write(b'{"record_version": 1, "task_id": "s-enable_pa')
    assert len(read_records(path)) == 1  # readers skip it...

    env = RecordEpisode(call.make_env(), path)  # ...and the next writer removes it
    assert path.read_bytes() == whole
    call.run(env, [END], seed=1, options=call.CALM_CLEAN)
    env.close()
    assert [r["seed"] for r in read_records(path)] == [0, 1]
