"""The grader's ear on whole calls of agent speech: packed windows, and second opinions.

The reference solver plays the first N exam tasks in text (quiet room), once for a calm
caller (its full register: "one hundred ninety-nine dollars and sixteen cents") and once
for a sceptic (its concise register, which the cascade takes after any barge-in: "one
ninety-nine sixteen", "9.89 cents per kilowatt-hour"). Each call's agent turns are said
in the cascade's voice (``agent_voice_synthesizer``) one after another on one tape,
``GAP_S`` of silence between them (where the caller would speak), and the tape is read
as the duplex grader reads a call (``ear.stretch_words``, ``GradingEar``) two ways:

- **packed**: every turn in its window of up to 28 s (the grader before second opinions);
- **second**: the same, and each turn that holds a figure read alone too, each figure on
  which the two readings differ settled by the turn's own audio
  (``ear.second_opinion``).

For every turn that says a figure it compares the figures of what was said and of what
was heard (amounts, dates, rates, digit strings and numbers, by the grader's finders;
words that sound like digits in a code read as digits, as the duplex engine does:
``ear.code_digits``) and prints how many turns came back with
every figure right each way, which turns the second opinion mended and which it broke,
and the seconds each way takes per minute of agent speech.

Run: .venv/bin/python benchmarks/grading_ear.py [--tasks 20] [--personas calm,sceptic]
     [--ear whisper-tiny.en] [--wrong]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from vamos_env.agents.reference import ReferenceAgent
from vamos_env.channel.audio import engines
from vamos_env.channel.audio.dsp import RATE
from vamos_env.duplex.cascade import agent_voice_synthesizer
from vamos_env.duplex.ear import GradingEar, code_digits, joined, stretch_words
from vamos_env.envs.energy.env import VamosEnergyEnv
from vamos_env.speech import find_dates, find_digit_strings, find_money, find_numbers, find_rates
from vamos_env.speech.mention import Mention

GAP_S = 2.5


def figures(text: str) -> frozenset[str]:
    """What the grader can check of a turn: its amounts, dates, rates, and the digit
    strings and numbers of two digits or more outside them, however written ("905",
    "nine hundred five")."""
    found = [
        *((f"${m.value}", m) for m in find_money(text)),
        *((f"date {m.value}", m) for m in find_dates(text)),
        *((f"rate {m.value}", m) for m in find_rates(text)),
    ]
    spans = [(m.start, m.end) for _, m in found]

    def outside(m: Mention[object]) -> bool:
        return not any(m.start < b and a < m.end for a, b in spans)

    codes = [m.value.replace("-", "") for m in find_digit_strings(text) if outside(m)]
    numbers = [str(m.value) for m in find_numbers(text) if m.value >= 10 and outside(m)]
    return frozenset([value for value, _ in found] + codes + numbers)


def agent_turns(env: VamosEnergyEnv, task_id: str, persona: str) -> list[str]:
    options = {"task_id": task_id, "persona": persona, "background": "clean"}
    observation, info = env.reset(seed=0, options={**options, "recogniser": "ideal"})
    agent = ReferenceAgent()
    agent.reset(info)
    while True:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            break
    turns = info["transcript"]["turns"]
    return [t["text"] for t in turns if t["speaker"] == "agent" and t.get("text")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20, help="the first N exam tasks")
    parser.add_argument("--ear", default="whisper-tiny.en", choices=engines.EARS)
    parser.add_argument("--wrong", action="store_true", help="print each turn heard wrong")
    parser.add_argument(
        "--personas",
        default="calm,sceptic",
        help="the reference's register: calm gets its full turns, sceptic its concise ones",
    )
    args = parser.parse_args()
    env = VamosEnergyEnv()
    task_ids = sorted(t.task_id for t in env.task_set.tasks)[: args.tasks]
    say = agent_voice_synthesizer()
    ear = GradingEar(args.ear)
    right = {"packed": 0, "second": 0}
    seconds = {"packed": 0.0, "second": 0.0}
    turns_with_figures = 0
    speech_s = 0.0
    changed: list[tuple[str, str, str, str]] = []
    calls = [(t, p) for p in args.personas.split(",") for t in task_ids]
    for task_id, persona in calls:
        said = agent_turns(env, task_id, persona)
        pieces = [np.asarray(say(text), dtype=np.float64) for text in said]
        gap = round(GAP_S * RATE)
        stretches, at = [], gap
        for piece in pieces:
            stretches.append((at, at + len(piece)))
            at += len(piece) + gap
        tape = np.zeros(at)
        for (start, end), piece in zip(stretches, pieces, strict=True):
            tape[start:end] = piece
        speech_s += sum(len(p) for p in pieces) / RATE
        heard = {}
        for way, scorer in (("packed", None), ("second", ear.scorer)):
            started = time.perf_counter()
            words = stretch_words(
                lambda a, b, tape=tape: tape[a:b], stretches, len(tape), ear, scorer=scorer
            )
            seconds[way] += time.perf_counter() - started
            heard[way] = [code_digits(joined(w)) for w in words]
        for k, text in enumerate(said):
            wanted = figures(text)
            if not any(wanted):
                continue
            turns_with_figures += 1
            ok = {way: figures(heard[way][k]) == wanted for way in heard}
            if args.wrong and not ok["second"]:
                print(f"  wrong: said  {text!r} {wanted}")
                print(f"         heard {heard['second'][k]!r} {figures(heard['second'][k])}")
            for way in ok:
                right[way] += ok[way]
            if ok["packed"] != ok["second"]:
                verdict = "mended" if ok["second"] else "broken"
                changed.append((verdict, text, heard["packed"][k], heard["second"][k]))
        print(
            f"{task_id} ({persona}): {len(said)} turns; right so far packed {right['packed']}, "
            f"second {right['second']} of {turns_with_figures}",
            flush=True,
        )
    minutes = speech_s / 60
    print(
        f"\n{len(calls)} calls, {speech_s:.0f} s of agent speech, "
        f"{turns_with_figures} turns with figures"
    )
    for way in right:
        print(
            f"{way:>7}: every figure right in {right[way]}/{turns_with_figures} turns; "
            f"{seconds[way] / minutes:.1f} s per minute of agent speech"
        )
    for verdict, text, packed, second in changed:
        print(f"\n{verdict}: said   {text!r}\n        packed {packed!r}\n        second {second!r}")


if __name__ == "__main__":
    main()
