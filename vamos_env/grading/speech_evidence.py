"""Reading a turn's words for the grader: sentences, topic phrases, negation, agreement.

The values themselves (money, dates, digit strings, counts, emails) are found by
``vamos_env.speech.parse``; this module adds what a check needs around them: which
sentence a value sits in, whether a topic phrase is in that sentence, whether a phrase is
negated or asked rather than claimed, and whether a caller's reply is an agreement.
"""

from __future__ import annotations

import re
from typing import Literal

from vamos_env.grading.clauses import NEGATORS, Sentence, sentence_at, sentences
from vamos_env.speech import normalise

__all__ = [
    "NEGATORS",
    "Sentence",
    "agreement",
    "claimed_phrase",
    "has_phrase",
    "phrase_positions",
    "relative_date",
    "sentence_at",
    "sentences",
]

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


def claimed_phrase(sentence: str, phrases: tuple[str, ...] | list[str]) -> str | None:
    """The first of ``phrases`` the text claims: said in a clause that does not negate it
    and is not a question ("Shall I put it through?" claims nothing); see ``clauses``."""
    from vamos_env.grading.claims import phrase_claims

    by_words = {normalise(p): p for p in phrases}
    for claim in phrase_claims(sentence, tuple(phrases)):
        if claim.holds:
            return by_words.get(normalise(claim.said), claim.said)
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
