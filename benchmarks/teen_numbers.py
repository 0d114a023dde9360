"""The grader's ear on amounts with a teen or a ten: plain against teen/ty settling.

Whisper writes "two hundred fifteen dollars" as "$250" (tiny.en and base alike): its
text prior favours round amounts where the audio does not tell them apart. This says
each amount (the teens 13-19 and the tens 30-90, as dollars alone, as two hundred and
them, and as cents) in a sentence an agent says ("Your last payment was $215.28, paid on
September 9."), in each voice at hand (the agent's Piper voice, espeak-ng, flite), and
reads it with

- **plain**: ``engines.transcribe_timed`` (the grader's ear before ``GradingEar``);
- **settled**: ``GradingEar`` (``vamos_env/duplex/ear.py``);

then counts the amounts the grader's money reader (``speech.find_money``) finds exactly,
for teens and tens apart (a rule that only favoured teens would lose the tens).

``--line g711`` sends each sentence over a Twilio media stream's wire first (mu-law at
8 kHz, back to 16 kHz, as the ``twilio-stream`` bridge carries an agent's voice).

Run: .venv/bin/python benchmarks/teen_numbers.py [--ear whisper-tiny.en|whisper-base]
     [--line wideband|g711]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time

from vamos_env.bridges.audio import mulaw_audio, mulaw_bytes, resample_whole
from vamos_env.channel.audio import engines
from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.duplex.cascade import AGENT_VOICE
from vamos_env.duplex.ear import GradingEar
from vamos_env.speech import render
from vamos_env.speech.money import find_money

TEENS = tuple(range(13, 20))
TENS = tuple(range(30, 100, 10))


def _amounts() -> list[tuple[str, int]]:
    """(teen or ten, cents) for each amount said."""
    amounts = []
    for kind, values in (("teen", TEENS), ("ten", TENS)):
        for n in values:
            amounts += [(kind, n * 100), (kind, (200 + n) * 100 + 28), (kind, 700 + n)]
    return amounts


def _voices() -> list[tuple[str, engines.Voice]]:
    voices = [("piper", AGENT_VOICE)]
    if shutil.which("espeak-ng"):
        voices.append(("espeak-ng", engines.ESPEAK_CALLER))
    if shutil.which("flite"):
        voices.append(("flite", engines.FLITE_CALLER))
    return voices


def over_g711(audio: Audio) -> Audio:
    """``audio`` as a Twilio media stream carries it: mu-law at 8 kHz, back at 16 kHz."""
    return resample_whole(mulaw_audio(mulaw_bytes(resample_whole(audio, RATE, 8_000))), 8_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ear", default="whisper-tiny.en", choices=engines.EARS)
    parser.add_argument("--line", default="wideband", choices=("wideband", "g711"))
    args = parser.parse_args()
    ears = {
        "plain": lambda audio: engines.transcribe_timed(audio, args.ear),
        "settled": GradingEar(args.ear),
    }
    right = {
        (ear, voice, kind): 0 for ear in ears for voice, _ in _voices() for kind in ("teen", "ten")
    }
    said = {(voice, kind): 0 for voice, _ in _voices() for kind in ("teen", "ten")}
    seconds: dict[str, list[float]] = {ear: [] for ear in ears}
    for voice_name, voice in _voices():
        for kind, cents in _amounts():
            words = render.money(cents)
            audio = engines.synthesize(
                f"Your last payment was {words}, paid on September 9.", voice
            )
            if args.line == "g711":
                audio = over_g711(audio)
            said[(voice_name, kind)] += 1
            for ear_name, ear in ears.items():
                began = time.perf_counter()
                text = "".join(w.text for w in ear(audio))
                seconds[ear_name].append(time.perf_counter() - began)
                heard = [m.value for m in find_money(text)]
                right[(ear_name, voice_name, kind)] += heard[:1] == [cents]
    print(f"ear: {args.ear}, line: {args.line}; amounts read exactly (teens / tens), per voice")
    for ear_name in ears:
        cells = "  ".join(
            f"{v}: {right[(ear_name, v, 'teen')]}/{said[(v, 'teen')]} teens, "
            f"{right[(ear_name, v, 'ten')]}/{said[(v, 'ten')]} tens"
            for v, _ in _voices()
        )
        print(f"{ear_name:8} {cells}  median {statistics.median(seconds[ear_name]):.2f} s")


if __name__ == "__main__":
    main()
