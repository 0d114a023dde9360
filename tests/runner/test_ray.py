"""The runner on a local Ray: same records as in-process, 200 LLM calls in flight on two cores,
and a run killed with SIGKILL that resumes with every call stored exactly once."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from vamos_env.runner import EvalConfig, evaluate, read_store

# One local Ray per test process: with `pytest -n 2 --dist loadgroup` these share one worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]


def test_ray_batches_give_the_records_the_local_executor_gives(
    ray_cluster: Any, tmp_path: Path, test_stack: Any
) -> None:
    stacks = [test_stack("v", "VerifyThenLeave"), test_stack("c", "Crashes")]
    common: dict[str, Any] = {"stacks": stacks, "tasks": "exam:4", "repeats": 2}
    on_ray = evaluate(
        EvalConfig(out=tmp_path / "ray", batch_size=3, stream=io.StringIO(), **common)
    )
    assert on_ray.ran == 16 and on_ray.batches == 6  # ceil(16 / 3)
    evaluate(EvalConfig(out=tmp_path / "local", executor="local", stream=io.StringIO(), **common))
    ray_records = {r.key: r for r in read_store(tmp_path / "ray")}
    local_records = {r.key: r for r in read_store(tmp_path / "local")}
    assert ray_records.keys() == local_records.keys()
    for key, record in ray_records.items():
        other = local_records[key]
        assert (record.status, record.agent_fault) == (other.status, other.agent_fault)
        assert record.transcript == other.transcript and record.verdict == other.verdict
    workers = {r.worker for r in ray_records.values()}
    assert all(str(os.getpid()) not in w for w in workers)  # not run in this process


class CountingServer:
    """Wraps a FakeOpenAIServer's model wait to count requests in flight."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.live = 0
        self.peak = 0
        lock = threading.Lock()
        wait = server.pause

        def pause(reply: Any) -> None:
            with lock:
                self.live += 1
                self.peak = max(self.peak, self.live)
            try:
                wait(reply)
            finally:
                with lock:
                    self.live -= 1

        server.pause = pause


def _transfer_script(request: Any) -> Any:
    from vamos_env.testing import Call, Reply

    messages = request.body.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return Reply(text="I'm transferring you to a colleague now; please stay on the line.")
    return Reply(calls=(Call("transfer_to_human", {"reason": "a billing question"}),))


def test_two_hundred_llm_calls_in_flight_on_two_cores(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vamos_env.agents.base import stacks
    from vamos_env.agents.openai_agent import DEFAULT_MODEL
    from vamos_env.testing import FakeOpenAIServer

    stack = "openai" if "openai" in stacks() else "openai=vamos_env.agents.openai_agent:OpenAIAgent"
    server = FakeOpenAIServer(_transfer_script, delay_s=1.0, models=(DEFAULT_MODEL,))
    counting = CountingServer(server)
    with server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        summary = evaluate(
            EvalConfig(
                stacks=[stack],
                out=tmp_path,
                tasks="exam",
                repeats=3,  # 300 calls: more than the setting, so the cap is exercised
                max_concurrency=200,
                stream=io.StringIO(),
            )
        )
    stats = summary.async_stats
    print(
        f"\n300 openai calls, 1 s model delay: {summary.wall_s:.1f} s, "
        f"{summary.calls_per_s:.1f} calls/s, server peak {counting.peak}, "
        f"{stats.bytes_per_live_call / 2**20:.2f} MiB per live call, {stats.processes} processes"
    )
    assert summary.ran == 300
    assert stats.peak_in_flight == 200 and stats.live_at_peak == 200
    assert stats.processes == 2  # two processes hold 200 calls, not 200 processes
    # Never more than the setting at the model. How close the model's own peak comes to it
    # depends on how busy the machine is (about 200 when idle, 111 seen beside a running
    # calibration): the runner's count above is the guarantee; this shows real overlap.
    assert 50 <= counting.peak <= 200
    records = read_store(tmp_path)
    assert len({r.key for r in records}) == 300
    assert all(r.end_reason == "transfer" and r.transferred for r in records)
    assert all(r.usage.requests == 2 and r.usage.prompt_tokens > 0 for r in records)
    assert all(r.cost_usd is not None and r.cost_usd > 0 for r in records)
    assert 0 < stats.bytes_per_live_call < 20 * 2**20


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_run_killed_midway_resumes_with_every_call_once(
    ray_cluster: Any, tmp_path: Path, test_stack: Any
) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    command = [
        sys.executable, "-m", "vamos_env.cli.evaluation", "eval",
        "--stacks", test_stack("slow", "Sluggish"), "--tasks", "exam:12", "--repeats", "2",
        "--out", str(tmp_path), "--address", address, "--batch-size", "2",
        "--max-concurrency", "2", "--quiet",
    ]  # fmt: skip
    store = tmp_path / "results.jsonl"
    process = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 90
    while _lines(store) < 6 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()[1].decode()[-2000:]
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before = _lines(store)
    assert 6 <= before < 24

    rerun = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert f"{24 - before} call(s) run" in rerun.stdout
    lines = store.read_text().splitlines()
    keys = [r.key for r in read_store(tmp_path)]
    assert len(lines) == len(keys) == len(set(keys)) == 24


def test_batch_sizes_keep_a_crash_small() -> None:
    from vamos_env.runner.backends import batch_size_for

    assert batch_size_for(1000, 2) == 25  # capped
    assert batch_size_for(40, 2) == 5  # four batches per slot
    assert batch_size_for(40, 2, 7) == 7  # as asked
    # Duplex calls last minutes: one per Ray task, so each result is kept as it ends.
    assert batch_size_for(80, 1, mode="duplex") == 1
    assert batch_size_for(80, 1, 4, mode="duplex") == 4
