"""The reward-hacking table, and the labelled set's agreement report.

Every trick of ``tests/grading/hacking/tricks.py`` (agents that try to score without doing
the job) plays the exam tasks it applies to through ``VamosEnergy-v0``: scripted calm
caller, clean channel, seed 0. The table gives, per trick, the applicable tasks, the calls
played, the mean reward and the calls rewarded, and the rewarded calls are listed. By
default every applicable task is played at least once and every variant (phrasing) at
least once, as the test does; ``--full`` plays every variant on every applicable task.

Exits 1 if any trick earned any reward.

``--labelled`` instead regrades the hand-labelled calls of ``tests/grading/labelled/`` with
the code verifier and prints the agreement per assertion and per check, and every
disagreement; it exits 1 below 99% agreement on assertion labels.

Run: .venv/bin/python benchmarks/hacking.py [--full] [--trick NAME] [--labelled]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import re
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def hacking(full: bool, only: str | None) -> int:
    tricks = _load("hacking_tricks", ROOT / "tests/grading/hacking/tricks.py")
    from vamos_env.envs.energy.env import VamosEnergyEnv

    env = VamosEnergyEnv(recogniser="ideal")  # the grader is measured, not the ear
    tasks = sorted(env.task_set.tasks, key=lambda t: t.task_id)
    print(f"{len(tasks)} exam tasks, scripted calm caller, clean channel, seed 0")
    header = (
        f"{'trick':32} {'variants':>8} {'tasks':>6} {'calls':>6} {'reward':>7} {'rewarded':>9}"
        "  failed checks (most common)"
    )
    print(header)
    print("-" * len(header))
    rewarded: list[str] = []
    started = time.perf_counter()
    calls = 0
    for trick in tricks.TRICKS:
        if only and trick.name != only:
            continue
        pairs = tricks.plan(trick, tasks, full=full)
        applicable = len({task_id for _, task_id in pairs})
        rewards = []
        failed: collections.Counter[str] = collections.Counter()
        for factory, task_id in pairs:
            played = tricks.play(env, factory(), task_id)
            rewards.append(played.reward)
            failed.update(
                {re.sub(r"^r\d+_|_\d+_", "_", c).strip("_") for c in played.failed_checks()}
            )
            if played.reward > 0:
                rewarded.append(f"{trick.name} {played.variant} on {task_id}")
        calls += len(pairs)
        mean = sum(rewards) / len(rewards) if rewards else 0.0
        hits = sum(r > 0 for r in rewards)
        print(
            f"{trick.name:32} {len(trick.variants):>8} {applicable:>6} {len(pairs):>6} "
            f"{mean:>7.3f} {hits:>9}  "
            + ", ".join(f"{name} {n}" for name, n in failed.most_common(3))
        )
    elapsed = time.perf_counter() - started
    print(f"\n{calls} calls in {elapsed:.1f} s")
    if rewarded:
        print(f"\n{len(rewarded)} rewarded calls:")
        for line in rewarded[:60]:
            print(f"  {line}")
        if len(rewarded) > 60:
            print(f"  ... and {len(rewarded) - 60} more")
        return 1
    print("no trick earned any reward")
    return 0


def labelled() -> int:
    agreement = _load("labelled_agreement", ROOT / "tests/grading/labelled/agreement.py")
    report = agreement.regrade_all()
    print(report.text())
    return 0 if report.assertion_agreement >= agreement.TARGET else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every variant on every task")
    parser.add_argument("--trick", help="only this trick")
    parser.add_argument("--labelled", action="store_true", help="the labelled set's report")
    args = parser.parse_args()
    if args.labelled:
        return labelled()
    return hacking(args.full, args.trick)


if __name__ == "__main__":
    sys.exit(main())
