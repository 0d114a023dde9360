"""The grader's ear: every stretch of the agent's speech recognised once, with word times.

The caller hears the agent stretch by stretch, as the call goes, each stretch alone: that
is its hearing, part of the simulated call. The grader reads the agent's words once the
call is over, each stretch in the context of those around it, so that what the agent said
plainly is not charged to it because a short clip misled the recogniser (Whisper tiny.en
alone on a read-back often stops after the code: "To confirm, account 9-8-2-2-1-7-0-4.").
The recogniser is ``engines.EARS``: Whisper tiny.en by default, Whisper base as the
alternative (docs/grading.md has the measured comparison).

Whisper reads 30 s at a time whatever the clip's length, so recognising each stretch
alone costs a whole window per stretch. ``stretch_words`` packs consecutive stretches
into windows of at most ``WINDOW_S`` of audio, each stretch with its roll and a second of
silence between them, recognises each window once with word alignment, and gives every
word back to the stretch its time falls in, on the call's clock (a word aligned into the
silence goes to the nearer stretch, or to the one before when the word before it ends in
a comma: Whisper stretches the last word of "ending zero, zero, zero, two." into the
silence, and the digit belongs to the card). A stretch longer than a
window is recognised alone (Whisper then reads it window by window), and so is each
stretch of a window the recogniser looped on ("10, 10, 10, ...") or skipped speech in
(a word aligned from one stretch more than a second into the next, or a stretch of a
second or more left without a word: in one call of the run at 57/80 the window's
reading jumped from "9.89 cents per" to "till what ours." and lost the next stretch,
the bill's total, whole).

**Second opinions** (``second_opinion``). Packing is not free: the stretches around one
are context, and context can mislead Whisper on a figure. In the 80-call run at 2fcc826,
"nine point eight nine cents per kilowatt hour" came back "$0.89 per kilowatt hour" in its
window (four calls) and "card ending zero, zero, zero, two" with four zeros, while the
same stretch read alone came back right; and forced alignment on the stretch's own audio
scored the right reading higher by 2.6 and 5.8 nats (in the window, by 0.1 and -3.3). So
with a ``scorer``, every packed stretch whose words hold a figure (a word with a digit,
digit words included) is read alone too. Where the two readings differ on a figure or
next to one (its unit: "9.89 cents per" against "9.89 and since per"; the word lists
compared with case, punctuation and digit words set aside; differences at most
``JOIN_WORDS`` apart taken as one), both readings of the whole stretch are scored on its
own clip and the alone reading is taken only when it scores more than
``SECOND_MARGIN_NATS`` higher. Differences in other words are left as packed (they do
not change what the grader checks), and so is a reading alone that stops before the
stretch's end (Whisper alone often stops after a read-back's code). Over 218 of the
reference's turns with figures (``benchmarks/grading_ear.py``) it mended 2 and broke
none, at 8.4 s of CPU per minute of agent speech against 4.0 packed alone.

**Teens and tens** (``GradingEar``). Whisper's text prior favours round amounts: read by
the agent's voice, "two hundred fifteen dollars and twenty-eight cents" comes out as
"$250.28" from tiny.en and base alike, while forced alignment scores that audio -2.4
nats as "$250.28" and -2.7 as "$215.28": the audio does not tell them apart for the
model, its prior does. Said "two hundred fifty", the same audio scores -1.9 as "$250.28"
and -11.5 as "$215.28". So every number the grader's ear writes with a teen or a ten in
its last two digits (13-19, 30-90) is scored both ways against the window's audio, and
the teen reading is taken unless it scores more than ``TEEN_MARGIN_NATS`` (1 nat) below
the ten reading. Over 42 amounts in each of three voices (``benchmarks/teen_numbers.py``)
a teen said scored below its ten twice (by 0.7 and 1.3 nats, Piper: the first is
recovered), and a ten said scored at least 1.4 nats above its teen (espeak-ng; mostly 5
or more). The decision reads only the audio, never the task's expected values; an agent
that says "fifty" is heard as fifty (``benchmarks/teen_numbers.py`` measures both ways).
Ordinals ("the 16th") are left as written: no measurement backs a rule for them.

**Words for digits** (``code_digits``). Inside a code said digit by digit Whisper writes
a digit as the word it sounds like: "the card ending 8 to 1-0", "account for nine four
four". There such a word (``DIGIT_SOUNDS``: "to", "too", "for", "fore", "won", "ate", and
"a" for an eight between two digits: "two nine a seven five") is read as its digit, and
only there: in a run of digits and such words (a "dash" inside it too) that follows a
code word ("ending", "number", "account", ...; ``binding.CODE_WORDS``) within three words
and has at least two digits, a sound-alike counts between two of the run's words, or first in
the run right after the code word ("a" never first: it may be a letter); the run's last word
is left as said ("ending 4242 for"). So "2 to 3 business days", "from 9 to 5" and "the
account for 2 months" keep their words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

import numpy as np

from vamos_env.channel.audio import engines
from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.channel.audio.engines import Ear, ReadingScorer, TimedWord
from vamos_env.grading.binding import CODE_WORDS
from vamos_env.speech.vocabulary import DIGIT_SOUNDS, SINGLE_DIGITS, SPOKEN_DIGITS

WINDOW_S = 28.0
GAP_S = 1.0
PRE_ROLL_S = 0.3
POST_ROLL_S = 0.2
LOOP = 8
SKIP_S = 1.0

TimedRecognise = Callable[[Audio], list[TimedWord]]
_EDGES = ".,;:!?"
_GOES_ON = re.compile(r"[,;:\-]\s*$")  # a word that ends so leaves its sentence unfinished

TEEN_MARGIN_NATS = 1.0
_TEN_OF = {f"1{d}": f"{d}0" for d in "3456789"}  # "15" -> "50"
_TEEN_OF = {ten: teen for teen, ten in _TEN_OF.items()}
# A run of digits (with thousands commas) not followed by an ordinal's letters.
_DIGITS = re.compile(r"\d[\d,]*(?![\d,]*(?:st|nd|rd|th)\b)")
SCORED_S = 30.0  # what the scorer reads of a clip (Whisper's window)
SECOND_MARGIN_NATS = 1.0
JOIN_WORDS = 2


def teen_ten_pairs(text: str) -> list[tuple[int, int, str, str]]:
    """Each run of digits in ``text`` that ends in a teen or a ten, as (start, end, teen
    form, ten form): "$250.28" -> [(1, 4, "215", "250")]."""
    pairs = []
    for found in _DIGITS.finditer(text):
        run = found.group(0).rstrip(",")
        last = run[-2:]
        if last in _TEN_OF:
            teen, ten = run, run[:-2] + _TEN_OF[last]
        elif last in _TEEN_OF:
            teen, ten = run[:-2] + _TEEN_OF[last], run
        else:
            continue
        pairs.append((found.start(), found.start() + len(run), teen, ten))
    return pairs


def settle_teens(
    words: list[TimedWord], scorer: ReadingScorer, margin: float = TEEN_MARGIN_NATS
) -> list[TimedWord]:
    """``words`` with each teen-or-ten number read as the audio (``scorer``'s clip) says
    (see the module docstring)."""
    settled = list(words)
    for index, word in enumerate(words):
        if word.end_s > SCORED_S:
            break
        for start, end, teen, ten in reversed(teen_ten_pairs(word.text)):
            readings = {}
            for form in (teen, ten):
                text = settled[index].text
                changed = replace(settled[index], text=text[:start] + form + text[end:])
                readings[form] = [*settled[:index], changed, *settled[index + 1 :]]
            scores = {
                form: scorer.score("".join(w.text for w in reading))
                for form, reading in readings.items()
            }
            chosen = teen if scores[teen] >= scores[ten] - margin else ten
            settled = readings[chosen]
    return settled


@dataclass(frozen=True)
class GradingEar:
    """The grader's recogniser: ``engines.transcribe_timed`` with ``ear``, its numbers'
    teens and tens settled by the audio (module docstring)."""

    ear: Ear = "whisper-tiny.en"
    margin: float = TEEN_MARGIN_NATS

    def __call__(self, audio: Audio) -> list[TimedWord]:
        words = engines.transcribe_timed(audio, self.ear)
        if not any(teen_ten_pairs(w.text) for w in words):
            return words
        return settle_teens(words, self.scorer(audio), self.margin)

    def scorer(self, clip: Audio) -> ReadingScorer:
        """Scores readings of ``clip`` by this ear's model."""
        return ReadingScorer(engines._model(self.ear), np.asarray(clip, dtype=np.float32))


@dataclass(frozen=True)
class Word:
    """A word the agent said, on the call's clock (seconds)."""

    start_s: float
    end_s: float
    text: str


@dataclass(frozen=True)
class _Clip:
    stretch: int  # index into the stretches
    start: int  # call sample of the clip's first sample
    end: int
    offset: int  # its first sample within the window


def _clips(stretches: Sequence[tuple[int, int]], length: int) -> list[_Clip]:
    """Each stretch with its roll, the roll cut short where it would reach a neighbour."""
    pre, post = round(PRE_ROLL_S * RATE), round(POST_ROLL_S * RATE)
    clips = []
    for index, (start, end) in enumerate(stretches):
        before = stretches[index - 1][1] if index else 0
        after = stretches[index + 1][0] if index + 1 < len(stretches) else length
        a = max(start - pre, min(before, start), 0)
        b = min(end + post, max(after, end), length)
        clips.append(_Clip(index, a, b, 0))
    return clips


def _windows(clips: list[_Clip]) -> list[list[_Clip]]:
    """Consecutive clips packed into windows of at most ``WINDOW_S`` of audio."""
    limit, gap = round(WINDOW_S * RATE), round(GAP_S * RATE)
    windows: list[list[_Clip]] = []
    used = limit + 1
    for clip in clips:
        size = clip.end - clip.start
        if windows and used + gap + size <= limit:
            windows[-1].append(_Clip(clip.stretch, clip.start, clip.end, used + gap))
            used += gap + size
        else:
            windows.append([_Clip(clip.stretch, clip.start, clip.end, 0)])
            used = size
    return windows


def stretch_words(
    tape: Callable[[int, int], Audio],
    stretches: Sequence[tuple[int, int]],
    length: int,
    recognise: TimedRecognise,
    scorer: Callable[[Audio], ReadingScorer] | None = None,
) -> list[list[Word]]:
    """The recognised words of each stretch (call samples ``[start, end)``, in order, not
    overlapping) of the recording ``tape(a, b)`` of ``length`` samples. With ``scorer``
    (a reading scorer for a clip), each packed stretch that holds a figure gets a second
    reading alone (``second_opinion``)."""
    words: list[list[Word]] = [[] for _ in stretches]
    for packed in _windows(_clips(stretches, length)):
        heard = _recognised(tape, packed, recognise)
        if len(packed) > 1 and (_looped(heard) or _skipped(packed, heard)):
            # Whisper fell into a loop ("10, 10, 10, ...") or skipped speech: each stretch
            # is read alone.
            for clip in packed:
                alone = [_Clip(clip.stretch, clip.start, clip.end, 0)]
                _assign(alone, _recognised(tape, alone, recognise), words)
            continue
        _assign(packed, heard, words)
        if scorer is None or len(packed) == 1:
            continue
        for clip in packed:
            said = words[clip.stretch]
            if not any(_figure(_key(w.text)) for w in said):
                continue
            audio = tape(clip.start, clip.end)
            judge = _Judge(scorer, audio)
            words[clip.stretch] = second_opinion(audio, clip.start / RATE, said, recognise, judge)
    return words


class _Judge:
    """A scorer for one clip, made when first asked (most stretches need none)."""

    def __init__(self, scorer: Callable[[Audio], ReadingScorer], clip: Audio) -> None:
        self._make, self._clip = scorer, clip
        self._scorer: ReadingScorer | None = None

    def score(self, text: str) -> float:
        if self._scorer is None:
            self._scorer = self._make(np.asarray(self._clip, dtype=np.float32))
        return self._scorer.score(text)


def _key(text: str) -> str:
    """A word as compared between two readings: lower case, no edge punctuation, digit
    words as digits, no separators inside a number ("Zero," -> "0", "8-2-1-0" -> "8210")."""
    bare = text.strip().strip(_EDGES + "\"'").lower()
    bare = SPOKEN_DIGITS.get(bare, bare)
    return re.sub(r"(?<=\d)[,-](?=\d)", "", bare)


def _figure(key: str) -> bool:
    return any(c.isdigit() for c in key)


def _differences(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]]:
    """Where word lists ``a`` and ``b`` differ, as ``a[i1:i2]`` against ``b[j1:j2]``; two
    differences at most ``JOIN_WORDS`` words apart are one (Whisper writes "$0.89" as two
    words, "$0" and ".89": "9.89 cents" differs from it before and after the ".89")."""
    spans: list[tuple[int, int, int, int]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if spans and i1 - spans[-1][1] <= JOIN_WORDS:
            first = spans.pop()
            i1, j1 = first[0], first[2]
        spans.append((i1, i2, j1, j2))
    return spans


def second_opinion(
    clip: Audio,
    at_s: float,
    packed: list[Word],
    recognise: TimedRecognise,
    judge: _Judge | ReadingScorer,
    margin: float = SECOND_MARGIN_NATS,
) -> list[Word]:
    """A stretch's words (``packed``, read in its window) with each figure the recogniser
    reads otherwise in the stretch alone (``clip``, starting ``at_s`` on the call's clock)
    settled by the stretch's own audio (module docstring, "Second opinions")."""
    alone = [Word(w.start_s + at_s, w.end_s + at_s, w.text) for w in recognise(clip)]
    keys = [_key(w.text) for w in packed], [_key(w.text) for w in alone]
    settled = list(packed)
    for i1, i2, j1, j2 in reversed(_differences(*keys)):
        # A difference at a figure or next to one ("9.89 cents per" against "9.89 and
        # since per": the figure's unit) may change what the grader reads.
        near = keys[0][max(i1 - 1, 0) : i2 + 1] + keys[1][max(j1 - 1, 0) : j2 + 1]
        if not any(map(_figure, near)):
            continue
        if j1 == j2 and i2 == len(packed):
            continue  # the stretch read alone stops early: no evidence about its end
        other = [*settled[:i1], *alone[j1:j2], *settled[i2:]]
        if judge.score(joined(other)) > judge.score(joined(settled)) + margin:
            settled = other
    return settled


def _recognised(
    tape: Callable[[int, int], Audio], window: list[_Clip], recognise: TimedRecognise
) -> list[TimedWord]:
    last = window[-1]
    audio = np.zeros(last.offset + last.end - last.start)
    for clip in window:
        piece = tape(clip.start, clip.end)
        audio[clip.offset : clip.offset + len(piece)] = piece
    return recognise(audio)


def _looped(words: Sequence[TimedWord]) -> bool:
    """Whether the recogniser repeated itself: one word more than ``LOOP`` times in a row
    (no agent says a digit or a word nine times over)."""
    run, previous = 0, None
    for word in words:
        text = word.text.strip(" ,.?!").lower()
        run = run + 1 if text == previous else 1
        previous = text
        if run > LOOP:
            return True
    return False


def _skipped(window: list[_Clip], heard: Sequence[TimedWord]) -> bool:
    """Whether the recogniser skipped speech in a window: a word aligned from before a clip
    more than ``SKIP_S`` into it (it jumped ahead: "cents per" stretched eight seconds to
    "till what ours.", the speech between gone), or a clip of a second or more that no
    word is nearest to (it stopped early)."""
    spans = [(c.offset / RATE, (c.offset + c.end - c.start) / RATE) for c in window]
    if any(w.start_s < a and w.end_s > a + SKIP_S for w in heard for a, _ in spans):
        return True
    nearest = {
        min(range(len(spans)), key=lambda k: max(spans[k][0] - m, m - spans[k][1], 0))
        for m in ((w.start_s + w.end_s) / 2 for w in heard)
    }
    return any(b - a >= 1.0 and k not in nearest for k, (a, b) in enumerate(spans))


def _assign(window: list[_Clip], heard: Sequence[TimedWord], words: list[list[Word]]) -> None:
    """Each word to the clip its middle falls in; a word aligned into the silence between
    two clips to the one before when the word before it ends in a comma (it goes on that
    clip's sentence: Whisper stretches the last word before a silence, "ending zero, zero,
    zero, zero, | two."), else to the nearer one; on the call's clock."""
    previous: tuple[_Clip, str] | None = None
    for word in heard:
        middle = (word.start_s + word.end_s) / 2 * RATE
        clip = min(
            window,
            key=lambda c: max(c.offset - middle, middle - (c.offset + c.end - c.start), 0),
        )
        inside = clip.offset <= middle <= clip.offset + clip.end - clip.start
        if not inside and previous is not None:
            before, text = previous
            if before.offset + before.end - before.start <= middle and _GOES_ON.search(text):
                clip = before
        shift = (clip.start - clip.offset) / RATE
        words[clip.stretch].append(Word(word.start_s + shift, word.end_s + shift, word.text))
        previous = (clip, word.text)


_WORD = re.compile(r"\S+")
_JOINERS = {"dash", "hyphen"}  # "account 4 nine four four dash two nine a seven five"
_INSIDE_ONLY = {"a"}  # "account a 2 ..." may be a spelled letter; "9 a 7" is no word
_CODE_CUES = CODE_WORDS | {"account"}


def _digit_pieces(word: str) -> list[str] | None:
    """The digits of a word said digit by digit ("8", "eight,", "1-0." -> ["1", "0"]), or
    None when the word is anything else."""
    pieces = word.strip(_EDGES).lower().split("-")
    return pieces if all(p in SINGLE_DIGITS for p in pieces) else None


def code_digits(text: str) -> str:
    """``text`` with each word that sounds like a digit and stands for one inside a code
    written as that digit (module docstring): "the card ending 8 to 1-0" -> "the card
    ending 8 2 1-0"; "account for nine four four" -> "account 4 nine four four"."""
    words = list(_WORD.finditer(text))
    bare = [w.group(0).strip(_EDGES).lower() for w in words]
    digits = [_digit_pieces(w.group(0)) is not None for w in words]
    sounds = [b in DIGIT_SOUNDS for b in bare]
    swap: list[int] = []
    i = 0
    while i < len(words):
        if not (digits[i] or sounds[i]):
            i += 1
            continue
        j = i
        while j < len(words) and (digits[j] or sounds[j] or bare[j] in _JOINERS):
            j += 1
        cued = bool(_CODE_CUES & set(bare[max(0, i - 3) : i]))
        if cued and sum(digits[i:j]) >= 2:
            for k in range(i, j - 1):  # a last "to" or "for" goes on the sentence
                first = k == i
                if sounds[k] and not (
                    first and (bare[k] in _INSIDE_ONLY or bare[k - 1] not in _CODE_CUES)
                ):
                    swap.append(k)
        i = j
    out, at = [], 0
    for k in swap:
        word = words[k]
        out.append(text[at : word.start()] + DIGIT_SOUNDS[bare[k]] + word.group(0)[len(bare[k]) :])
        at = word.end()
    return "".join(out) + text[at:]


def joined(words: Sequence[Word]) -> str:
    """Words as text (Whisper's words carry their leading space)."""
    return "".join(w.text for w in words).strip()
