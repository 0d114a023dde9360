"""The caller's ear on read-backs of its own identity: plain against knowing.

For every caller of the exam, the agent's voice (the cascade's Piper voice, as the duplex
line carries it) reads back "To confirm: account <digits>, name <name>. Is that right?"
four ways: right; with another exam caller's first name; with another's last name; with
one digit of the account changed. Each is heard by

- **plain**: ``engines.transcribe`` (Whisper tiny.en, no timestamps), the caller's ear
  before ``KnowingEar``;
- **knowing**: ``KnowingEar`` with the caller's name and account number;

and judged by the scripted caller's own read-back check. It prints, per ear, how many
right read-backs the caller accepts and how many wrong ones it catches, and for the
knowing ear the gap in nats between its own reading and the free one (the margin must sit
between the right and the wrong ones).

Run: .venv/bin/python benchmarks/knowing_ear.py [--callers N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from vamos_env.callers.listening import listen
from vamos_env.callers.scripted import ScriptedCaller
from vamos_env.channel.audio import engines
from vamos_env.duplex.cascade import agent_voice_synthesizer
from vamos_env.duplex.knowing import (
    CODE_MARGIN_NATS,
    MARGIN_NATS,
    KnowingEar,
    ReadingScorer,
    code_reading,
    name_reading,
    written_forms,
)
from vamos_env.envs.energy.env import resolve_tasks
from vamos_env.speech import render


def _callers(limit: int) -> list:
    tasks = {}
    for task in resolve_tasks("exam").tasks:
        tasks.setdefault(task.caller.full_name, task)
    return list(tasks.values())[:limit]


def _gap(audio: np.ndarray, ear: KnowingEar) -> dict[str, float]:
    """Own reading (its best written form) minus free reading, in nats, per phrase kind."""
    clip = np.asarray(audio[: int(engines.MAX_SEGMENT_S * engines.RATE)], dtype=np.float32)
    model = engines._model(ear.ear)
    with engines.one_blas_thread():
        segments, _ = model.transcribe(clip, without_timestamps=False, **engines._DECODING)
        text = " ".join(s.text.strip() for s in segments).strip()
    scorer = ReadingScorer(model, clip)
    gaps = {}
    for phrase, reading, kind in [
        *((n, name_reading, "name") for n in ear.names),
        *((c, code_reading, "code") for c in ear.codes),
    ]:
        forms = written_forms(phrase) if kind == "name" else (phrase,)
        owns = [r for r in (reading(text, form) for form in forms) if r is not None]
        if owns:
            gaps[kind] = max(scorer.score(own) for own in owns) - scorer.score(text)
    return gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callers", type=int, default=99)
    args = parser.parse_args()
    tasks = _callers(args.callers)
    firsts = [t.caller.full_name.split()[0] for t in tasks]
    lasts = [t.caller.full_name.split()[-1] for t in tasks]
    say = agent_voice_synthesizer()
    kinds = ("right", "first", "last", "digit")
    judged = {ear: {k: 0 for k in kinds} for ear in ("plain", "knowing")}
    gaps: dict[tuple[str, str], list[float]] = {}
    seconds = {"plain": [], "knowing": []}
    for i, task in enumerate(tasks):
        name, account = task.caller.full_name, task.caller.account_number
        parts = name.split()
        other_first = next(f for f in firsts[i + 1 :] + firsts if f != parts[0])
        other_last = next(x for x in lasts[i + 1 :] + lasts if x != parts[-1])
        digits = list(account)
        digits[3] = str((int(digits[3]) + 1) % 10)
        said = {
            "right": (account, name),
            "first": (account, " ".join([other_first, *parts[1:]])),
            "last": (account, " ".join([*parts[:-1], other_last])),
            "digit": ("".join(digits), name),
        }
        knowing = KnowingEar(names=(name,), codes=(account,))
        for kind, (number, spoken) in said.items():
            line = f"To confirm: account {render.characters(number)}, name {spoken}."
            audio = say(f"{line} Is that right?")
            for ear_name, ear in (("plain", engines.transcribe), ("knowing", knowing)):
                began = time.perf_counter()
                text = ear(audio)
                seconds[ear_name].append(time.perf_counter() - began)
                caller = ScriptedCaller(task, "calm", rng=0)
                caller.open()
                wrong, _ = caller._check_readback(listen(text))
                caught = wrong is not None
                judged[ear_name][kind] += not caught if kind == "right" else caught
            for phrase_kind, gap in _gap(audio, knowing).items():
                gaps.setdefault((kind, phrase_kind), []).append(gap)
    n = len(tasks)
    print(f"{n} callers; margin {MARGIN_NATS} nats for a name, {CODE_MARGIN_NATS} for a code")
    heads = ("right accepted", "first caught", "last caught", "digit caught", "median s")
    print(f"{'ear':8}", " ".join(f"{h:>15}" for h in heads))
    for ear_name, row in judged.items():
        cells = " ".join(f"{f'{row[k]}/{n}':>15}" for k in kinds)
        print(f"{ear_name:8} {cells} {statistics.median(seconds[ear_name]):15.2f}")
    print("own reading minus free reading, nats (min, median, max), by read-back and phrase:")
    for (kind, phrase_kind), values in sorted(gaps.items()):
        low, mid, high = min(values), statistics.median(values), max(values)
        print(f"  {kind:6} {phrase_kind:5} n={len(values):2} {low:7.1f} {mid:7.1f} {high:7.1f}")


if __name__ == "__main__":
    main()
