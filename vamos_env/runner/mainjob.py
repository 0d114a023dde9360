"""The main job: every offline stack on the full exam, three repeats, then the report.

It needs no key and no network: the offline stacks (the reference solver and the flawed
baselines) play against the scripted callers. Rerunning resumes the same run folder, so
an interrupted job finishes where it stopped; a finished one only rewrites the report.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Literal, TextIO

from vamos_env.runner.evaluate import EvalConfig, RunFolderError, evaluate


def offline_stacks() -> list[str]:
    """The registered text stacks that run with no key and no network, in registration
    order (voice stacks such as ``cascade`` run in duplex calls, a separate command)."""
    import vamos_env.agents  # noqa: F401  (registers the shipped stacks)
    from vamos_env.agents.base import stacks

    return [name for name, spec in stacks().items() if spec.offline and not spec.duplex]


def run_main_job(
    out: str | Path = "runs/exam",
    *,
    repeats: int = 3,
    tasks: str = "exam",
    executor: Literal["ray", "local"] = "ray",
    num_cpus: int | None = None,
    stream: TextIO | None = None,
) -> int:
    """Evaluate the offline stacks, write the report, say where it is; 0 on success."""
    from vamos_env.report import write_report

    say = stream or sys.stdout
    names = offline_stacks()
    if not names:
        print("vamos: no offline stack is registered (vamos_env.agents)", file=sys.stderr)
        return 2
    print(
        f"Evaluating {len(names)} offline stacks ({', '.join(names)}) on {tasks}, "
        f"{repeats} repeats, into {out} ...",
        file=say,
    )
    try:
        summary = evaluate(
            EvalConfig(
                stacks=names,
                out=Path(out),
                tasks=tasks,
                repeats=repeats,
                executor=executor,
                num_cpus=num_cpus,
                # Offline stacks need no rate limit: one call per core at a time.
                max_concurrency=max(5, num_cpus or os.cpu_count() or 1),
            )
        )
    except RunFolderError as exc:
        print(f"vamos demo: {exc} (or delete {out} to start it again)", file=sys.stderr)
        return 2
    files = write_report(summary.out)
    pooled = files.metrics.pooled
    print(
        f"{summary.ran} calls run in {summary.wall_s:.1f} s ({summary.calls_per_s:.1f} calls/s); "
        f"{summary.already_done} were already stored. Pooled completion: {pooled.text()}.",
        file=say,
    )
    for stack in files.metrics.stacks:
        print(f"  {stack.stack:<12} {stack.completion.text()}", file=say)
    print(f"Report: {files.html}\nSummary: {files.summary}", file=say)
    return 0
