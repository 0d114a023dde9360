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
word back to the stretch its time falls in, on the call's clock. A stretch longer than a
window is recognised alone (Whisper then reads it window by window), and so is each
stretch of a window the recogniser looped on ("10, 10, 10, ...").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.channel.audio.engines import TimedWord

WINDOW_S = 28.0
GAP_S = 1.0
PRE_ROLL_S = 0.3
POST_ROLL_S = 0.2
LOOP = 8

TimedRecognise = Callable[[Audio], list[TimedWord]]


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
) -> list[list[Word]]:
    """The recognised words of each stretch (call samples ``[start, end)``, in order, not
    overlapping) of the recording ``tape(a, b)`` of ``length`` samples."""
    words: list[list[Word]] = [[] for _ in stretches]
    for packed in _windows(_clips(stretches, length)):
        heard = _recognised(tape, packed, recognise)
        if len(packed) > 1 and _looped(heard):
            # Whisper fell into a loop ("10, 10, 10, ..."): each stretch is read alone.
            for clip in packed:
                alone = [_Clip(clip.stretch, clip.start, clip.end, 0)]
                _assign(alone, _recognised(tape, alone, recognise), words)
        else:
            _assign(packed, heard, words)
    return words


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


def _assign(window: list[_Clip], heard: Sequence[TimedWord], words: list[list[Word]]) -> None:
    """Each word to the clip its middle falls in (or nearest to: a word aligned into the
    silence between two clips belongs to the closer one), on the call's clock."""
    for word in heard:
        middle = (word.start_s + word.end_s) / 2 * RATE
        clip = min(
            window,
            key=lambda c: max(c.offset - middle, middle - (c.offset + c.end - c.start), 0),
        )
        shift = (clip.start - clip.offset) / RATE
        words[clip.stretch].append(Word(word.start_s + shift, word.end_s + shift, word.text))


def joined(words: Sequence[Word]) -> str:
    """Words as text (Whisper's words carry their leading space)."""
    return "".join(w.text for w in words).strip()
