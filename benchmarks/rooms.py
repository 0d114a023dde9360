"""The reference solver in every room: exam completion per background and level.

Plays the exam (100 tasks x 3 repeats) through ``VamosEnergy-v0`` with the main job's
casting (persona per task, calm and angry; the call seed of each task's repeat) once in
each room: the quiet room, then street, cafe and television at each level. Prints the
completion per room and level, by persona and by request count, and every call that
still fails with the reason the call shows (how it ended, which assertion failed, the
check that failed first).

Run: .venv/bin/python benchmarks/rooms.py [--levels 25,10,5] [--recogniser whisper-tiny.en]
     [--rooms clean,street,cafe,television] [--tasks N] [--repeats 3] [--failures 40]
     [--channel text|audio]

``--channel audio`` plays the same calls with real speech (synthesis, the room mixed in,
the detector, Whisper): the check that the text channel's model stands for the pipeline.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from typing import Any

from vamos_env.agents.reference import ReferenceAgent
from vamos_env.callers.casting import cast
from vamos_env.channel.parameters import (
    BACKGROUNDS,
    DEFAULT_RECOGNISER,
    RECOGNISER_PROFILES,
    shipped_parameters,
)
from vamos_env.envs.energy.env import DEFAULT_TRIAL, VamosEnergyEnv

ASSERTIONS = ("gate", "actions", "requirements")


def reason(info: dict[str, Any]) -> str:
    """Why a call failed, in a few words: how it ended and the first check that failed."""
    verdict = info["verdict"]
    failed = [a for a in ASSERTIONS if not verdict[a]["passed"]]
    first = ""
    for name in failed:
        check = next((c for c in verdict[name]["checks"] if c["passed"] is not True), None)
        if check is not None:
            first = str(check.get("name") or check.get("kind") or check.get("id") or "")[:60]
            break
    return f"ended by {info.get('end_reason')}; failed {'/'.join(failed) or 'none'} {first}".strip()


def play(
    env: VamosEnergyEnv, agent: ReferenceAgent, row: Any, room: str, level: float, recogniser: str
) -> dict[str, Any]:
    options = {
        "task_id": row.task_id,
        "repeat": row.repeat,
        "persona": row.persona,
        "background": room,
        "level_db": level,
        "recogniser": recogniser,
    }
    observation, info = env.reset(seed=row.seed, options=options)
    agent.reset(info)
    while True:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="25,10,5", help="dB levels of the noisy rooms")
    parser.add_argument("--rooms", default=",".join(BACKGROUNDS))
    parser.add_argument("--recogniser", default=DEFAULT_RECOGNISER, choices=RECOGNISER_PROFILES)
    parser.add_argument("--tasks", type=int, default=None, help="only the first N exam tasks")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--failures", type=int, default=40, help="failing calls to list")
    parser.add_argument("--threshold", type=float, default=None, help="exit 1 below this at 25 dB")
    parser.add_argument(
        "--channel",
        choices=("text", "audio"),
        default="text",
        help="text (the calibrated model, default) or audio (real speech; needs the extra)",
    )
    args = parser.parse_args()
    env = VamosEnergyEnv(channel=args.channel)
    task_ids = sorted(t.task_id for t in env.task_set.tasks)
    table = cast(task_ids, trial_id=DEFAULT_TRIAL, repeats=args.repeats)
    if args.tasks is not None:
        keep = set(task_ids[: args.tasks])
        table = [row for row in table if row.task_id in keep]
    requests = {t.task_id: len(t.requests) for t in env.task_set.tasks}
    levels = [float(x) for x in args.levels.split(",")]
    parameters = shipped_parameters()
    print(
        f"exam: {len(table)} calls per room ({len({r.task_id for r in table})} tasks x "
        f"{args.repeats} repeats, main-job casting, trial {DEFAULT_TRIAL!r}); reference solver; "
        f"{args.channel} channel, recogniser profile {args.recogniser!r}; voices: "
        + ", ".join(f"{p} {v}" for p, v in sorted(parameters.personas.items()))
    )
    print(f"{'room':12} {'dB':>4} {'passed':>8} {'calm':>7} {'angry':>7} {'2 req':>7} "
          f"{'3 req':>7} {'4 req':>7} {'transfer':>9} {'s':>5}")  # fmt: skip
    failures: list[str] = []
    below = False
    for room in args.rooms.split(","):
        for level in [25.0] if room == "clean" else levels:
            started = time.perf_counter()
            passed: Counter[str] = Counter()
            seen: Counter[str] = Counter()
            transfers = 0
            agent = ReferenceAgent()
            for row in table:
                info = play(env, agent, row, room, level, args.recogniser)
                ok = bool(info["verdict"]["passed"])
                transfers += info.get("end_reason") == "transfer"
                for key in ("all", row.persona, f"{requests[row.task_id]} req"):
                    seen[key] += 1
                    passed[key] += ok
                if not ok:
                    failures.append(
                        f"{room:10} {level:>4.0f} {row.persona:5} {row.task_id} r{row.repeat}: "
                        + reason(info)
                    )

            def share(key: str, passed: Counter[str] = passed, seen: Counter[str] = seen) -> str:
                return f"{passed[key] / seen[key]:.0%}" if seen[key] else "-"

            rate = passed["all"] / seen["all"]
            below |= args.threshold is not None and level == 25.0 and rate < args.threshold
            print(
                f"{room:12} {'-' if room == 'clean' else f'{level:.0f}':>4} {rate:>8.1%} "
                f"{share('calm'):>7} {share('angry'):>7} {share('2 req'):>7} {share('3 req'):>7} "
                f"{share('4 req'):>7} {transfers / seen['all']:>9.1%} "
                f"{time.perf_counter() - started:>5.0f}",
                flush=True,
            )
    if failures and args.failures:
        print(f"\nfailing calls ({len(failures)}; first {min(args.failures, len(failures))}):")
        for line in failures[: args.failures]:
            print("  " + line)
        print("\nby reason:")
        for why, n in Counter(f.split(": ", 1)[1] for f in failures).most_common(15):
            print(f"  {n:5}  {why}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
