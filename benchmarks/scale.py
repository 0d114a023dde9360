"""Does the runner scale with cores? Calls per second with 1, 2 and all cores (up to 16).

For each core count a fresh local Ray with that many CPUs runs the same offline calls (the
offline stacks on the exam; by default 600 calls) after a warm-up that starts the workers
and builds their snapshots, so the figure is the steady rate a long run sees. Printed per
core count: wall time, calls per second, and scaling efficiency (rate / (cores x the
one-core rate)). ``--batch-sizes`` compares calls per Ray task at the largest core count
(1 shows the per-task overhead that batching amortises).

Run: .venv/bin/python benchmarks/scale.py [--calls N] [--cores 1,2,4] [--batch-sizes 1,0]
(batch size 0 means the runner's automatic choice).
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import tempfile
import time
from pathlib import Path

from vamos_env.runner import EvalConfig, evaluate
from vamos_env.runner.plan import select_tasks

# Until the offline stacks are registered (vamos_env.agents), their classes by entry point.
OFFLINE_FALLBACK = {
    "reference": "vamos_env.agents.reference:ReferenceAgent",
    "leaky": "vamos_env.agents.flawed:LeakyAgent",
    "eager": "vamos_env.agents.flawed:EagerAgent",
    "promiser": "vamos_env.agents.flawed:PromiserAgent",
    "sloppy": "vamos_env.agents.flawed:SloppyAgent",
    "naive": "vamos_env.agents.flawed:NaiveAgent",
}


def offline_stack_names() -> list[str]:
    from vamos_env.runner.mainjob import offline_stacks

    registered = offline_stacks()
    if registered:
        return registered
    return [f"{name}={entry}" for name, entry in OFFLINE_FALLBACK.items()]


def rate(cores: int, calls: int, batch_size: int | None, stacks: list[str]) -> tuple[float, float]:
    """(wall seconds, calls per second) for ``calls`` offline calls on ``cores`` CPUs."""
    import ray

    ray.init(
        num_cpus=cores, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR
    )
    try:
        tasks = len(select_tasks("exam").task_ids)
        per_stack = max(1, calls // len(stacks))
        repeats = max(1, -(-per_stack // tasks))
        with tempfile.TemporaryDirectory() as folder:
            warm = EvalConfig(
                stacks=stacks[:1], out=Path(folder) / "warm", tasks=f"exam:{2 * cores}", repeats=1,
                max_concurrency=cores, progress=False, stream=io.StringIO(),
            )  # fmt: skip
            evaluate(warm)
            config = EvalConfig(
                stacks=stacks, out=Path(folder) / "run", tasks="exam", repeats=repeats,
                max_concurrency=cores, batch_size=batch_size, progress=False,
                stream=io.StringIO(),
            )  # fmt: skip
            summary = evaluate(config)
        return summary.wall_s, summary.calls_per_s
    finally:
        ray.shutdown()


def main() -> None:
    available = os.cpu_count() or 1
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=600, help="calls per measurement")
    parser.add_argument(
        "--cores", help="comma-separated core counts (default: 1, 2, 4, 8, 16 up to all)"
    )
    parser.add_argument("--batch-sizes", default="", help="e.g. 1,0 (0: automatic)")
    args = parser.parse_args()
    if args.cores:
        counts = [int(c) for c in args.cores.split(",")]
    else:
        counts = sorted({c for c in (1, 2, 4, 8, 16) if c <= available} | {min(available, 16)})
    stacks = offline_stack_names()
    print(f"{available} cores here; stacks: {', '.join(s.split('=')[0] for s in stacks)}")
    print(f"{'cores':>5} {'calls':>6} {'wall s':>8} {'calls/s':>8} {'efficiency':>10}")
    base = None
    for cores in counts:
        wall, per_s = rate(cores, args.calls, None, stacks)
        base = base or per_s / cores
        print(
            f"{cores:>5} {args.calls:>6} {wall:>8.1f} {per_s:>8.1f} {per_s / (cores * base):>10.0%}"
        )
    for size in [int(s) for s in args.batch_sizes.split(",") if s.strip()]:
        started = time.perf_counter()
        wall, per_s = rate(counts[-1], args.calls, size or None, stacks)
        label = "auto" if size == 0 else str(size)
        print(
            f"batch size {label:>4} on {counts[-1]} cores: {per_s:.1f} calls/s "
            f"({time.perf_counter() - started:.0f} s with start-up)"
        )


if __name__ == "__main__":
    main()
