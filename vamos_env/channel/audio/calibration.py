"""Calibrate the text channel from the audio channel: ``vamos channel calibrate``.

Runs a corpus of the exam's own caller turns (the scripted caller's words when
the reference agent plays every exam task in a quiet room, sampled by how often
they are said, plus email addresses from the world) through ``AudioChannel`` for
every background and level, measures what the pipeline did to them (word errors
by kind, the substitutions themselves, dropped digits, mangled emails, leaked
background words, repetition loops, spurious turns, cut replies), and writes the
text channel's parameter file in its own schema, with a header that says how it
was made and the table it measured. Each condition draws from its own generator,
seeded by (seed, background, level), so a condition measures the same whichever
others run with it; Piper runs without sampling noise and Whisper decodes at
temperature 0, so the same seed gives the same bytes.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, cast

import numpy as np
import yaml

from vamos_env.channel.audio.channel import AudioChannel
from vamos_env.channel.audio.engines import CALLER, Voice
from vamos_env.channel.audio.provenance import recorded_on
from vamos_env.channel.parameters import (
    BACKGROUNDS,
    BackgroundName,
    parse_parameters,
    shipped_parameters,
)
from vamos_env.channel.recognition import (
    WEIGHTED_CLASSES,
    repetition_loop,
    token_classes,
    tokens,
)

# Used by tests and quick runs; the shipped file is measured on ``shipped_corpus()``.
SAMPLE_CORPUS: tuple[str, ...] = (
    "It's 4944-29875. The name is Kwame Novak.",
    "The last bill was for $199.16.",
    "My email is jane.doe@example.com.",
    "Yes, that works. Please set it up.",
    "The zip code is 18505.",
    "Thanks. One more thing. Can I set up a payment arrangement over 6 months for what I owe?",
)
DEFAULT_TURNS = 80
EMAIL_TURNS = 6


def exam_corpus(turns: int = DEFAULT_TURNS, seed: int = 0) -> tuple[str, ...]:
    """``turns`` distinct caller turns from the exam, drawn by how often callers say them.

    The reference agent plays each exam task once (calm caller, quiet room, seed
    0); every distinct caller turn is weighted by its count, and ``turns -
    EMAIL_TURNS`` are drawn without replacement. The scripted caller never spells
    an email (the agent reads it back), so ``EMAIL_TURNS`` turns of the form "My
    email is ..." from the world's accounts measure how emails fare.
    """
    from collections import Counter

    from vamos_env.agents.reference import ReferenceAgent
    from vamos_env.envs.energy.env import VamosEnergyEnv
    from vamos_env.envs.energy.world.accounts import default_manifest

    env = VamosEnergyEnv()
    agent = ReferenceAgent()
    said: Counter[str] = Counter()
    for task_id in sorted(t.task_id for t in env.task_set.tasks):
        options = {"task_id": task_id, "persona": "calm", "background": "clean"}
        observation, info = env.reset(seed=0, options=options)
        agent.reset(info)
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
            done = terminated or truncated
        said.update(
            turn["text"]
            for turn in info["transcript"]["turns"]
            if turn["speaker"] == "caller" and turn["text"] and not turn["spurious"]
        )
    env.close()
    distinct = sorted(said)
    weights = np.array([said[t] for t in distinct], dtype=np.float64)
    rng = np.random.default_rng(seed)
    count = min(len(distinct), turns - EMAIL_TURNS)
    picked = rng.choice(len(distinct), size=count, replace=False, p=weights / weights.sum())
    emails = sorted(account.email for account in default_manifest().accounts)
    chosen = rng.choice(len(emails), size=min(EMAIL_TURNS, len(emails)), replace=False)
    return tuple(distinct[i] for i in sorted(picked)) + tuple(
        f"My email is {emails[i]}." for i in sorted(chosen)
    )


CORPUS_FILE = "calibration_corpus.yaml"


def shipped_corpus() -> tuple[str, ...]:
    """The caller turns the shipped parameter file was measured on (``data/`` + CORPUS_FILE).

    Frozen as data so that the measurement does not move when the exam, the scripted
    caller's wording or the reference agent change: ``vamos channel corpus`` draws a new
    one from the exam (``exam_corpus``) when a recalibration should follow them.
    """
    return _corpus_from(
        Path(str(resources.files("vamos_env.channel").joinpath("data", CORPUS_FILE)))
    )


def corpus_file(corpus: Sequence[str], *, turns: int, seed: int) -> str:
    """The corpus file's text: the turns, and a header saying how they were drawn."""
    header = (
        "# Caller turns the text channel's calibration speaks (vamos channel calibrate).\n"
        f"# Drawn by `vamos channel corpus --turns {turns} --seed {seed}`: the reference agent\n"
        "# plays every exam task once (calm caller, quiet room, seed 0); distinct caller turns\n"
        f"# are drawn by how often they are said, plus {EMAIL_TURNS} turns spelling world emails.\n"
    )
    return header + yaml.safe_dump({"turns": list(corpus)}, sort_keys=False, width=100)


AGENT_REPLY = (
    "Thank you for waiting. I can see your account now, and I will read you the balance, "
    "the due date and the options you have."
)  # 25 words, the parameter file's reference reply
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
_WHOLE_DOLLARS = re.compile(r"(\$\d+)\.00\b")
_THOUSANDS = re.compile(r"\b(\d{1,3}),(\d{3})\b")
_PLAIN = re.compile(r"^[a-z][a-z']*$")
_SPOKEN_EMAIL = re.compile(r"([\w.+-]+) at ([\w-]+(?:\.[\w-]+)+)")


def normalise_transcript(text: str) -> str:
    """Written forms to one spelling, for the reference and the transcript alike.

    '21st' -> '21', 'x at y.com' -> 'x@y.com', '$75.00' -> '$75', '1,200' -> '1200':
    Whisper's house style is not a recognition error.
    """
    text = _ORDINAL.sub(r"\1", text)
    text = _WHOLE_DOLLARS.sub(r"\1", text)
    text = _THOUSANDS.sub(r"\1\2", text)
    return _SPOKEN_EMAIL.sub(r"\1@\2", text.lower())


@dataclass(frozen=True)
class Alignment:
    substitutions: int
    deletions: int
    insertions: int
    digit_errors: int
    digit_deletions: int
    inserted: tuple[str, ...]
    substituted: tuple[tuple[str, str], ...] = ()  # (reference word, what was written)
    missed: tuple[int, ...] = ()  # positions of reference tokens substituted or deleted


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
    substituted: list[tuple[str, str]] = []
    missed: list[int] = []
    i, j = len(ref), len(hyp)
    while i or j:
        if i and j and cost[i, j] == cost[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]):
            if ref[i - 1] != hyp[j - 1]:
                s += 1
                de += ref[i - 1].isdigit()
                substituted.append((ref[i - 1], hyp[j - 1]))
                missed.append(i - 1)
            i, j = i - 1, j - 1
        elif i and cost[i, j] == cost[i - 1, j] + 1:
            d += 1
            de += ref[i - 1].isdigit()
            dd += ref[i - 1].isdigit()
            missed.append(i - 1)
            i -= 1
        else:
            n_ins += 1
            inserted.append(hyp[j - 1])
            j -= 1
    return Alignment(
        s, d, n_ins, de, dd, tuple(inserted), tuple(reversed(substituted)), tuple(sorted(missed))
    )


@dataclass
class Measurement:
    """What the audio channel did to one corpus in one condition."""

    background: BackgroundName
    level_db: int
    turns: int = 0
    words: int = 0
    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    digit_errors: int = 0
    digit_deletions: int = 0
    emails: int = 0
    emails_wrong: int = 0
    leaks: int = 0  # caller turns with background words in them
    leaked_words: list[int] = field(default_factory=list)  # how many, per such turn
    loops: list[int] = field(default_factory=list)  # extra copies, per looping turn
    looped_words: int = 0  # words the loops added
    spurious: int = 0
    replies_cut: int = 0
    substituted: list[tuple[str, str]] = field(default_factory=list)
    # Per caller turn: whether the background spoke during the turn or the reply after it.
    speaking: list[bool] = field(default_factory=list)
    # Per word class: reference tokens, and how many were substituted or deleted.
    class_tokens: Counter[str] = field(default_factory=Counter)
    class_missed: Counter[str] = field(default_factory=Counter)

    @property
    def speaking_turns(self) -> int:
        return max(1, sum(self.speaking))

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def word_error_rate(self) -> float:
        return self.errors / max(1, self.words)

    @property
    def recognition_error_rate(self) -> float:
        """Errors per word without leaked words and loops (the text model adds those apart)."""
        return (self.errors - sum(self.leaked_words) - self.looped_words) / max(1, self.words)


def measure(
    background: BackgroundName,
    level_db: int,
    corpus: Sequence[str],
    rng: np.random.Generator,
    voice: Voice = CALLER,
) -> Measurement:
    """One call of the whole corpus through the audio channel, each turn answered by the reply."""
    channel = AudioChannel(background, rng, level_db, voice=voice)
    m = Measurement(background, level_db)
    for text in corpus:
        began = channel.stream.consumed
        received = channel.to_agent(text)
        heard = normalise_transcript(received[0])
        said = normalise_transcript(text)
        a = align(said, heard)
        m.turns += 1
        m.words += len(tokens(said))
        # Classes from the caller's own text: normalising lower-cases it.
        classes = token_classes(text)
        if len(classes) == len(tokens(said)):  # house-style rewrites can change the count
            m.class_tokens.update(classes)
            m.class_missed.update(classes[i] for i in a.missed)
        m.substitutions += a.substitutions
        m.deletions += a.deletions
        m.insertions += a.insertions
        m.digit_errors += a.digit_errors
        m.digit_deletions += a.digit_deletions
        emails = [t for t in tokens(said) if "@" in t]
        m.emails += len(emails)
        m.emails_wrong += sum(e not in tokens(heard) for e in emails)
        room = {w for line in channel.stream.lines_said for w in tokens(line)} - set(tokens(said))
        leaked = len([w for w in a.inserted if w in room])
        if leaked >= 2:  # one stray word is a recognition error, not a leak
            m.leaks += 1
            m.leaked_words.append(leaked)
        copies, looped = repetition_loop(said, heard)
        if copies:
            m.loops.append(copies)
            m.looped_words += looped
        m.substituted.extend(pair for pair in a.substituted if pair[1] not in room)
        m.spurious += len(received) - 1
        m.replies_cut += channel.to_caller(AGENT_REPLY) != AGENT_REPLY
        m.speaking.append(channel.stream.speaking_between(began, channel.stream.consumed))
    return m


def _runs(flags: Sequence[bool], value: bool) -> list[int]:
    """Lengths of the runs of ``value`` in ``flags``."""
    runs: list[int] = []
    previous = None
    for flag in flags:
        if flag == value:
            if previous == value:
                runs[-1] += 1
            else:
                runs.append(1)
        previous = flag
    return runs


def measured_bursts(m: Measurement) -> dict[str, int]:
    """The television's on/off pattern in caller turns, as the calibration call lived it."""
    on, off = _runs(m.speaking, True), _runs(m.speaking, False)
    return {
        "on_turns": max(1, round(sum(on) / len(on))) if on else 1,
        "off_turns": max(1, round(sum(off) / len(off))) if off else 1,
    }


def _r(x: float) -> float:
    return round(x, 3)


def _band(value: float, floor: float) -> dict[str, float]:
    spread = max(0.5 * value, floor)
    return {"low": _r(max(0.0, value - spread)), "high": _r(value + spread)}


def _span(values: Sequence[int], default: tuple[int, int], cap: int) -> list[int]:
    if not values:
        return list(default)
    return [max(1, min(min(values), cap)), max(1, min(max(values), cap))]


def _condition(m: Measurement, minutes_per_reply: float) -> dict[str, Any]:
    """One condition of the file from its measurement.

    The text model fires leaks, loops, spurious turns and barge-ins only while
    the background speaks, so those rates are per turn in which it spoke; the
    ``expected`` bands are call averages, as the channel tests measure them.
    """
    errors = m.errors - sum(m.leaked_words) - m.looped_words
    if errors > 0:
        sub = _r(m.substitutions / errors)
        dele = _r(m.deletions / errors)
        ins = _r(max(0.0, 1.0 - sub - dele))
        sub = _r(1.0 - dele - ins)  # the three shares sum to exactly 1 after rounding
    else:
        sub, dele, ins = 0.6, 0.3, 0.1
    # The quiet room has no background: its loops are the recogniser's in every turn.
    speaking = m.turns if m.background == "clean" else m.speaking_turns
    cut_while_speaking = min(m.replies_cut / speaking, 0.99)
    # The text model cuts a reply at an exponential time: P(cut) = 1 - exp(-rate * T).
    per_minute = -math.log(1 - cut_while_speaking) / minutes_per_reply
    expected: dict[str, Any] = {
        "word_error_rate": _band(m.word_error_rate, 0.01),
        "spurious_turns_per_turn": _band(m.spurious / m.turns, 0.02),
        "barge_in_rate": _band(m.replies_cut / m.turns, 0.03),
    }
    if m.loops:
        expected["loops_per_turn"] = _band(len(m.loops) / m.turns, 0.02)
    return {
        "word_error_rate": _r(max(0.0, m.recognition_error_rate)),
        "substitution": sub,
        "deletion": dele,
        "insertion": ins,
        "digit_deletion": _r(m.digit_deletions / m.digit_errors) if m.digit_errors else 0.5,
        "email_error_rate": _r(m.emails_wrong / m.emails) if m.emails else 0.0,
        "leak_rate": _r(min(1.0, m.leaks / speaking)),
        "leak_words": _span(m.leaked_words, (1, 3), 8),
        "repetition_loop_rate": _r(min(1.0, len(m.loops) / speaking)),
        "repetition_repeats": _span(m.loops, (2, 4), 6),
        "spurious_turn_rate": _r(min(5.0, m.spurious / speaking)),
        "barge_in_per_minute": _r(per_minute) + 0.0,  # + 0.0 turns -0.0 into 0.0
        "expected": expected,
    }


# Two-sided 0.1% normal quantile: a re-measurement elsewhere disagrees with the file by
# more than this many standard errors about once in a thousand figures by chance.
SAMPLING_Z = 3.29
# The file rounds to three places.
_ROUNDING = 0.0015


def sampling_disagreements(m: Measurement, entry: dict[str, Any]) -> list[str]:
    """Figures of a file's condition ``entry`` that a re-measurement ``m`` contradicts.

    Another CPU or library build can move single transcripts, so elsewhere a condition
    cannot be re-measured to the digit; it must still agree within sampling error. Each
    share is compared as the difference of two binomial estimates over the
    re-measurement's denominator (words, errors, digit errors, emails, turns in which the
    background spoke); counts that can exceed one per turn (spurious turns) as two
    Poisson counts. The word spans (``leak_words``, ``repetition_repeats``) are extremes
    of a few events and are not compared. An empty list means the file stands.
    """
    out: list[str] = []
    speaking = m.speaking_turns
    recognition_errors = m.errors - sum(m.leaked_words) - m.looped_words
    minutes_per_reply = len(AGENT_REPLY.split()) / shipped_parameters().speaking_rate_wpm

    def share(name: str, shipped: float, measured: float, n: int) -> None:
        if n <= 0:
            return
        p = min(max((shipped + measured) / 2, 1.0 / (2 * n)), 1.0 - 1.0 / (2 * n))
        allowed = SAMPLING_Z * math.sqrt(2 * p * (1 - p) / n) + _ROUNDING
        if abs(shipped - measured) > allowed:
            out.append(
                f"{name}: file {shipped:.3f}, re-measured {measured:.3f} over {n}"
                f" (allowed difference {allowed:.3f})"
            )

    def counts(name: str, shipped: float, measured: float) -> None:
        allowed = SAMPLING_Z * math.sqrt(shipped + measured) + 1
        if abs(shipped - measured) > allowed:
            out.append(
                f"{name}: file {shipped:.1f}, re-measured {measured:.0f}"
                f" (allowed difference {allowed:.1f})"
            )

    share("word_error_rate", entry["word_error_rate"], m.recognition_error_rate, m.words)
    if recognition_errors > 0:
        for key, count in (("substitution", m.substitutions), ("deletion", m.deletions)):
            share(key, entry[key], count / recognition_errors, recognition_errors)
    if m.digit_errors:
        share("digit_deletion", entry["digit_deletion"], m.digit_deletions / m.digit_errors,
              m.digit_errors)  # fmt: skip
    if m.emails:
        share("email_error_rate", entry["email_error_rate"], m.emails_wrong / m.emails, m.emails)
    share("leak_rate", entry["leak_rate"], min(1.0, m.leaks / speaking), speaking)
    share("repetition_loop_rate", entry["repetition_loop_rate"],
          min(1.0, len(m.loops) / speaking), speaking)  # fmt: skip
    counts("spurious turns", entry["spurious_turn_rate"] * speaking, m.spurious)
    cut_in_file = 1 - math.exp(-entry["barge_in_per_minute"] * minutes_per_reply)
    share("replies cut", cut_in_file, min(m.replies_cut / speaking, 0.99), speaking)
    return out


def _confusions(
    measured: Sequence[Measurement], most: int = 4, seen_at_least: int = 2
) -> dict[str, Any]:
    """The substitutions seen across all conditions, most frequent first, as the file holds them.

    Words are kept only when both sides are plain words (amounts and times that
    Whisper wrote another way are formatting, not mishearing); digits when both
    sides are single digits of a code. A pair seen once may be the alignment
    pairing a lost word with a stray one, so a pair must be seen ``seen_at_least``
    times.
    """
    words: dict[str, Counter[str]] = {}
    digits: dict[str, Counter[str]] = {}
    for m in measured:
        for ref, hyp in m.substituted:
            if ref.isdigit() and hyp.isdigit() and len(ref) == len(hyp) == 1:
                digits.setdefault(ref, Counter())[hyp] += 1
            elif _PLAIN.match(ref) and _PLAIN.match(hyp):
                words.setdefault(ref, Counter())[hyp] += 1

    def table(counts: dict[str, Counter[str]]) -> dict[str, list[str]]:
        return {
            key: kept
            for key, seen in sorted(counts.items())
            if (
                kept := [
                    w
                    for w, n in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
                    if n >= seen_at_least
                ][:most]
            )
        }

    return {"words": table(words), "digits": table(digits)}


def class_weights(measured: Sequence[Measurement], prior_tokens: int = 20) -> dict[str, float]:
    """Each word class's miss rate over the pooled miss rate, all conditions together.

    ``prior_tokens`` tokens at the pooled rate are added to each class, so a class
    seen a few times stays near 1 instead of swinging on one miss.
    """
    tokens_by = sum((m.class_tokens for m in measured), Counter[str]())
    missed_by = sum((m.class_missed for m in measured), Counter[str]())
    seen = sum(tokens_by[c] for c in WEIGHTED_CLASSES)
    pooled = sum(missed_by[c] for c in WEIGHTED_CLASSES) / seen if seen else 0.0
    if pooled == 0.0:
        return dict.fromkeys(WEIGHTED_CLASSES, 1.0)
    return {
        c: _r((missed_by[c] + prior_tokens * pooled) / (tokens_by[c] + prior_tokens) / pooled)
        for c in WEIGHTED_CLASSES
    }


def _condition_rng(seed: int, background: BackgroundName, level_db: int) -> np.random.Generator:
    return np.random.default_rng([seed, BACKGROUNDS.index(background), level_db])


def measure_condition(
    background: BackgroundName,
    level_db: int,
    seed: int,
    corpus: Sequence[str],
    voice: Voice = CALLER,
) -> Measurement:
    """One condition as ``calibrate`` measures it (the same generator, the same call).

    Every voice hears the same room from the same generator: the voices differ
    only in who speaks, so their figures compare like for like.
    """
    return measure(background, level_db, corpus, _condition_rng(seed, background, level_db), voice)


def measurement_json(m: Measurement) -> dict[str, Any]:
    """A measurement as plain JSON (the calibration's cache of measured conditions)."""
    raw = dataclasses.asdict(m)
    raw["class_tokens"] = dict(sorted(m.class_tokens.items()))
    raw["class_missed"] = dict(sorted(m.class_missed.items()))
    return raw


def measurement_from_json(raw: dict[str, Any]) -> Measurement:
    data = dict(raw)
    data["substituted"] = [tuple(pair) for pair in data["substituted"]]
    data["class_tokens"] = Counter(data["class_tokens"])
    data["class_missed"] = Counter(data["class_missed"])
    return Measurement(**data)


def condition_entry(m: Measurement) -> dict[str, Any]:
    """The parameter file's entry for a measured condition."""
    minutes_per_reply = len(AGENT_REPLY.split()) / shipped_parameters().speaking_rate_wpm
    return _condition(m, minutes_per_reply)


def _voice_table(label: str, measured: Sequence[Measurement]) -> list[str]:
    lines = [f"#   {label}:"]
    for m in measured:
        if m.background == "clean":
            lines.append(f"#     clean: WER {m.word_error_rate:.1%} (the recogniser alone)")
            continue
        lines.append(
            f"#     {m.background} {m.level_db} dB: WER {m.word_error_rate:.1%}, leaks {m.leaks},"
            f" loops {len(m.loops)}, spurious {m.spurious}, replies cut {m.replies_cut}"
            f" (of {m.turns} turns; background speaking in {sum(m.speaking)})"
        )
    return lines


def calibrate(
    levels: Sequence[int],
    backgrounds: Sequence[BackgroundName] = ("street", "cafe", "television"),
    seed: int = 0,
    corpus: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    corpus_name: str | None = None,
    personas: Sequence[str] = ("calm",),
    cache: Path | None = None,
    keep: Path | None = None,
) -> str:
    """The text channel's parameter file (YAML text) measured from the audio channel.

    Each persona's caller voice (``engines.PERSONA_VOICES``) speaks the whole corpus in
    the quiet room and in every background and level; the first persona's voice is the
    file's top level (its default voice), the others are its ``voices``. ``corpus``
    defaults to ``shipped_corpus()``; ``corpus_name`` is the corpus file the header
    names when another one is given; ``progress`` gets a line per condition measured;
    ``cache`` is a folder of measured conditions to reuse (made on these versions and
    this CPU only), so an interrupted calibration resumes where it stopped. ``keep`` is an
    earlier parameter file: a voice it measured (same label) is taken from it, not measured
    again, when it was recorded on this machine's CPU and versions with the same seed,
    corpus and levels (else ``ValueError``); the voices whose label changed are measured.
    """
    from vamos_env.channel.audio.backgrounds import background_voices
    from vamos_env.channel.audio.engines import PERSONA_VOICES
    from vamos_env.channel.audio.vad import DetectorSettings

    unknown = [p for p in personas if p not in PERSONA_VOICES]
    if unknown or not personas:
        raise ValueError(f"personas: expected some of {sorted(PERSONA_VOICES)}, got {unknown}")
    base = shipped_parameters()
    corpus = tuple(corpus) if corpus is not None else shipped_corpus()
    minutes_per_reply = len(AGENT_REPLY.split()) / base.speaking_rate_wpm
    say = progress or (lambda line: None)
    labels: dict[str, str] = {}
    profiles: dict[str, dict[str, Any]] = {}
    table: list[str] = []
    out_backgrounds: dict[str, Any] = {}
    kept_voices = (
        _kept_voices(keep, levels, backgrounds, seed, corpus_name) if keep is not None else {}
    )
    for persona in personas:
        voice = PERSONA_VOICES[persona]
        label = voice_label(voice)
        labels[persona] = label
        if label in profiles:  # two personas with one voice: measured once
            continue
        if label in kept_voices:
            profile, lines, rooms_kept = kept_voices[label]
            say(f"{label}: kept from {keep}")
            profiles[label] = profile
            table.extend(lines)
            if persona == personas[0]:
                out_backgrounds.update(rooms_kept)
            continue
        clean = cached_measurement(cache, voice, "clean", 25, seed, corpus)
        say(f"{label}: clean: WER {clean.word_error_rate:.1%}")
        measured = [clean]
        rooms: dict[str, dict[str, Any]] = {}
        for name in ("street", "cafe", "television"):
            if name not in backgrounds:
                continue
            rooms[name] = {}
            for level in levels:
                m = cached_measurement(cache, voice, name, level, seed, corpus)
                measured.append(m)
                rooms[name][str(level)] = _condition(m, minutes_per_reply)
                say(
                    f"{label}: {name} {level} dB: WER {m.word_error_rate:.1%}, leaks {m.leaks}, "
                    f"loops {len(m.loops)}, spurious {m.spurious}, replies cut {m.replies_cut}"
                )
                if not out_backgrounds.get(name) and persona == personas[0]:
                    spec = base.backgrounds[name]
                    room: dict[str, Any] = {"description": spec.description, "speech": spec.speech}
                    if spec.bursts is not None:  # the default voice's first call shows the cycle
                        room["bursts"] = measured_bursts(m)
                    out_backgrounds[name] = room
        table.extend(_voice_table(label, measured))
        profiles[label] = {
            "class_weights": class_weights(measured),
            "confusions": _confusions(measured),
            "clean": _condition(clean, minutes_per_reply),
            "levels": rooms,
        }
    default = labels[personas[0]]
    top = profiles[default]
    backgrounds_out: dict[str, Any] = {
        "clean": {
            "description": CLEAN_DESCRIPTION,
            "speech": "none",
            "quiet": top["clean"],
        }
    }
    noisy: tuple[BackgroundName, ...] = ("street", "cafe", "television")
    for name in noisy:
        if name in top["levels"]:
            backgrounds_out[name] = {**out_backgrounds[name], "levels": top["levels"][name]}
        else:  # not measured this run: keep the shipped figures
            kept = base.backgrounds[name]
            backgrounds_out[name] = kept.model_dump(mode="json", exclude_none=True)
    others = {label: p for label, p in profiles.items() if label != default}
    if others and set(backgrounds) != {"street", "cafe", "television"}:
        raise ValueError("other voices need every noisy room measured (--backgrounds all three)")
    machine = recorded_on()
    body: dict[str, Any] = {
        "version": 1,
        "source": "calibrated",
        "recogniser": "whisper-tiny.en",
        "recorded_on": machine,
        "speaking_rate_wpm": base.speaking_rate_wpm,
        "reference_agent_words": len(AGENT_REPLY.split()),
        "default_level_db": base.default_level_db,
        "default_voice": default,
        "personas": dict(sorted(labels.items())),
        "confusions": top["confusions"],
        "class_weights": top["class_weights"],
        "backgrounds": backgrounds_out,
        "voices": others,
    }
    detector = DetectorSettings()
    voices = {b: ", ".join(_voice_name(v) for v in background_voices(b)) for b in backgrounds}
    command = (
        f"vamos channel calibrate --levels {','.join(map(str, levels))} --seed {seed}"
        f" --personas {','.join(personas)}"
        + ("" if corpus_name is None else f" --corpus {corpus_name}")
        + ("" if keep is None else f" --keep {_shown_path(keep)}")
    )
    header = [
        "# Text channel parameters: what a voice pipeline does to a call, by background and level.",
        "#",
        f"# STATUS: calibrated. Written by `{command}` (vamos_env.channel.audio).",
        "# Recogniser profile: whisper-tiny.en. The recogniser is in every room: the clean room",
        "# is the recogniser alone (no background, not no recogniser); each background adds",
        "# its own measured effects on top (more word errors, leaks, loops, spurious turns,",
        "# cut replies). The `ideal` profile (no recogniser) is not a file: the identity.",
        f"# {len(corpus)} caller turns from the exam per condition"
        f" ({corpus_name or 'data/' + CORPUS_FILE}), each answered by a"
        f" {len(AGENT_REPLY.split())}-word reply,",
        "# spoken in each persona's caller voice (the top level is the default voice, `voices`",
        "# the others): " + "; ".join(f"{p} {v}" for p, v in sorted(labels.items())) + ",",
        "# and mixed with synthesized backgrounds scaled to the level's share of reference",
        "# speech energy (25 dB = 0.3%); voices in the backgrounds:",
        *(f"#   {b}: {v}" for b, v in voices.items()),
        f"# Detector: Silero VAD v6, confidence {detector.confidence}, start {detector.start_s} s,"
        f" stop {detector.stop_s} s,",
        f"# loudness gate {detector.min_level_dbfs} dBFS; recogniser: Whisper tiny.en (int8,"
        " beam 5, temperature 0).",
        "# Recorded on: CPU "
        f"{machine['cpu']['model']} ({' '.join(machine['cpu']['isa']) or 'no SIMD flags read'});",
        "# " + ", ".join(f"{k} {v}" for k, v in machine["libraries"].items()) + ";",
        "# " + ", ".join(f"{k} {v}" for k, v in machine["voices"].items()) + ".",
        "# Exact transcripts of int8 recognition depend on these: re-measured on the same",
        "# versions and CPU the figures are identical; elsewhere they agree within sampling",
        "# error (tests/channel/audio/test_audio_channel.py states the bands).",
        "# Leak, loop, spurious-turn and barge-in rates are per caller turn in which the",
        "# background spoke (television: its bursts, measured in turns); the expected bands",
        "# are call averages.",
        "#",
        "# Parameters (per caller word / per caller turn / per minute of agent speech):",
        "#   word_error_rate   chance a caller word, or one digit of a code, is misrecognised",
        "#                     (leaked background words left out: leak_rate adds them)",
        "#   substitution, deletion, insertion   how a word's error splits",
        "#   digit_deletion    share of a code digit's errors that drop the digit",
        "#   email_error_rate  chance an email address comes out mangled",
        "#   leak_rate, leak_words  chance per caller turn that background words leak in; how many",
        "#   repetition_loop_rate, repetition_repeats  chance per caller turn that the recogniser",
        "#                     loops on a phrase of the turn; how many extra copies it writes",
        "#   spurious_turn_rate  chance per caller turn of a background turn for the agent",
        "#   barge_in_per_minute  false barge-ins per minute of agent speech",
        "#   confusions        what the recogniser wrote instead of a word or a digit, most",
        "#                     frequent first (the voice's conditions pooled)",
        "#   class_weights     how much likelier than average a name, a number, a code digit",
        "#                     or another word is missed (the voice's conditions pooled)",
        "# Leaks, loops, spurious turns and barge-ins happen only while the background speaks.",
        "#",
        "# Measured, by caller voice:",
        *table,
        "",
    ]
    text = "\n".join(header) + yaml.safe_dump(body, sort_keys=False, width=100)
    parse_parameters(yaml.safe_load(text))  # refuse to write a file the text channel would reject
    return text


CLEAN_DESCRIPTION = "a quiet room: no background, the recogniser alone"
_WRITTEN_BY = re.compile(r"^# STATUS: calibrated\. Written by `([^`]*)`", re.MULTILINE)


def _shown_path(path: Path) -> str:
    """A kept file as the header names it: relative to the package when it is shipped."""
    try:
        return str(path.resolve().relative_to(Path(__file__).resolve().parents[3]))
    except ValueError:
        return str(path)


def _kept_voices(
    path: Path,
    levels: Sequence[int],
    backgrounds: Sequence[BackgroundName],
    seed: int,
    corpus_name: str | None,
) -> dict[str, tuple[dict[str, Any], list[str], dict[str, Any]]]:
    """The voices an earlier file measured: label -> (profile, table lines, its rooms).

    Refused (``ValueError``, saying what differs) unless the file was recorded on this
    machine's CPU and versions, by a calibration of the same seed, corpus and levels
    over every noisy room: only then are its figures what measuring again would give.
    """
    text = path.read_text()
    raw = yaml.safe_load(text)
    if not isinstance(raw, dict) or raw.get("source") != "calibrated":
        raise ValueError(f"--keep {path}: expected a calibrated parameter file")
    here = recorded_on()
    if raw.get("recorded_on") != here:
        raise ValueError(
            f"--keep {path}: recorded on {raw.get('recorded_on')!r}, this machine is {here!r}; "
            "its voices would not be what measuring here gives"
        )
    written = _WRITTEN_BY.search(text)
    if written is None:
        raise ValueError(f"--keep {path}: its header does not say which command wrote it")
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--levels", type=_levels)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", default=None)
    parser.add_argument(
        "--backgrounds", type=_backgrounds, default=("street", "cafe", "television")
    )
    was, _ = parser.parse_known_args(written.group(1).split()[3:])
    expected = (list(levels), seed, corpus_name, tuple(backgrounds))
    got = (was.levels, was.seed, was.corpus, tuple(was.backgrounds))
    if got != expected or set(backgrounds) != {"street", "cafe", "television"}:
        raise ValueError(
            f"--keep {path}: written with levels, seed, corpus, rooms {got}, this run asks "
            f"{expected} (every noisy room is needed)"
        )
    lines = text.splitlines()
    start = lines.index("# Measured, by caller voice:") + 1
    tables: dict[str, list[str]] = {}
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        if line.startswith("#   ") and not line.startswith("#     "):
            label = line[4:].rstrip(":")
            tables[label] = []
        tables[label].append(line)
    default = raw["default_voice"]
    rooms = {
        name: {k: v for k, v in room.items() if k != "levels"}
        for name, room in raw["backgrounds"].items()
        if name != "clean"
    }
    out: dict[str, tuple[dict[str, Any], list[str], dict[str, Any]]] = {
        default: (
            {
                "class_weights": raw["class_weights"],
                "confusions": raw["confusions"],
                "clean": raw["backgrounds"]["clean"]["quiet"],
                "levels": {
                    name: room["levels"]
                    for name, room in raw["backgrounds"].items()
                    if name != "clean"
                },
            },
            tables[default],
            rooms,
        )
    }
    for label, profile in (raw.get("voices") or {}).items():
        out[label] = (profile, tables[label], {})
    return out


def _voice_name(voice: Any) -> str:
    if voice.engine == "piper":
        return f"piper joe at pitch {voice.pitch}"
    return f"{voice.engine} {voice.name}"


def _levels(raw: str) -> list[int]:
    try:
        levels = [int(x) for x in raw.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole dB levels separated by commas (e.g. 25,10,5), got {raw!r}"
        ) from None
    if not levels:
        raise argparse.ArgumentTypeError(f"expected at least one level, got {raw!r}")
    return levels


def _backgrounds(raw: str) -> tuple[BackgroundName, ...]:
    names = tuple(x.strip() for x in raw.split(",") if x.strip())
    noisy = ("street", "cafe", "television")
    wrong = [n for n in names if n not in noisy]
    if wrong or not names:
        raise argparse.ArgumentTypeError(
            f"expected backgrounds from {', '.join(noisy)}, got {raw!r}"
        )
    return cast(tuple[BackgroundName, ...], names)


def _personas(raw: str) -> tuple[str, ...]:
    from vamos_env.channel.audio.engines import PERSONA_VOICES

    names = tuple(x.strip() for x in raw.split(",") if x.strip())
    wrong = [n for n in names if n not in PERSONA_VOICES]
    if wrong or not names:
        raise argparse.ArgumentTypeError(
            f"expected personas from {', '.join(sorted(PERSONA_VOICES))}, got {raw!r}"
        )
    return names


def _calibrate_command(args: argparse.Namespace) -> int:
    import time

    from vamos_env.channel.audio.engines import missing_reason

    reason = missing_reason()
    if reason:
        print(f"vamos channel calibrate: {reason}")
        return 2
    started = time.perf_counter()

    def progress(line: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {line}", flush=True)

    corpus, name = None, None
    if args.corpus is not None:
        try:
            corpus = _corpus_from(Path(args.corpus))
        except (OSError, ValueError) as exc:
            print(f"vamos channel calibrate: --corpus: {exc}")
            return 2
        name = args.corpus
    try:
        text = calibrate(
            args.levels,
            args.backgrounds,
            args.seed,
            corpus,
            progress=progress,
            corpus_name=name,
            personas=args.personas,
            cache=None if args.cache is None else Path(args.cache),
            keep=None if args.keep is None else Path(args.keep),
        )
    except ValueError as exc:
        print(f"vamos channel calibrate: {exc}")
        return 2
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")
    return 0


def _corpus_from(path: Path) -> tuple[str, ...]:
    raw = yaml.safe_load(path.read_text())
    turns = raw.get("turns") if isinstance(raw, dict) else None
    if not isinstance(turns, list) or not turns or not all(isinstance(t, str) for t in turns):
        raise ValueError(
            f"{path}: expected a YAML mapping with a non-empty list of strings 'turns'"
        )
    return tuple(turns)


def _corpus_command(args: argparse.Namespace) -> int:
    if args.turns <= EMAIL_TURNS:
        print(f"vamos channel corpus: --turns: expected more than {EMAIL_TURNS}, got {args.turns}")
        return 2
    corpus = exam_corpus(args.turns, args.seed)
    Path(args.out).write_text(corpus_file(corpus, turns=args.turns, seed=args.seed))
    print(f"wrote {args.out} ({len(corpus)} caller turns)")
    return 0


def register(subparsers: Any) -> None:
    """Add ``channel calibrate`` to ``vamos``'s subparsers."""
    channel = subparsers.add_parser("channel", help="the speech channel (audio extra)")
    sub = channel.add_subparsers(dest="channel_command", required=True)
    cal = sub.add_parser(
        "calibrate", help="measure the audio channel; write the text channel's file"
    )
    cal.add_argument("--levels", type=_levels, default=[25, 10, 5], help="dB, e.g. 25,10,5")
    cal.add_argument("--backgrounds", type=_backgrounds, default=("street", "cafe", "television"))
    cal.add_argument("--seed", type=int, default=0)
    cal.add_argument(
        "--corpus", default=None, help="a corpus file (default: the shipped calibration corpus)"
    )
    cal.add_argument(
        "--personas",
        type=_personas,
        default=("calm", "angry", "sceptic"),
        help="whose caller voices to measure; the first is the file's default voice",
    )
    cal.add_argument(
        "--cache", default=None, help="a folder keeping measured conditions (resumes a run)"
    )
    cal.add_argument(
        "--keep",
        default=None,
        help="an earlier parameter file measured on this machine: its voices are kept, "
        "voices not in it are measured",
    )
    cal.add_argument("--out", required=True, help="the parameter file to write")
    cal.set_defaults(func=_calibrate_command)
    cor = sub.add_parser("corpus", help="draw the calibration's caller turns from the exam")
    cor.add_argument("--turns", type=int, default=DEFAULT_TURNS, help="caller turns in all")
    cor.add_argument("--seed", type=int, default=0)
    cor.add_argument("--out", required=True, help="the corpus file to write")
    cor.set_defaults(func=_corpus_command)


def voice_label(voice: Voice) -> str:
    """How the parameter file names a caller voice: "piper joe", "espeak-ng en-us"."""
    if voice.engine == "piper":
        label = "piper joe" if voice.pitch == 1.0 else f"piper joe at pitch {voice.pitch}"
        return label if voice.length_scale == 1.0 else f"{label}, length {voice.length_scale}"
    return f"{voice.engine} {voice.name}"


def cache_path(
    folder: Path, voice: Voice, background: BackgroundName, level_db: int, seed: int,
    corpus: Sequence[str],
) -> Path:  # fmt: skip
    """Where a measured condition is kept: one JSON file per (voice, room, level, seed, corpus)."""
    import hashlib

    digest = hashlib.sha256("\n".join(corpus).encode()).hexdigest()[:12]
    name = f"{voice_label(voice).replace(' ', '_')}-{background}-{level_db}-s{seed}-{digest}.json"
    return folder / name


def cached_measurement(
    folder: Path | None,
    voice: Voice,
    background: BackgroundName,
    level_db: int,
    seed: int,
    corpus: Sequence[str],
) -> Measurement:
    """``measure_condition``, reusing a kept measurement made on this machine's versions."""
    import json

    if folder is None:
        return measure_condition(background, level_db, seed, corpus, voice)
    path = cache_path(folder, voice, background, level_db, seed, corpus)
    here = recorded_on()
    if path.exists():
        kept = json.loads(path.read_text())
        if kept.get("recorded_on") == here:
            return measurement_from_json(kept["measurement"])
    m = measure_condition(background, level_db, seed, corpus, voice)
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"recorded_on": here, "measurement": measurement_json(m)}))
    return m
