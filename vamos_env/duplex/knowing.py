"""The caller's ear knows its own words: its name, its account number, its second factor.

A person hears its own name and number read back to it even where a stranger would not
catch them. Whisper tiny.en, the caller's ear, writes rare names as common words
("Brandon Grace Hartman" for Brianna, "a nation map only" for Aisha Mahoney), and drops
or doubles a digit of a long code ("6491-2600"). The scripted caller then corrects a
read-back that was right until it gives up, and the call measures the simulator's ear
instead of the agent.

``KnowingEar`` hears as a person who knows its own words does:

1. It decodes the clip freely, with timestamps: without them tiny.en often stops after a
   long code and loses the rest of the sentence ("To confirm, account 1-3-7-4-9-0-1-2-8."
   for a read-back that went on with the name), so the caller could neither accept nor
   refuse the name.
2. For each of its own phrases it takes the stretch of that reading most like it (a run of
   words with the most letters in common for a name; a run of digits of about its length
   for a code) and puts its own phrase there.
3. It scores both readings against the audio with Whisper's forced alignment (the sum of
   the token log-probabilities, teacher-forced) and hears its own phrase when that reading
   scores within a margin of the free one (8 nats for a name, 6 for a code).

Its own phrase read back right scores a few nats below the free reading (the recogniser's
prior is against rare names); a different name or a changed digit mostly scores 20 nats
or more below it, and is heard as said (``benchmarks/knowing_ear.py`` measures both over
the exam's callers). Accepting a
read-back grants nothing: ``verify_caller`` still checks what the agent typed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

import numpy as np

from vamos_env.channel.audio import engines
from vamos_env.channel.audio.engines import RATE, Audio, Ear, ReadingScorer
from vamos_env.speech.vocabulary import DIGIT_SOUNDS, SPOKEN_DIGITS

# A reading that puts the caller's own name in scores at most this many nats below the
# free reading to be heard; for a code, at most CODE_MARGIN_NATS. Over the exam's 23
# callers (``benchmarks/knowing_ear.py``) its name read back right scored -23.7 to +0.2
# nats against the free reading (median -7.3); another first name at most -7.6, another
# last name at most -10.3; a changed account digit median -19.8 (once +8.1, where the
# free reading had lost digits). The margin errs towards hearing its name: a wrong
# name taken for its own costs a failed ``verify_caller``; its own name refused costs
# the call. With it: right read-backs accepted 20 of 23 (16 plain), another first name
# caught 17 (10), another last name 17 (12), a changed digit 22 (22).
MARGIN_NATS = 8.0
CODE_MARGIN_NATS = 6.0
# A stretch shares at least this share of letters with the name to be tried as it.
MIN_NAME_LIKENESS = 0.35
# The stretches most like the name that are scored as it ("a nation map only": the
# likest stretch is "map only", the right one all four words).
NAME_STRETCHES = 6
# A run of digits is tried as the code when its length is within this many of the code's.
DIGIT_SLACK = 3
# Whisper reads 30-s windows; the caller's ear reads at most the first 20 s of a piece,
# as ``engines.transcribe`` does.
MAX_CLIP_S = engines.MAX_SEGMENT_S

# Digit words as the ear writes them, "oh" and "for" (four) included.
_DIGIT_WORDS = SPOKEN_DIGITS | {"for": DIGIT_SOUNDS["for"]}
_SEPARATORS = {"dash", "hyphen"}
_NAME_CUES = {"name", "named", "names", "mr", "mrs", "ms", "miss"}
_TRAILING = re.compile(r"[.,;:!?]+$")


def _bare(word: str) -> str:
    return re.sub(r"[^a-z0-9]", "", word.lower())


def _digits_of(word: str) -> str | None:
    """The digits one recognised word stands for ("2-6-9", "nine," -> "9"; "dash" -> "");
    None when it is no part of a spoken code."""
    bare = _bare(word)
    if bare in _SEPARATORS:
        return ""
    if bare in _DIGIT_WORDS:
        return _DIGIT_WORDS[bare]
    if any(c.isdigit() for c in word) and re.fullmatch(r"[\d\-.,$]+", word.strip(".,;:!?")):
        return re.sub(r"\D", "", word)
    return None


# How the ear writes "two" inside a spoken code ("9 to 9 7 dash ..."): a digit only between
# two single digits and not in a range ("from 9 to 5"), since "to" is everywhere else a word.
_TWO_HEARD_AS = {word for word, digit in DIGIT_SOUNDS.items() if digit == "2"}


def _between_digits(words: list[str], i: int) -> bool:
    if i == 0 or i + 1 >= len(words) or _bare(words[i]) not in _TWO_HEARD_AS:
        return False
    before, after = _digits_of(words[i - 1]), _digits_of(words[i + 1])
    ranged = i >= 2 and _bare(words[i - 2]) in {"from", "between"}  # "from 9 to 5"
    return (
        before is not None
        and len(before) == 1
        and after is not None
        and len(after) == 1
        and not ranged
    )


def spoken_twos(text: str) -> str:
    """``text`` with each "to"/"too" between two spoken digits written as the digit it was
    ("count 9 to 9 7 dash 6" -> "count 9 2 9 7 dash 6")."""
    words = text.split()
    out = []
    for i, word in enumerate(words):
        if _between_digits(words, i):
            closing = _TRAILING.search(word)
            word = "2" + (closing.group(0) if closing else "")
        out.append(word)
    return " ".join(out)


def _put(words: list[str], start: int, end: int, phrase: str) -> str:
    """``words`` with ``words[start:end]`` replaced by ``phrase``, keeping the stretch's
    closing punctuation."""
    closing = _TRAILING.search(words[end - 1])
    said = phrase + (closing.group(0) if closing and not phrase.endswith(".") else "")
    return " ".join([*words[:start], said, *words[end:]])


def written_forms(name: str) -> tuple[str, ...]:
    """The ways a recogniser may write a name: as given, hyphens as spaces, without
    apostrophes, particles joined ("Walsh Obi", "OMalley", "Vanderberg")."""
    forms = [name, name.replace("-", " "), name.replace("'", "")]
    parts = name.split()
    if len(parts) > 2:
        forms.append(f"{parts[0]} {''.join(parts[1:]).capitalize()}")
    return tuple(dict.fromkeys(forms))


def name_readings(text: str, name: str, limit: int = NAME_STRETCHES) -> list[str]:
    """``text`` with a stretch put as ``name``, for each stretch that may be the name read
    back: the ``limit`` stretches with most letters in common with it, and those that
    start where a read-back puts a name (after "name", or after a run of digits: "account
    2, 5, 2, 6, ... 9, a nation map only"). None when the name is already there."""
    target = _bare(name.replace(" ", ""))
    words = text.split()
    if not target or _bare(text.replace(" ", "")).find(target) >= 0:
        return []
    longest = len(name.split()) + 2
    digits = [
        _digits_of(w) is not None and bool(re.search(r"\d", w) or _bare(w) in _DIGIT_WORDS)
        for w in words
    ]
    cues = {
        i + 1
        for i, w in enumerate(words)
        if _bare(w) in _NAME_CUES or (digits[i] and (i + 1 == len(words) or not digits[i + 1]))
    }
    like: list[tuple[float, int, int]] = []
    placed: list[tuple[int, int]] = []
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + longest) + 1):
            letters = "".join(_bare(w) for w in words[start:end])
            if not letters or any(c.isdigit() for c in letters):
                continue
            if start in cues:
                placed.append((start, end))
            likeness = SequenceMatcher(None, letters, target, autojunk=False).ratio()
            if likeness >= MIN_NAME_LIKENESS:
                like.append((-likeness, start, end))
    stretches = [(s, e) for _, s, e in sorted(like)[:limit]] + placed
    return [_put(words, s, e, name) for s, e in dict.fromkeys(stretches)]


def name_reading(text: str, name: str) -> str | None:
    """``text`` with its stretch most like ``name`` put as ``name``; None when none is."""
    readings = name_readings(text, name, limit=1)
    return readings[0] if readings else None


def code_reading(text: str, code: str) -> str | None:
    """``text`` with its run of spoken digits nearest ``code`` in length put as ``code``;
    None when no run is near it or the code is already there as said."""
    want = re.sub(r"\D", "", code)
    words = text.split()
    runs: list[tuple[int, int, str]] = []
    start = None
    digits = ""
    for i, word in enumerate([*words, ""]):
        got = _digits_of(word) if word else None
        if got is not None:
            if start is None:
                start, digits = i, ""
            digits += got
            continue
        if start is not None:
            runs.append((start, i, digits))
            start = None
    near = [
        (abs(len(d) - len(want)), s, e, d)
        for s, e, d in runs
        if len(d) >= 3 and abs(len(d) - len(want)) <= DIGIT_SLACK
    ]
    if not near:
        return None
    _, s, e, d = min(near)
    if d == want:
        return None
    return _put(words, s, e, code)


@dataclass
class KnowingEar:
    """A recogniser that knows the caller's own phrases (see the module docstring).

    ``names`` are tried as names, ``codes`` as spoken digit codes. Calling it with a clip
    (16 kHz float) returns what the caller hears."""

    names: Sequence[str] = ()
    codes: Sequence[str] = ()
    ear: Ear = "whisper-tiny.en"
    margin: float = MARGIN_NATS
    code_margin: float = CODE_MARGIN_NATS
    heard_own: int = field(default=0, init=False)  # readings changed to its own phrase

    def __call__(self, audio: Audio) -> str:
        clip = np.asarray(audio[: int(MAX_CLIP_S * RATE)], dtype=np.float32)
        model = engines._model(self.ear)
        with engines.one_blas_thread():
            segments, _ = model.transcribe(clip, without_timestamps=False, **engines._DECODING)
            text = spoken_twos(" ".join(s.text.strip() for s in segments).strip())
        if not text:
            return text
        scorer = ReadingScorer(model, clip)
        for name in self.names:
            readings = [r for form in written_forms(name) for r in name_readings(text, form)]
            text = self._own(scorer, text, readings, self.margin)
        for code in self.codes:
            reading = code_reading(text, code)
            text = self._own(scorer, text, [reading] if reading else [], self.code_margin)
        return text

    def _own(self, scorer: ReadingScorer, text: str, readings: list[str], margin: float) -> str:
        """The best of ``readings`` when it scores within ``margin`` nats of ``text``;
        else ``text``."""
        if not readings:
            return text
        best = max(readings, key=scorer.score)
        if scorer.score(best) < scorer.score(text) - margin:
            return text
        self.heard_own += 1
        return best


__all__ = [
    "CODE_MARGIN_NATS",
    "MARGIN_NATS",
    "KnowingEar",
    "code_reading",
    "name_reading",
    "name_readings",
    "spoken_twos",
    "written_forms",
]
