"""A real two-node Ray cluster on loopback, started the way docs/evaluation.md says.

Ray 2.60 turns token authentication on for ``ray start --head``; every process (head,
joining node, driver) then needs ``RAY_AUTH_MODE=token`` and the same token, and the
head must listen on 127.0.0.2 (Ray replaces 127.0.0.1 by the machine's own address).
The test starts both nodes (one CPU each), runs a small ``vamos eval --address`` against
them and compares the records with an in-process run; then it ends the processes it
started, by their process groups.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vamos_env.runner import read_store

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]
HEAD_IP = "127.0.0.2"
RAY = Path(sys.executable).with_name("ray")


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=10)
            # The group may outlive its leader for a moment (Ray's own children).
            time.sleep(0.5)
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, Any]]:
    if not RAY.exists():
        pytest.skip("the ray command line is not installed")
    try:
        socket.create_connection((HEAD_IP, 9), timeout=0.2).close()
    except ConnectionRefusedError:
        pass  # 127.0.0.2 is routable here (nothing listens on port 9: as expected)
    except OSError:
        pytest.skip(f"{HEAD_IP} is not a loopback address on this machine")
    env = {
        **os.environ,
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    port = _free_port(HEAD_IP)
    temp = tempfile.mkdtemp(prefix="vr", dir="/tmp")  # Unix socket paths must stay short
    common = ["--num-cpus", "1", "--block", "--disable-usage-stats"]
    head_command = [
        str(RAY), "start", "--head", "--node-ip-address", HEAD_IP, "--port", str(port),
        "--include-dashboard", "false", "--temp-dir", temp,
        "--dashboard-agent-listen-port", str(_free_port(HEAD_IP)), *common,
    ]  # fmt: skip
    address = f"{HEAD_IP}:{port}"
    node_command = [
        str(RAY), "start", "--address", address, "--node-ip-address", "127.0.0.3",
        "--dashboard-agent-listen-port", str(_free_port(HEAD_IP)), *common,
    ]  # fmt: skip
    processes: list[subprocess.Popen[bytes]] = []

    log = Path(temp) / "start.log"

    def start(command: list[str]) -> None:
        # A session of its own: the whole group (Ray's children too) is ended at teardown.
        with log.open("ab") as out:
            processes.append(
                subprocess.Popen(command, env=env, start_new_session=True, stdout=out, stderr=out)
            )

    try:
        start(head_command)
        _wait_for_nodes(address, env, 1, processes, log)
        start(node_command)
        _wait_for_nodes(address, env, 2, processes, log)
        yield {"address": address, "env": env}
    finally:
        for process in reversed(processes):
            _stop(process)
        shutil.rmtree(temp, ignore_errors=True)


def _wait_for_nodes(
    address: str,
    env: dict[str, str],
    count: int,
    processes: list[subprocess.Popen[bytes]],
    log: Path,
    timeout_s: float = 90,
) -> None:
    probe = (
        "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
        "print(sum(1 for n in ray.nodes() if n['Alive']))"
    )
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in processes):
            raise AssertionError(f"ray start ended early:\n{log.read_text()[-3000:]}")
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
        except OSError:
            time.sleep(0.5)
            continue
        done = subprocess.run(
            [sys.executable, "-c", probe, address],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode == 0 and done.stdout.strip().splitlines()[-1:] == [str(count)]:
            return
        time.sleep(1)
    raise AssertionError(
        f"the cluster at {address} did not reach {count} node(s):\n{log.read_text()[-3000:]}"
    )


def _eval(*extra: str, env: dict[str, str], out: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "vamos_env.cli", "eval", "--stacks", "reference,naive",
        "--tasks", "exam:4", "--repeats", "2", "--out", str(out), "--quiet", *extra,
    ]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def _comparable(record: Any) -> Any:
    return record.model_dump(exclude={"worker", "wall_s", "response_latencies_s"})


def test_an_eval_on_a_two_node_loopback_cluster_matches_a_local_run(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    env = cluster["env"]
    on_cluster = _eval(
        "--address", cluster["address"], "--batch-size", "2", env=env, out=tmp_path / "cluster"
    )
    assert on_cluster.returncode == 0, on_cluster.stderr[-3000:]
    local = _eval("--executor", "local", env=env, out=tmp_path / "local")
    assert local.returncode == 0, local.stderr[-3000:]
    remote = {r.key: r for r in read_store(tmp_path / "cluster")}
    here = {r.key: r for r in read_store(tmp_path / "local")}
    assert len(remote) == 16 and remote.keys() == here.keys()
    assert {k: _comparable(r) for k, r in remote.items()} == {
        k: _comparable(r) for k, r in here.items()
    }
    # Eight batches on two one-CPU nodes: both worked (the workers are processes of the
    # two raylets; at least two distinct worker processes ran calls).
    assert len({r.worker for r in remote.values()}) >= 2

    # The driver without the token: one line saying what to set, not a hang.
    bare = {k: v for k, v in env.items() if not k.startswith("RAY_AUTH")}
    refused = _eval("--address", cluster["address"], env=bare, out=tmp_path / "refused")
    assert refused.returncode == 2
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("vamos eval: --address: cannot join the Ray cluster")
    assert "RAY_AUTH_MODE=token" in last
