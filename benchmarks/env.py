"""How fast is one call? Median ``reset()`` and ``step()`` times and calls per second per core.

The reference agent plays every four-request task of the exam (its hardest calls) with the
scripted caller, in one process, one call after another. Printed:

- ``reset()``: clone both services, cast the caller, open the call (median, p90);
- ``step()``: one agent action through tools, channel and caller, grading included on the
  last step (median, p90, and the final, grading step on its own);
- the agent's own ``act()`` time (median), and calls per second on this one core.

Run: .venv/bin/python benchmarks/env.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from vamos_env.callers.casting import cast
from vamos_env.envs.energy.env import VamosEnergyEnv

REFERENCE_FALLBACK = "vamos_env.agents.reference:ReferenceAgent"


def reference_agent() -> Any:
    import vamos_env.agents  # noqa: F401  (registers the shipped stacks)
    from vamos_env.agents.base import make_agent, stacks
    from vamos_env.runner.plan import load_factory

    if "reference" in stacks():
        return make_agent("reference")
    return load_factory(REFERENCE_FALLBACK)()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3, help="repeats of each task (default 3)")
    args = parser.parse_args()

    started = time.perf_counter()
    env = VamosEnergyEnv("exam")
    built = time.perf_counter() - started
    print(f"environment built (seeded snapshot, once per process): {built:.2f} s")
    tasks = sorted(t.task_id for t in env.task_set.tasks if len(t.requests) == 4)
    table = cast([t.task_id for t in env.task_set.tasks], trial_id="default", repeats=args.repeats)
    calls = [c for c in table if c.task_id in set(tasks)]
    agent = reference_agent()

    resets: list[float] = []
    steps: list[float] = []
    last_steps: list[float] = []
    acts: list[float] = []
    passed = 0
    began = time.perf_counter()
    for casting in calls:
        t = time.perf_counter()
        observation, info = env.reset(
            seed=casting.seed,
            options={
                "task_id": casting.task_id,
                "repeat": casting.repeat,
                "persona": casting.persona,
                "background": casting.background,
            },
        )
        resets.append(time.perf_counter() - t)
        agent.reset(info)
        while True:
            t = time.perf_counter()
            action = agent.act(observation, info)
            acts.append(time.perf_counter() - t)
            t = time.perf_counter()
            observation, reward, terminated, truncated, info = env.step(action)
            elapsed = time.perf_counter() - t
            if terminated or truncated:
                last_steps.append(elapsed)
                passed += reward == 1.0
                break
            steps.append(elapsed)
    wall = time.perf_counter() - began

    def ms(values: list[float]) -> str:
        median, p90 = statistics.median(values) * 1e3, percentile(values, 0.9) * 1e3
        return f"median {median:.2f} ms, p90 {p90:.2f} ms"

    print(
        f"{len(calls)} calls: the reference agent, {len(tasks)} four-request tasks x {args.repeats}"
    )
    print(f"reset():                 {ms(resets)}")
    print(f"step() (not the last):   {ms(steps)} over {len(steps)} steps")
    print(f"last step (with grading): {ms(last_steps)}")
    print(f"agent act():             {ms(acts)}")
    per_call = (len(steps) + len(last_steps)) / len(calls)
    print(f"steps per call: {per_call:.1f}; passed {passed}/{len(calls)}")
    print(
        f"calls per second on one core: {len(calls) / wall:.1f} ({wall / len(calls) * 1e3:.1f} ms)"
    )


if __name__ == "__main__":
    main()
