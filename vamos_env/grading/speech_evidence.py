"""Reading a turn's words for the grader: sentences, topic phrases, negation, agreement.

The values themselves (money, dates, digit strings, counts, emails) are found by
``vamos_env.speech.parse``; this module adds what a check needs around them: which
sentence a value sits in, whether a topic phrase is in that sentence, whether a phrase is
negated or asked rather than claimed, and whether a caller's reply is an agreement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from vamos_env.speech import normalise

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# A full stop after these is an abbreviation ("Aug. 29", "Mrs. Park"), not a sentence end.
_ABBREVIATION = re.compile(
    r"\b(mr|mrs|ms|dr|st|no|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.$", re.IGNORECASE
)

# Words that turn a claim into its opposite when they come shortly before it.
NEGATORS = frozenset(
    {
        "not", "no", "never", "nothing", "neither", "nor", "unable", "failed", "without",
        "didn't", "doesn't", "don't", "isn't", "wasn't", "weren't", "aren't", "hasn't",
        "haven't", "hadn't", "won't", "wouldn't", "couldn't", "can't", "cannot", "shouldn't",
    }
)  # fmt: skip
_NEGATION_REACH = 4  # words before a phrase that can negate it

_AGREE_WORDS = frozenset(
    {"yes", "yeah", "yep", "yup", "sure", "absolutely", "definitely", "agreed", "uh-huh", "mm-hmm"}
)
# Agreement only when nothing in the reply refuses ("No, that's not right" is a refusal).
_WEAK_AGREE_WORDS = frozenset({"correct", "okay", "ok", "perfect", "right", "fine", "great"})
_AGREE_PHRASES = (
    "go ahead",
    "please do",
    "do it",
    "sounds good",
    "that works",
    "i agree",
    "let's do",
    "lets do",
    "that's it",
    "that is it",
    "that's the one",
    "that's me",
    "that's mine",
    "set it up",
    "turn it on",
    "put it through",
    "go for it",
    "that's fine",
)
_REFUSE_WORDS = frozenset(
    {"no", "nope", "nah", "wrong", "incorrect", "wait", "stop", "don't", "not", "isn't",
     "cancel", "never"}
)  # fmt: skip
_REFUSE_PHRASES = (
    "hold on",
    "hang on",
    "that's not",
    "not right",
    "not correct",
    "changed my mind",
)
# "no" that does not refuse anything.
_HARMLESS_NO = ("no problem", "no worries", "no rush", "no thanks needed")

Agreement = Literal["agree", "refuse", "mixed", "none"]


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    start: int  # offset into the turn's text
    end: int


def sentences(text: str) -> list[Sentence]:
    out: list[Sentence] = []
    position = 0
    for piece in _SENTENCE_END.split(text):
        start = text.find(piece, position) if piece else position
        if piece.strip():
            if out and _ABBREVIATION.search(out[-1].text):
                joined = out.pop()
                out.append(Sentence(text[joined.start : start + len(piece)], joined.start,
                                    start + len(piece)))  # fmt: skip
            else:
                out.append(Sentence(piece, start, start + len(piece)))
        position = start + len(piece)
    return out


def sentence_at(text: str, offset: int) -> tuple[int, list[Sentence]]:
    """The index of the sentence holding character ``offset``, and all the sentences."""
    parts = sentences(text)
    for i, part in enumerate(parts):
        if part.start <= offset < max(part.end, part.start + 1):
            return i, parts
    return max(0, len(parts) - 1), parts


def _words(text: str) -> list[str]:
    return normalise(text).split()


def phrase_positions(text: str, phrase: str) -> list[int]:
    """Word positions where ``phrase`` (normalised) starts in ``text`` (normalised)."""
    words, target = _words(text), _words(phrase)
    if not target:
        return []
    size = len(target)
    return [k for k in range(len(words) - size + 1) if words[k : k + size] == target]


def has_phrase(text: str, phrases: tuple[str, ...] | list[str]) -> str | None:
    """The first of ``phrases`` said in ``text``, or None."""
    for phrase in phrases:
        if phrase_positions(text, phrase):
            return phrase
    return None


def claimed_phrase(
    sentence: str, phrases: tuple[str, ...] | list[str], *, questions_claim: bool = False
) -> str | None:
    """The first phrase the sentence claims: said and not negated just before it. A question
    ("Shall I put it through?") claims nothing unless ``questions_claim``."""
    if not questions_claim and sentence.rstrip().endswith("?"):
        return None
    words = _words(sentence)
    for phrase in phrases:
        for k in phrase_positions(sentence, phrase):
            before = words[max(0, k - _NEGATION_REACH) : k]
            if not any(w in NEGATORS for w in before):
                return phrase
    return None


def agreement(text: str, extra: tuple[str, ...] = ()) -> Agreement:
    """Is a caller's reply an agreement, a refusal, both, or neither?"""
    norm = " " + normalise(text) + " "
    for harmless in _HARMLESS_NO:
        norm = norm.replace(f" {harmless} ", " ")
    refuses = False
    for phrase in _REFUSE_PHRASES:  # "that's not right" must not count its "right"
        if f" {phrase} " in norm:
            refuses = True
            norm = norm.replace(f" {phrase} ", " ")
    words = set(norm.split())
    refuses = refuses or bool(words & _REFUSE_WORDS)
    agrees = bool(words & _AGREE_WORDS) or any(f" {p} " in norm for p in (*_AGREE_PHRASES, *extra))
    agrees = agrees or (not refuses and bool(words & _WEAK_AGREE_WORDS))
    if agrees and refuses:
        return "mixed"
    if agrees:
        return "agree"
    return "refuse" if refuses else "none"


_RELATIVE_DATE = re.compile(
    r"\b(tomorrow|today|tonight|next (week|month|year|monday|tuesday|wednesday|thursday|friday)"
    r"|in (a|an|one|two|three|four|five|six|seven|ten|fourteen|fifteen|thirty|\d+) "
    r"(more )?(days?|weeks?|months?)"
    r"|(a|an|one|two|three|\w+) (days?|weeks?|months?) from (now|today))\b"
)


def relative_date(text: str) -> str | None:
    """A date said relative to today ("in thirty days"), which the parser does not resolve."""
    found = _RELATIVE_DATE.search(normalise(text))
    return found.group(0) if found else None
