"""A turn's words as a grader reads them: sentences, clauses, negation scope and questions.

A claim ("the payment went through") and a figure's topic ("$36.82 a month") are read
inside one clause, the way a listener parses them. A clause ends at punctuation inside
a sentence (``, ; : —``, a spaced dash), before a linking word (but, because, so, then,
which, while, although, and, or; "and"/"or" between two number words join a number,
"two hundred and fourteen", so they never split; nor does a comma between two digits
said one by one, "ending zero, zero, two"), and around reassurance or an
elliptical answer ("no worries", "not to worry", "I'm afraid not"), which negate
nothing: "No worries, your payment went through" claims success, and "I'm afraid not:
the payment didn't go through" reports the decline.

Negation is a clause's words before a predicate: not, no, never, nothing, contractions
(didn't, hasn't, wasn't, won't, can't, ... with or without the apostrophe), "failed to",
"unable to", "yet to". An odd number negates, an even number cancels ("it's not that it
didn't go through"). "No" right before a pronoun or article is an interjection ("No, it
went through" heard without its comma), not a negator.

A clause is a question when it starts with an auxiliary or question word ("Shall I
charge ...", "did it go through") or ends a sentence that ends with "?" ("It was
declined, would you like ...?" claims the decline in its first clause; "Your payment went
through, right?" claims success). A clause is conditional when a condition or purpose
word stands in it ("if", "once", "unless", "so that", "in order to", ...), or when it
follows a clause that opens with one ("Once you've paid, it will be recorded"): neither
claims anything yet.

Everything is computed once per text and kept on the speech parser's analysis of that
text (``shared``): the same sentence said again, or read by several checks, the caller
and the gate, is parsed once.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import TypeVar

from vamos_env.speech.numbers import analyse
from vamos_env.speech.tokens import Token
from vamos_env.speech.vocabulary import DIGIT_WORDS, SINGLE_DIGITS

CACHE_SIZE = 8192
R = TypeVar("R")

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# A full stop after these is an abbreviation ("Aug. 29", "Mrs. Park"), not a sentence end.
_ABBREVIATION = re.compile(
    r"\b(mr|mrs|ms|dr|st|no|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.$", re.IGNORECASE
)

NEGATORS = frozenset(
    {
        "not", "no", "never", "nothing", "neither", "nor", "none", "nobody", "cannot",
        "didn't", "doesn't", "don't", "isn't", "wasn't", "weren't", "aren't", "hasn't",
        "haven't", "hadn't", "won't", "wouldn't", "couldn't", "can't", "shouldn't", "mustn't",
        "ain't", "didnt", "doesnt", "dont", "isnt", "wasnt", "werent", "arent", "hasnt",
        "havent", "hadnt", "wouldnt", "couldnt", "cant", "shouldnt", "without",
    }
)  # fmt: skip
# Two-word negators: "failed to go through" is "did not go through".
NEGATOR_PAIRS = frozenset(
    {("failed", "to"), ("fails", "to"), ("unable", "to"), ("yet", "to"), ("no", "longer")}
)
# After these, "no" is an interjection ("No, it went through" without its comma).
_INTERJECTION_NEXT = frozenset(
    {
        "the", "your", "it", "it's", "its", "i", "i'm", "i've", "we", "we've", "you", "you're",
        "that", "that's", "this", "sorry", "thanks", "problem", "worries", "worry", "ma'am",
        "sir", "okay", "ok", "unfortunately", "actually", "wait",
    }
)  # fmt: skip
# Reassurance, and answers that negate a question rather than a predicate: clause breaks.
_BREAK_PHRASES = tuple(
    tuple(p.split())
    for p in (
        "no worries", "no worry", "no problem", "no problems", "not a problem", "not to worry",
        "don't worry", "dont worry", "do not worry", "no need to worry", "nothing to worry about",
        "never mind", "no rush", "no harm done", "no doubt", "not a worry",
        "without any problems", "without a problem", "without any issues", "without any trouble",
        "without a hitch", "i'm afraid not", "im afraid not", "afraid not", "sadly not",
        "unfortunately not", "i'm sorry to say not", "i guess not", "i think not", "of course not",
        "certainly not", "definitely not", "absolutely not", "not at all", "not really",
    )
)  # fmt: skip
_LINK_WORDS = frozenset(
    {"but", "because", "although", "though", "whereas", "however", "which", "while", "then",
     "and", "or", "plus", "meaning", "since"}
)  # fmt: skip
# "so" links clauses only before a new subject ("so the bill was not paid").
_SO_SUBJECTS = frozenset(
    {"the", "your", "it", "it's", "i", "i'm", "i've", "we", "you", "you're", "that", "this",
     "there", "nothing", "no", "they", "he", "she"}
)  # fmt: skip
_CLAUSE_PUNCT = frozenset({",", ";", ":", "(", ")", "—", "–", "…"})
_SENTENCE_PUNCT = frozenset({".", "?", "!"})
_NUMBER_WORDS = frozenset(
    {
        *DIGIT_WORDS, "oh", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
        "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fourty",
        "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million", "a",
        "dollar", "dollars", "cent", "cents", "buck", "bucks",
    }
)  # fmt: skip
_QUESTION_STARTS = frozenset(
    {
        "shall", "should", "would", "could", "can", "may", "do", "does", "did", "is", "are",
        "was", "were", "will", "have", "has", "had", "what", "who", "where", "why", "how",
        "want", "wanna",
    }
)  # fmt: skip
_CONTRASTS = frozenset({"but", "however", "although", "though", "yet"})
_CONSEQUENCES = frozenset({"and", "then", "so"})
_CONDITION_WORDS = frozenset({"if", "once", "unless", "whenever", "suppose", "supposing"})
_CONDITION_PAIRS = frozenset(
    {("so", "that"), ("in", "order"), ("as", "soon"), ("make", "sure"), ("after", "you"),
     ("when", "you"), ("when", "it"), ("after", "it"), ("before", "it"), ("after", "the"),
     ("when", "the"), ("assuming", "you"), ("provided", "you")}
)  # fmt: skip


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


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause: its tokens (words, numerals, symbols; no punctuation) and where it is.

    ``words`` are the tokens' normalised forms; ``text`` is the clause's characters in
    the turn (for evidence). ``sentence`` numbers the clause's sentence in the turn.
    """

    sentence: int
    index: int  # position in the turn's clause list
    tokens: tuple[Token, ...]
    text: str
    question: bool
    conditional: bool

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(t.norm for t in self.tokens)

    @property
    def start(self) -> int:
        return self.tokens[0].start

    @property
    def end(self) -> int:
        return self.tokens[-1].end

    def joined(self) -> str:
        """The words joined by single spaces, for regular-expression forms."""
        return _joined(self.words)[0]

    def word_at(self, offset: int) -> int:
        """The word index holding character ``offset`` of ``joined()``."""
        starts = _joined(self.words)[1]
        return max(0, bisect_right(starts, offset) - 1)

    def negations_before(self, k: int, skip: frozenset[int] = frozenset(), start: int = 0) -> int:
        """How many negators stand before word ``k`` from word ``start`` (words in ``skip``
        are the predicate's)."""
        words = self.words
        count = 0
        i = start
        while i < k:
            if i in skip:
                i += 1
                continue
            w = words[i]
            if i + 1 < k and (w, words[i + 1]) in NEGATOR_PAIRS and i + 1 not in skip:
                count += 1
                i += 2
                continue
            if w == "no" and i + 1 < len(words) and words[i + 1] in _INTERJECTION_NEXT:
                i += 1
                continue
            if w in NEGATORS:
                count += 1
            i += 1
        return count


@lru_cache(maxsize=CACHE_SIZE)
def _joined(words: tuple[str, ...]) -> tuple[str, list[int]]:
    starts: list[int] = []
    position = 0
    for w in words:
        starts.append(position)
        position += len(w) + 1
    return " ".join(words), starts


def shared(text: str, key: object, compute: Callable[[], R]) -> R:
    """``compute()`` once per text and key, kept on the speech parser's analysis of the text:
    the caller, the gate and the checks share one parse, and clearing the parser's cache
    clears these with it."""
    return analyse(text).remember(key, compute)


def clauses(text: str) -> tuple[Clause, ...]:
    """The clauses of a turn's text, in order."""
    return shared(text, "grading.clauses", lambda: _clauses(text))


def _clauses(text: str) -> tuple[Clause, ...]:
    out: list[Clause] = []
    every = analyse(text).tokens  # the parser's tokens of the whole text, shared
    k = 0
    for number, sentence in enumerate(sentences(text)):
        while k < len(every) and every[k].start < sentence.start:
            k += 1
        tokens = []
        while k < len(every) and every[k].start < sentence.end:
            tokens.append(every[k])
            k += 1
        asks = sentence.text.rstrip().endswith("?")
        pieces = _split(tokens)
        # "If it goes through, the bill will be paid": the condition reaches the rest of
        # the sentence until "but"; any condition reaches a clause joined to it by "and",
        # "then" or "so" ("call back after you pay and we'll record it").
        leading_condition = False
        previous_conditional = False
        for n, piece in enumerate(pieces):
            question = piece[0].norm in _QUESTION_STARTS or (asks and n == len(pieces) - 1)
            words = [t.norm for t in piece]
            if words[0] in _CONTRASTS:
                leading_condition = False
            conditional = _conditional(words) or (
                previous_conditional and words[0] in _CONSEQUENCES
            )
            previous_conditional = conditional
            out.append(
                Clause(
                    sentence=number,
                    index=len(out),
                    tokens=tuple(piece),
                    text=text[piece[0].start : piece[-1].end],
                    question=question,
                    conditional=conditional or leading_condition,
                )
            )
            leading_condition = leading_condition or _opens_with_condition(words)
    return tuple(out)


def _opens_with_condition(words: list[str]) -> bool:
    return words[0] in _CONDITION_WORDS or tuple(words[:2]) in _CONDITION_PAIRS


def _conditional(words: list[str]) -> bool:
    if any(w in _CONDITION_WORDS for w in words):
        return True
    return any((a, b) in _CONDITION_PAIRS for a, b in pairwise(words))


def _split(tokens: list[Token]) -> list[list[Token]]:
    """Cut a sentence's tokens into clauses (see the module docstring)."""
    pieces: list[list[Token]] = []
    current: list[Token] = []

    def close() -> None:
        nonlocal current
        if current:
            pieces.append(current)
        current = []

    i = 0
    n = len(tokens)
    while i < n:
        token = tokens[i]
        if token.kind == "punct":
            if (token.norm in _CLAUSE_PUNCT or token.norm in _SENTENCE_PUNCT) and not (
                token.norm == "," and (_dollars_then_cents(tokens, i) or _digit_by_digit(tokens, i))
            ):
                close()
            i += 1
            continue
        if token.norm == "dash" and token.kind == "sym" and _spaced(tokens, i):
            close()
            i += 1
            continue
        size = _break_phrase_at(tokens, i)
        if size:
            close()
            i += size
            continue
        word = token.norm
        if word in _LINK_WORDS and current and not _joins_numbers(tokens, i):
            close()
            current.append(token)  # the link word opens the next clause
            i += 1
            continue
        if word == "so" and current and i + 1 < n and tokens[i + 1].norm in _SO_SUBJECTS:
            close()
        current.append(token)
        i += 1
    close()
    return pieces


def _dollars_then_cents(tokens: list[Token], i: int) -> bool:
    """ "thirty-seven dollars, twenty-three cents": one amount, so one clause."""
    if i == 0 or tokens[i - 1].norm not in ("dollars", "dollar", "bucks"):
        return False
    return any(t.norm in ("cents", "cent") for t in tokens[i + 1 : i + 6])


def _digit_by_digit(tokens: list[Token], i: int) -> bool:
    """ "the card ending zero, zero, zero, two" (a recogniser's commas between digits read
    one by one): one code, so one clause."""
    return 0 < i < len(tokens) - 1 and {tokens[i - 1].norm, tokens[i + 1].norm} <= SINGLE_DIGITS


def _spaced(tokens: list[Token], i: int) -> bool:
    """A dash with space on both sides separates clauses; "4417-90781" keeps its dash."""
    before = tokens[i - 1].end if i > 0 else -1
    after = tokens[i + 1].start if i + 1 < len(tokens) else tokens[i].end + 1
    return before < tokens[i].start and tokens[i].end < after


_BREAKS_BY_FIRST: dict[str, tuple[tuple[str, ...], ...]] = {}
for _phrase in sorted(_BREAK_PHRASES, key=len, reverse=True):
    _BREAKS_BY_FIRST[_phrase[0]] = (*_BREAKS_BY_FIRST.get(_phrase[0], ()), _phrase)


def _break_phrase_at(tokens: list[Token], i: int) -> int:
    for phrase in _BREAKS_BY_FIRST.get(tokens[i].norm, ()):
        size = len(phrase)
        if i + size <= len(tokens) and all(tokens[i + k].norm == phrase[k] for k in range(size)):
            return size
    return 0


def _joins_numbers(tokens: list[Token], i: int) -> bool:
    """ "two hundred and fourteen", "sixty-five dollars and fifty-two cents": one number."""
    if tokens[i].norm not in ("and", "or", "plus"):
        return False
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if before is None or after is None:
        return False

    def numeric(t: Token) -> bool:
        return t.kind == "num" or t.norm in _NUMBER_WORDS or t.norm == "$"

    return numeric(before) and numeric(after)


_WORD_BOUNDARY = r"(?<![\w'$])(?:{})(?![\w'])"


@lru_cache(maxsize=1024)
def compile_forms(forms: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for a predicate's forms (regular expressions over a clause's words)."""
    return re.compile(_WORD_BOUNDARY.format("|".join(f"(?:{f})" for f in forms)))
