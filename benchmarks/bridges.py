"""Every bridge beside the local voice stack, paired on the same calls (issue 17).

The first N exam tasks (default 20), each in one room, the rooms taken in turn (task 1
clean, task 2 street, task 3 cafe, task 4 television, task 5 clean, ...): each call is the
one ``vamos eval --tasks exam:N --repeats 4`` plans for that task and that room (same
persona, same seed), so the cascade's figures here can also be set beside a full run's.
Every stack plays every call:

- ``cascade``, the local voice stack in process, unpaced (the baseline);
  ``cascade@g711`` is the same on a G.711 line (``stack@line`` runs any stack on that
  line), the fair baseline for ``twilio-stream-local``, whose agent hears 8 kHz mu-law;
- each bridge against its local server (``realtime-local``, ``gemini-live-local``,
  ``twilio-stream-local``, ``voice-ws-local``): the same voice stack behind the vendor's
  or the contract's wire, paced at the wall clock.
- any other stack named with ``--stacks`` (``pipecat-reference``: the Pipecat bot with the
  reference's decisions as its model, behind the Twilio bridge; needs the pipecat extra).

Unpaced stacks run first, ``--workers`` calls at a time (default: one per core), then the
paced ones, ``--paced-workers`` at a time (default: one per two cores). A paced call must
keep up with the wall clock while both its sides run recognisers on the same machine: four
at a time on two cores fell up to 11.5 s behind it (``late max``), and what a local server
heard then came in bursts.
Each worker process keeps one agent, and so one local server, per stack. Every finished call is
appended to ``OUT/results.jsonl`` at once, so a stopped run resumes where it stopped.

Printed per stack: calls passed overall and per room; against the cascade, the calls with
the same outcome and the calls each passed alone, with the paired difference and its
standard error; latency (median and p90 over every reply), dead air and replies to
background speech per call; the median wall time over the call's audio; the most a paced
call fell behind the wall clock; agent faults.

Run: .venv/bin/python benchmarks/bridges.py [--tasks 20] [--workers N] [--paced-workers N]
     [--stacks cascade,realtime-local,...] [--out runs/bench-bridges] [--summary]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from vamos_env.runner.plan import CallSpec, StackRef, plan_calls, resolve_stack, select_tasks
from vamos_env.runner.rollout import Rollout, RolloutSettings

BRIDGES = ("realtime-local", "gemini-live-local", "twilio-stream-local", "voice-ws-local")
BASELINE = "cascade"
ROOMS = ("clean", "street", "cafe", "television")

_rollouts: dict[str, Rollout] = {}
_stacks: dict[str, StackRef] = {}


def stack_and_line(name: str) -> tuple[str, str]:
    """``cascade@g711`` is the ``cascade`` stack on a ``g711`` line (default wideband)."""
    stack, _, line = name.partition("@")
    return stack, line or "wideband"


def paired_calls(stacks: Sequence[str], tasks: int) -> list[CallSpec]:
    """Each of the first ``tasks`` exam tasks in one room, the rooms in turn, per stack."""
    selection = select_tasks(f"exam:{tasks}")
    order = {task_id: i for i, task_id in enumerate(selection.task_ids)}
    specs = plan_calls(stacks, selection, repeats=len(ROOMS), trial_id="default")
    return [s for s in specs if s.repeat == order[s.task_id] % len(ROOMS)]


def _run_call(spec: CallSpec, tasks: int) -> str:
    """One call in a worker process (its Rollouts and its agents live as long as it does)."""
    name, line = stack_and_line(spec.stack)
    if line not in _rollouts:
        settings = RolloutSettings(mode="duplex", line=line)
        _rollouts[line] = Rollout(select_tasks(f"exam:{tasks}").task_set, settings)
    stack = _stacks.setdefault(name, resolve_stack(name))
    return _rollouts[line].run(spec, stack).model_dump_json()


def run(specs: Sequence[CallSpec], tasks: int, workers: tuple[int, int], out: Path) -> None:
    """Every call not yet in ``out``, unpaced stacks first (``workers``: calls at a time,
    unpaced and paced); each line stored as it ends."""
    out.mkdir(parents=True, exist_ok=True)
    store = out / "results.jsonl"
    lines = store.read_text().splitlines() if store.exists() else []
    done = {json.loads(line)["key"] for line in lines}
    todo = [s for s in specs if s.key not in done]
    unpaced = [s for s in todo if stack_and_line(s.stack)[0] == BASELINE]
    phases = [unpaced, [s for s in todo if s not in unpaced]]
    began = time.perf_counter()
    for phase, at_once in zip(phases, workers, strict=True):
        if not phase:
            continue
        with ProcessPoolExecutor(max_workers=at_once) as pool, store.open("a") as sink:
            running: set[Future[str]] = {pool.submit(_run_call, s, tasks) for s in phase}
            while running:
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    record = json.loads(future.result())
                    sink.write(json.dumps(record) + "\n")
                    sink.flush()
                    done.add(record["key"])
                    print(
                        f"[{time.perf_counter() - began:7.0f} s] {len(done)}/{len(specs)} "
                        f"{record['stack']:20s} {record['background']:10s} {record['status']:8s} "
                        f"{record['task_id']}",
                        flush=True,
                    )


def _p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[round(0.9 * (len(ordered) - 1))]


def summarise(specs: Sequence[CallSpec], out: Path, baseline: str = BASELINE) -> None:
    rows: dict[str, dict[str, Any]] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        rows[record["key"]] = record
    wanted = {s.key for s in specs}
    rows = {k: r for k, r in rows.items() if k in wanted}
    stacks = list(dict.fromkeys(s.stack for s in specs))
    base = {(r["task_id"], r["repeat"]): r for r in rows.values() if r["stack"] == baseline}
    print(f"{len(rows)} of {len(specs)} calls stored in {out / 'results.jsonl'}\n")
    head = (
        f"{'stack':20s} {'passed':>7s} "
        + " ".join(f"{room:>10s}" for room in ROOMS)
        + f" {'same':>6s} {'alone':>7s} {'diff':>10s} {'lat med/p90':>12s} {'dead/call':>9s}"
        + f" {'bg/call':>7s} {'wall/audio':>10s} {'late max':>8s} {'faults':>6s}"
    )
    print(head)
    for stack in stacks:
        mine = [r for r in rows.values() if r["stack"] == stack]
        if not mine:
            continue
        passed = sum(r["status"] == "pass" for r in mine)
        per_room = []
        for room in ROOMS:
            in_room = [r for r in mine if r["background"] == room]
            per_room.append(f"{sum(r['status'] == 'pass' for r in in_room)}/{len(in_room)}")
        pairs = [
            (r, base[(r["task_id"], r["repeat"])])
            for r in mine
            if (r["task_id"], r["repeat"]) in base
        ]
        same = sum((a["status"] == "pass") == (b["status"] == "pass") for a, b in pairs)
        only_mine = sum(a["status"] == "pass" and b["status"] != "pass" for a, b in pairs)
        only_base = sum(a["status"] != "pass" and b["status"] == "pass" for a, b in pairs)
        # Paired difference in passes and its standard error (per-call differences of -1/0/+1).
        diffs = [(a["status"] == "pass") - (b["status"] == "pass") for a, b in pairs]
        n = len(diffs)
        mean = sum(diffs) / n if n else 0.0
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
        se_calls = math.sqrt(var / n) * n if n else 0.0
        latencies = [x for r in mine for x in r["duplex"]["metrics"]["latencies_s"]]
        lat = f"{statistics.median(latencies):.2f}/{_p90(latencies):.2f}" if latencies else "-"
        metrics = [r["duplex"]["metrics"] for r in mine]
        dead = sum(m["dead_air_count"] for m in metrics) / len(mine)
        background = sum(m["background_replies"] for m in metrics) / len(mine)
        ratio = statistics.median(
            r["wall_s"] / max(m["duration_s"], 1e-9) for r, m in zip(mine, metrics, strict=True)
        )
        late = max(r["duplex"].get("late_s", 0.0) for r in mine)
        faults = sum(bool(r["agent_fault"]) for r in mine)
        diff = f"{only_mine - only_base:>+4d}±{se_calls:<4.1f}"
        print(
            f"{stack:20s} {passed:>3d}/{len(mine):<3d} "
            + " ".join(f"{c:>10s}" for c in per_room)
            + f" {same:>3d}/{n:<2d} {only_mine:>3d}:{only_base:<3d} {diff}"
            + f" {lat:>12s} {dead:>9.2f} {background:>7.2f} {ratio:>10.2f} {late:>8.2f}"
            + f" {faults:>6d}"
        )
    print(
        f"\nsame: calls with {baseline}'s outcome; alone: passed here only : passed by {baseline}"
        f" only; diff: passes here minus {baseline}'s, ± its paired standard error (calls)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20, help="the first N exam tasks (default 20)")
    parser.add_argument("--stacks", default=",".join((BASELINE, *BRIDGES)))
    cores = os.cpu_count() or 1
    parser.add_argument(
        "--workers", type=int, default=cores, help="unpaced calls at a time (default: cores)"
    )
    parser.add_argument(
        "--paced-workers",
        type=int,
        default=max(1, cores // 2),
        help="paced calls at a time (default: one per two cores)",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/bench-bridges"))
    parser.add_argument("--summary", action="store_true", help="only print what is stored")
    parser.add_argument(
        "--baseline",
        default=BASELINE,
        help="the stack the others are paired with (default cascade)",
    )
    args = parser.parse_args()
    stacks = [name.strip() for name in args.stacks.split(",") if name.strip()]
    specs = paired_calls(stacks, args.tasks)
    if not args.summary:
        run(specs, args.tasks, (args.workers, args.paced_workers), args.out)
    summarise(specs, args.out, args.baseline)


if __name__ == "__main__":
    main()
