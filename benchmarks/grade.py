"""How long does the end-of-call evaluation take for a four-request call?

The call is the graded example set's ``four_reference`` (task ``ex.four_requests``:
balance, payment arrangement, paperless, supplier; 18 turns, 6 tool calls, 8 checks),
played once on real twins. Each sample then times what the runner does when a call
ends: the ledger diff between the pristine clone and the final twins
(``read_ledger``), and the verdict (``grade`` with the code verifier: cross-check, gate,
actions and requirements). The speech parser caches its analysis per text, so the
cache is cleared before every sample to time a cold evaluation, as the first grading of
a fresh transcript is.

Target: median at most 20 ms.

Run: .venv/bin/python benchmarks/grade.py [--repeat N]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.grading import grade, read_ledger
from vamos_env.speech import numbers
from vamos_env.types import Transcript

ROOT = Path(__file__).resolve().parents[1]


def _example_set() -> ModuleType:
    path = ROOT / "tests" / "grading" / "example_set.py"
    spec = importlib.util.spec_from_file_location("grading_example_set", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    example_set = _example_set()
    world = example_set.ExampleWorld(default_snapshot())
    example = next(e for e in example_set.load_examples() if e.id == "four_reference")
    task = world.tasks[example.task]
    number = task.caller.account_number

    # Play the call once, keeping the pristine clone and the final twins.
    before = world.snapshot.clone()
    after = before.clone()
    clients = after.clients()
    session = CallSession(clients)
    turns = [world._turn(i, spec, task, session) for i, spec in enumerate(example.turns)]
    clients.close()
    transcript = Transcript(task_id=task.task_id, turns=turns)

    diff_times, grade_times, total_times = [], [], []
    verdict = None
    for _ in range(args.repeat):
        numbers.analyse.cache_clear()
        started = time.perf_counter()
        ledger = read_ledger(before, after, number)
        diffed = time.perf_counter()
        verdict = grade(task, transcript, ledger)
        done = time.perf_counter()
        diff_times.append(diffed - started)
        grade_times.append(done - diffed)
        total_times.append(done - started)
    assert verdict is not None and verdict.passed, verdict

    def ms(values: list[float]) -> str:
        return f"median {statistics.median(values) * 1000:6.2f} ms, p95 " + (
            f"{sorted(values)[int(len(values) * 0.95) - 1] * 1000:6.2f} ms"
        )

    print(f"four-request call: {len(transcript.turns)} turns, {len(task.checks)} checks, "
          f"{len(verdict.all_checks())} check results, {args.repeat} samples")  # fmt: skip
    print(f"ledger diff          {ms(diff_times)}")
    print(f"grade (code)         {ms(grade_times)}")
    print(f"end-of-call total    {ms(total_times)}   (target: median <= 20 ms)")
    return 0 if statistics.median(total_times) <= 0.020 else 1


if __name__ == "__main__":
    sys.exit(main())
