"""Calibrate the text channel from the audio channel: ``vamos channel calibrate``.

Runs a corpus of exam-style caller turns (account numbers, amounts, dates,
emails, names) through ``AudioChannel`` for every background and level, measures
what Whisper did to them, and writes the text channel's parameter file in its own
schema, with a header that says how it was made and the WER table it measured.
Every draw comes from the seed, Piper runs without sampling noise and Whisper
decodes greedily-deterministic beams at temperature 0, so the same seed gives
the same bytes.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from vamos_env.channel.audio.channel import AudioChannel
from vamos_env.channel.parameters import (
    BackgroundName,
    parse_parameters,
    shipped_parameters,
)
from vamos_env.channel.recognition import tokens

# Our own exam-style caller turns, written the way Whisper writes (numerals, "$", one-word email).
CORPUS: tuple[str, ...] = (
    "My account number is 44719023.",
    "I'd like to pay $65.52 on March 21.",
    "My email is jane.doe@example.com.",
    "Yes, that's right, my name is Maria Lopez.",
    "The postal code is 90210.",
    "Can I set up a payment arrangement for $120 a month?",
    "My last payment was $88.10 on August 3.",
    "It's Robert Chen, account 55120987.",
    "Please send the bill to paul.smith@mailbox.org.",
    "I think my meter reading is wrong this month.",
)
AGENT_REPLY = (
    "Thank you for waiting. I can see your account now, and I will read you the balance, "
    "the due date and the options you have."
)  # 25 words, the parameter file's reference reply
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
_SPOKEN_EMAIL = re.compile(r"([\w.+-]+) at ([\w-]+(?:\.[\w-]+)+)")


def normalise_transcript(text: str) -> str:
    """Whisper's written forms back to the corpus's: '21st' -> '21', 'x at y.com' -> 'x@y.com'."""
    text = _ORDINAL.sub(r"\1", text)
    return _SPOKEN_EMAIL.sub(r"\1@\2", text.lower())


@dataclass(frozen=True)
class Alignment:
    substitutions: int
    deletions: int
    insertions: int
    digit_errors: int
    digit_deletions: int
    inserted: tuple[str, ...]


def align(reference: str, hypothesis: str) -> Alignment:
    """Levenshtein alignment over ``recognition.tokens``, with the error kinds counted."""
    ref, hyp = tokens(reference), tokens(hypothesis)
    cost = np.zeros((len(ref) + 1, len(hyp) + 1), dtype=np.int64)
    cost[:, 0] = np.arange(len(ref) + 1)
    cost[0, :] = np.arange(len(hyp) + 1)
    for i in range(1, len(ref) + 1):
        for j in range(1, len(hyp) + 1):
            cost[i, j] = min(
                cost[i - 1, j] + 1,
                cost[i, j - 1] + 1,
                cost[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]),
            )
    s = d = n_ins = de = dd = 0
    inserted: list[str] = []
    i, j = len(ref), len(hyp)
    while i or j:
        if i and j and cost[i, j] == cost[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]):
            if ref[i - 1] != hyp[j - 1]:
                s += 1
                de += ref[i - 1].isdigit()
            i, j = i - 1, j - 1
        elif i and cost[i, j] == cost[i - 1, j] + 1:
            d += 1
            de += ref[i - 1].isdigit()
            dd += ref[i - 1].isdigit()
            i -= 1
        else:
            n_ins += 1
            inserted.append(hyp[j - 1])
            j -= 1
    return Alignment(s, d, n_ins, de, dd, tuple(inserted))


@dataclass(frozen=True)
class Measurement:
    background: BackgroundName
    level_db: int
    turns: int
    words: int
    substitutions: int
    deletions: int
    insertions: int
    digit_errors: int
    digit_deletions: int
    emails: int
    emails_wrong: int
    leaks: int
    spurious: int
    replies_cut: int

    @property
    def word_error_rate(self) -> float:
        return (self.substitutions + self.deletions + self.insertions) / max(1, self.words)


def measure(
    background: BackgroundName, level_db: int, corpus: Sequence[str], rng: np.random.Generator
) -> Measurement:
    """One call of the whole corpus through the audio channel, each turn answered by the reply."""
    channel = AudioChannel(background, rng, level_db)
    counts = dict.fromkeys(
        ("words", "s", "d", "i", "de", "dd", "emails", "emails_wrong", "leaks", "spurious", "cut"),
        0,
    )
    for text in corpus:
        received = channel.to_agent(text)
        heard = normalise_transcript(received[0])
        a = align(text, heard)
        counts["words"] += len(tokens(text))
        counts["s"] += a.substitutions
        counts["d"] += a.deletions
        counts["i"] += a.insertions
        counts["de"] += a.digit_errors
        counts["dd"] += a.digit_deletions
        emails = [t for t in tokens(text) if "@" in t]
        counts["emails"] += len(emails)
        counts["emails_wrong"] += sum(e not in tokens(heard) for e in emails)
        room = {w for line in channel.stream.lines_said for w in tokens(line)} - set(tokens(text))
        counts["leaks"] += len([w for w in a.inserted if w in room]) >= 2
        counts["spurious"] += len(received) - 1
        counts["cut"] += channel.to_caller(AGENT_REPLY) != AGENT_REPLY
    return Measurement(
        background, level_db, len(corpus), counts["words"], counts["s"], counts["d"], counts["i"],
        counts["de"], counts["dd"], counts["emails"], counts["emails_wrong"], counts["leaks"],
        counts["spurious"], counts["cut"],
    )  # fmt: skip


def _r(x: float) -> float:
    return round(x, 3)


def _band(value: float, floor: float) -> dict[str, float]:
    spread = max(0.5 * value, floor)
    return {"low": _r(max(0.0, value - spread)), "high": _r(value + spread)}


def _condition(m: Measurement, on_fraction: float, minutes_per_reply: float) -> dict[str, Any]:
    errors = m.substitutions + m.deletions + m.insertions
    if errors:
        sub, dele = _r(m.substitutions / errors), _r(m.deletions / errors)
    else:
        sub, dele = 0.6, 0.3
    cut_share = m.replies_cut / m.turns
    # The text model cuts a reply at an exponential time: P(cut) = 1 - exp(-rate * T).
    per_minute = -math.log(1 - min(cut_share, 0.99)) / minutes_per_reply
    spurious = m.spurious / m.turns
    condition: dict[str, Any] = {
        "word_error_rate": _r(m.word_error_rate),
        "substitution": sub,
        "deletion": dele,
        "insertion": _r(1.0 - sub - dele),
        "digit_deletion": _r(m.digit_deletions / m.digit_errors) if m.digit_errors else 0.5,
        "email_error_rate": _r(m.emails_wrong / m.emails) if m.emails else 0.0,
        "leak_rate": _r(min(1.0, m.leaks / m.turns / on_fraction)),
        # The text model fires these only while the background speaks.
        "spurious_turn_rate": _r(min(1.0, spurious / on_fraction)),
        "barge_in_per_minute": _r(per_minute / on_fraction),
        "expected": {
            "word_error_rate": _band(m.word_error_rate, 0.01),
            "spurious_turns_per_turn": _band(spurious, 0.02),
            "barge_in_rate": _band(cut_share, 0.03),
        },
    }
    return condition


def calibrate(
    levels: Sequence[int],
    backgrounds: Sequence[BackgroundName] = ("street", "cafe", "television"),
    seed: int = 0,
    corpus: Sequence[str] = CORPUS,
) -> str:
    """The text channel's parameter file (YAML text) measured from the audio channel."""
    base = shipped_parameters()
    minutes_per_reply = len(AGENT_REPLY.split()) / base.speaking_rate_wpm
    children = iter(np.random.SeedSequence(seed).spawn(len(backgrounds) * len(levels) + 1))
    clean = measure("clean", 25, corpus, np.random.default_rng(next(children)))
    table = [
        f"#   clean: WER {clean.word_error_rate:.1%} (the text channel's clean room: identity)"
    ]
    out_backgrounds: dict[str, Any] = {
        "clean": {"description": base.backgrounds["clean"].description, "speech": "none"}
    }
    for name in backgrounds:
        spec = base.backgrounds[name]
        entry: dict[str, Any] = {"description": spec.description, "speech": spec.speech}
        if spec.bursts is not None:
            entry["bursts"] = {"on_turns": spec.bursts.on_turns, "off_turns": spec.bursts.off_turns}
        on = spec.bursts.on_fraction if spec.bursts else 1.0
        entry["levels"] = {}
        cells = []
        for level in levels:
            m = measure(name, level, corpus, np.random.default_rng(next(children)))
            entry["levels"][str(level)] = _condition(m, on, minutes_per_reply)
            cells.append(
                f"{level} dB WER {m.word_error_rate:.1%} spurious/turn "
                f"{m.spurious / m.turns:.2f} cut {m.replies_cut}/{m.turns}"
            )
        table.append(f"#   {name}: " + "; ".join(cells))
        out_backgrounds[name] = entry
    for name in ("street", "cafe", "television"):
        if name not in out_backgrounds:  # not measured this run: keep the shipped figures
            kept = base.backgrounds[name].model_dump(mode="json", exclude_none=True)
            out_backgrounds[name] = kept
            table.append(
                f"#   {name}: not measured in this run (figures kept from the shipped file)"
            )
    body = {
        "version": 1,
        "source": "calibrated",
        "speaking_rate_wpm": base.speaking_rate_wpm,
        "reference_agent_words": len(AGENT_REPLY.split()),
        "default_level_db": base.default_level_db,
        "backgrounds": out_backgrounds,
    }
    header = [
        "# Text channel parameters: what a voice pipeline does to a call, by background and level.",
        "#",
        "# STATUS: calibrated. Written by `vamos channel calibrate "
        f"--levels {','.join(map(str, levels))} --seed {seed}` (vamos_env.channel.audio):",
        f"# {len(corpus)} exam-style caller turns per condition, spoken by Piper (joe, medium),",
        "# mixed with synthesized backgrounds scaled to the level's share of reference speech",
        "# energy, segmented by an energy VAD and recognised by Whisper tiny.en (int8, 2 threads).",
        "# Rates for television are per burst (the file's bursts field), measured per call.",
        "# Measured:",
        *table,
        "",
    ]
    text = "\n".join(header) + yaml.safe_dump(body, sort_keys=False, width=100)
    parse_parameters(yaml.safe_load(text))  # refuse to write a file the text channel would reject
    return text


def _levels(raw: str) -> list[int]:
    return [int(x) for x in raw.split(",") if x.strip()]


def _calibrate_command(args: argparse.Namespace) -> int:
    from vamos_env.channel.audio.engines import missing_reason

    reason = missing_reason()
    if reason:
        print(f"vamos channel calibrate: {reason}")
        return 2
    text = calibrate(args.levels, tuple(args.backgrounds.split(",")), args.seed)
    Path(args.out).write_text(text)
    print("".join(line + "\n" for line in text.splitlines() if line.startswith("#   ")), end="")
    print(f"wrote {args.out}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``channel calibrate`` to ``vamos``'s subparsers."""
    channel = subparsers.add_parser("channel", help="the speech channel (audio extra)")
    sub = channel.add_subparsers(dest="channel_command", required=True)
    cal = sub.add_parser(
        "calibrate", help="measure the audio channel; write the text channel's file"
    )
    cal.add_argument("--levels", type=_levels, default=[25, 10, 5], help="dB, e.g. 25,10,5")
    cal.add_argument("--backgrounds", default="street,cafe,television")
    cal.add_argument("--seed", type=int, default=0)
    cal.add_argument("--out", required=True, help="the parameter file to write")
    cal.set_defaults(func=_calibrate_command)
