"""Casting: which persona and which background each call of a trial gets.

As the published benchmark did it:

- **Persona per task, fixed across its repeats**, from a fixed casting seed. The
  tasks (sorted by id, so input order does not matter) are shuffled once with
  the casting seed and dealt to the personas in turn, so every persona gets the
  same number of tasks (100 tasks, two personas: 50 each, 150 calls each over
  three repeats).
- **Background rotated across repeats** by a shuffle seeded by the trial id: the
  tasks are put in a trial-specific order and the calls, task by task and repeat
  by repeat, walk round the backgrounds. A task's repeats hear different rooms,
  and every background gets the same number of calls (300 calls: 75 each).
- **Identical for every stack**: nothing here depends on the stack, so every
  stack in a trial meets the same callers in the same rooms.

The default cast is calm and angry, as published. The sceptic belongs to the
red-team rig (DOMAIN.md section 10); cast it by passing ``personas``.

Each row also carries a call seed (from the trial id, task id and repeat) from
which the episode derives the caller's and the channel's generators.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from vamos_env.channel.parameters import BACKGROUNDS

CASTING_SEED = 20260910
BENCHMARK_PERSONAS: tuple[str, ...] = ("calm", "angry")


@dataclass(frozen=True)
class Casting:
    """One call of a trial: a task's repeat, with its persona, background and seed."""

    trial_id: str
    task_id: str
    repeat: int
    persona: str
    background: str
    seed: int


def stable_seed(*parts: str | int) -> int:
    """A 63-bit seed from strings and ints; unlike ``hash()``, the same in every process."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def cast(
    task_ids: Iterable[str],
    *,
    trial_id: str,
    repeats: int = 3,
    personas: Sequence[str] = BENCHMARK_PERSONAS,
    backgrounds: Sequence[str] = BACKGROUNDS,
    casting_seed: int = CASTING_SEED,
) -> list[Casting]:
    """The full assignment table, ordered by task id then repeat."""
    tasks = sorted(set(task_ids))
    if not tasks:
        raise ValueError("cast: expected at least one task id, got none")
    if repeats < 1:
        raise ValueError(f"repeats: expected at least 1, got {repeats}")
    if not personas or not backgrounds:
        raise ValueError("cast: expected at least one persona and one background")

    persona_order = np.random.default_rng(casting_seed).permutation(len(tasks))
    persona_of = {tasks[int(i)]: personas[k % len(personas)] for k, i in enumerate(persona_order)}

    room_order = np.random.default_rng(stable_seed("backgrounds", trial_id)).permutation(len(tasks))
    first_slot = {tasks[int(i)]: k * repeats for k, i in enumerate(room_order)}

    return [
        Casting(
            trial_id=trial_id,
            task_id=task,
            repeat=r,
            persona=persona_of[task],
            background=backgrounds[(first_slot[task] + r) % len(backgrounds)],
            seed=stable_seed("call", trial_id, task, r),
        )
        for task in tasks
        for r in range(repeats)
    ]


def tally(table: Iterable[Casting]) -> dict[str, Counter[str]]:
    """Calls per persona and per background: the counts a trial report states."""
    rows = list(table)
    return {
        "persona": Counter(row.persona for row in rows),
        "background": Counter(row.background for row in rows),
    }
