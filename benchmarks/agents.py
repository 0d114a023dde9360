"""The offline stacks on the exam: pass rates per assertion, and what a scripted call costs.

Every stack (the reference solver and the five flawed baselines) plays each exam task
once through ``VamosEnergy-v0`` with the scripted caller in the clean room (the
reference also under the angry and sceptic personas), by default with the ``ideal``
recogniser profile (no recogniser: the caller's words as said), so that what is measured
is the stacks' logic; ``--recogniser whisper-tiny.en`` plays the measured recogniser in
the quiet room instead (benchmarks/rooms.py plays every room). For each stack it prints the share
of calls passing each assertion and all three (the reward), and the median wall time of
a whole call (reset, every step, the grading at the end).

Exits non-zero unless the reference passes every task under every persona (with the
ideal profile; with the measured one it only reports).

Run: .venv/bin/python benchmarks/agents.py [--personas calm,angry,sceptic]
     [--recogniser ideal|whisper-tiny.en]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from vamos_env.agents.flawed import EagerAgent, LeakyAgent, NaiveAgent, PromiserAgent, SloppyAgent
from vamos_env.agents.reference import ReferenceAgent
from vamos_env.channel.parameters import RECOGNISER_PROFILES
from vamos_env.envs.energy.env import VamosEnergyEnv

STACKS: dict[str, type[ReferenceAgent]] = {
    "reference": ReferenceAgent,
    "leaky": LeakyAgent,
    "eager": EagerAgent,
    "promiser": PromiserAgent,
    "sloppy": SloppyAgent,
    "naive": NaiveAgent,
}
ASSERTIONS = ("gate", "actions", "requirements")


def play(
    env: VamosEnergyEnv,
    agent: ReferenceAgent,
    task_id: str,
    persona: str,
    recogniser: str = "ideal",
) -> dict[str, Any]:
    options = {
        "task_id": task_id,
        "persona": persona,
        "background": "clean",
        "recogniser": recogniser,
    }
    observation, info = env.reset(seed=0, options=options)
    agent.reset(info)
    while True:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return dict(info["verdict"])


def failing(verdict: dict[str, Any], name: str) -> bool:
    return any(c["passed"] is not True for c in verdict[name]["checks"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", default="calm,angry,sceptic", help="for the reference")
    parser.add_argument("--recogniser", default="ideal", choices=RECOGNISER_PROFILES)
    args = parser.parse_args()
    env = VamosEnergyEnv()
    task_ids = sorted(t.task_id for t in env.task_set.tasks)
    runs = [("reference", p) for p in args.personas.split(",")]
    runs += [(name, "calm") for name in STACKS if name != "reference"]

    header = f"{'stack':10} {'persona':8} " + " ".join(f"{a:>12}" for a in ASSERTIONS)
    print(
        f"{len(task_ids)} exam tasks, scripted caller, clean room, "
        f"recogniser profile {args.recogniser!r}"
    )
    print(header + f" {'passed':>8} {'ms/call':>8}")
    print("-" * (len(header) + 18))
    reference_ok = True
    for name, persona in runs:
        verdicts, seconds = [], []
        for task_id in task_ids:
            started = time.perf_counter()
            verdicts.append(play(env, STACKS[name](), task_id, persona, args.recogniser))
            seconds.append(time.perf_counter() - started)
        n = len(verdicts)
        rates = [sum(not failing(v, a) for v in verdicts) / n for a in ASSERTIONS]
        passed = sum(bool(v["passed"]) for v in verdicts) / n
        if name == "reference":
            reference_ok &= passed == 1.0
        cells = " ".join(f"{r:>12.0%}" for r in rates)
        print(
            f"{name:10} {persona:8} {cells} {passed:>8.0%} "
            f"{statistics.median(seconds) * 1000:>8.1f}"
        )
    return 0 if reference_ok or args.recogniser != "ideal" else 1


if __name__ == "__main__":
    sys.exit(main())
