"""Recognition errors in the caller's words, and the word error rate that measures them.

A caller turn is treated as a recogniser's transcript: words as written, codes
(account numbers, postal codes, card digits) as numerals, an email as one word.
The model works word by word:

- an ordinary word is misrecognised with the condition's word error rate times
  its class's weight (``ClassWeights``, measured: a recogniser misses "Novak" far
  more often than "the"); the error is a substitution (one of the replacements
  measured for that word in the parameter file's ``confusions`` table, else a
  similar-sounding word from ``CONFUSABLE``, a neighbouring digit inside a
  numeral, otherwise a one-vowel slip, the way recognisers misspell names and
  rare words), a deletion, or an inserted filler before it;
- a code is read digit by digit, so each digit is its own word (with the code
  class's weight): it is dropped or
  misheard (the measured ``confusions.digits`` where the file has them, else
  ``DIGIT_CONFUSIONS``), which is how a correct account number turns into a failed
  verification;
- an email address is mangled as a whole, in the ways recognisers do it (dots
  lost, letters slipped, the spoken form written out).

``word_errors`` aligns a reference with a hypothesis (Levenshtein over the same
tokens: code digits one by one, an email as one token) so the figures in the
parameter file and the audio channel's measurements mean the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import numpy as np

from vamos_env.channel.parameters import (
    NO_CONFUSIONS,
    NO_WEIGHTS,
    ClassWeights,
    Condition,
    Confusions,
)

# Similar-sounding words a recogniser swaps (both directions). Our own list.
_PAIRS = (
    ("hold", "cold"),
    ("zip", "lip"),
    ("bill", "bell"),
    ("pay", "play"),
    ("paid", "played"),
    ("due", "do"),
    ("four", "for"),
    ("two", "to"),
    ("eight", "ate"),
    ("card", "car"),
    ("code", "coat"),
    ("meter", "metre"),
    ("plan", "plane"),
    ("month", "mouth"),
    ("monthly", "mostly"),
    ("balance", "ballots"),
    ("owe", "oh"),
    ("paperless", "paper less"),
    ("email", "a mail"),
    ("account", "a count"),
    ("postal", "portal"),
    ("name", "nine"),
    ("last", "lost"),
    ("yes", "yet"),
    ("no", "now"),
    ("right", "write"),
    ("arrangement", "arraignment"),
    ("extension", "attention"),
    ("supplier", "surprise"),
    ("cents", "sense"),
    ("dollars", "doll hers"),
)
CONFUSABLE: dict[str, str] = {a: b for a, b in _PAIRS} | {b: a for a, b in _PAIRS if " " not in b}
# Spoken digits that sound alike: five/nine share a vowel, six/seven an onset, ...
DIGIT_CONFUSIONS: dict[str, str] = {
    "0": "4",
    "1": "9",
    "2": "3",
    "3": "2",
    "4": "0",
    "5": "9",
    "6": "7",
    "7": "6",
    "8": "6",
    "9": "5",
}
FILLERS = ("uh", "um", "the", "and", "a", "so")
_VOWELS = "aeiou"

_CODE = re.compile(r"^\d[\d-]*\d$")
_EDGE_PUNCT = re.compile(r"^([\"'(]*)(.*?)([\"'),.;:!?]*)$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$")


def _split_punct(word: str) -> tuple[str, str, str]:
    match = _EDGE_PUNCT.match(word)
    assert match is not None  # the pattern matches any string
    return match.group(1), match.group(2), match.group(3)


def is_code(core: str) -> bool:
    """A numeral read digit by digit: three or more digits, dashes allowed, no decimal point."""
    return bool(_CODE.match(core)) and sum(c.isdigit() for c in core) >= 3


WordClass = Literal["name", "number", "code", "email", "other"]
# The classes the parameter file weights (an email has its own rate).
WEIGHTED_CLASSES: tuple[WordClass, ...] = ("name", "number", "code", "other")
_PRONOUN_I = frozenset({"i", "i'd", "i'm", "i'll", "i've"})


def word_class(core: str, sentence_start: bool) -> WordClass:
    """What kind of word a recogniser sees: a name (capitalised mid-sentence), a number..."""
    if _EMAIL.match(core):
        return "email"
    if is_code(core):
        return "code"
    if any(ch.isdigit() for ch in core):
        return "number"
    if core[:1].isupper() and not sentence_start and core.lower() not in _PRONOUN_I:
        return "name"
    return "other"


def _ends_sentence(word: str) -> bool:
    return word.rstrip("\"')").endswith((".", "?", "!"))


def token_classes(text: str) -> list[WordClass]:
    """The class of each token ``tokens(text)`` gives, in the same order."""
    out: list[WordClass] = []
    start = True
    for word in text.split():
        _, core, _ = _split_punct(word)
        if core:
            kind = word_class(core, start)
            out.extend([kind] * sum(c.isdigit() for c in core) if kind == "code" else [kind])
        start = _ends_sentence(word)
    return out


def tokens(text: str) -> list[str]:
    """The words a word error rate counts: lower case, edge punctuation off, codes as digits."""
    out: list[str] = []
    for word in text.split():
        _, core, _ = _split_punct(word.lower())
        if not core:
            continue
        if is_code(core):
            out.extend(c for c in core if c.isdigit())
        else:
            out.append(core)
    return out


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(substitutions + deletions + insertions, reference words) by Levenshtein alignment."""
    ref = tokens(reference)
    hyp = tokens(hypothesis)
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        current = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, start=1):
            current[j] = min(
                previous[j] + 1,  # deletion
                current[j - 1] + 1,  # insertion
                previous[j - 1] + (r != h),  # match or substitution
            )
        previous = current
    return previous[-1], len(ref)


def word_error_rate(pairs: Sequence[tuple[str, str]]) -> float:
    """Pooled word error rate over (reference, hypothesis) pairs."""
    errors = words = 0
    for reference, hypothesis in pairs:
        e, n = word_errors(reference, hypothesis)
        errors += e
        words += n
    return errors / words if words else 0.0


def _with_case(original: str, replacement: str) -> str:
    return replacement.capitalize() if original[:1].isupper() else replacement


def repetition_loop(reference: str, hypothesis: str) -> tuple[int, int]:
    """(extra copies, extra words) of the biggest loop in ``hypothesis``; (0, 0) if none.

    A loop is a phrase of 2-6 words written twice or more in a row, or one word
    three times or more, more often than the reference says it: how Whisper loops
    on a segment it cannot place. The biggest is the one adding the most words.
    """
    hyp, ref = tokens(hypothesis), tokens(reference)
    best = (0, 0)
    for size in range(6, 0, -1):
        need = 2 if size > 1 else 3
        for start in range(len(hyp) - size * need + 1):
            phrase = hyp[start : start + size]
            copies = 1
            while hyp[start + copies * size : start + (copies + 1) * size] == phrase:
                copies += 1
            extra = copies - max(1, _copies_in(ref, phrase))
            if copies >= need and extra > 0 and extra * size > best[1]:
                best = (extra, extra * size)
    return best


def _copies_in(words: list[str], phrase: list[str]) -> int:
    """The most back-to-back copies of ``phrase`` in ``words``."""
    size, most = len(phrase), 0
    for start in range(len(words) - size + 1):
        copies = 0
        while words[start + copies * size : start + (copies + 1) * size] == phrase:
            copies += 1
        most = max(most, copies)
    return most


class Recogniser:
    """Applies one condition's recognition errors to text, drawing from one generator.

    ``confusions`` are the parameter file's measured substitution tables. Where a
    table has no entry the built-in pairs apply and nothing extra is drawn, so
    empty tables reproduce the built-in model's seeded output exactly.
    ``weights`` scale the word error rate by word class (a recogniser misses
    names and numbers more often than "the"); all 1 is the plain rate.
    """

    def __init__(
        self,
        condition: Condition,
        rng: np.random.Generator,
        confusions: Confusions = NO_CONFUSIONS,
        weights: ClassWeights = NO_WEIGHTS,
    ) -> None:
        self.condition = condition
        self.rng = rng
        self.confusions = confusions
        self.weights = weights

    def rate(self, kind: WordClass) -> float:
        """The chance a word (or a code digit) of this class is misrecognised."""
        if kind == "email":
            return self.condition.email_error_rate
        return min(1.0, self.condition.word_error_rate * getattr(self.weights, kind))

    def transcribe(self, text: str) -> str:
        out: list[str] = []
        start = True
        for word in text.split():
            out.extend(self._word(word, start))
            start = _ends_sentence(word)
        return " ".join(out)

    def _word(self, word: str, sentence_start: bool = False) -> list[str]:
        lead, core, trail = _split_punct(word)
        if not core:
            return [word]
        kind = word_class(core, sentence_start)
        if _EMAIL.match(core):
            if self.rng.random() < self.condition.email_error_rate:
                return [lead + self._mangle_email(core) + trail]
            return [word]
        if is_code(core):
            heard = self._code(core)
            return [lead + heard + trail] if heard else ([trail] if trail else [])
        if self.rng.random() >= self.rate(kind):
            return [word]
        c = self.condition
        error = self.rng.choice(3, p=[c.substitution, c.deletion, c.insertion])
        if error == 0:
            return [lead + self._substitute(core) + trail]
        if error == 1:
            return [lead + trail] if lead + trail else []
        return [str(self.rng.choice(FILLERS)), word]

    def _code(self, core: str) -> str:
        digits: list[str] = []
        for char in core:
            if not char.isdigit():
                continue
            if self.rng.random() >= self.rate("code"):
                digits.append(char)
            elif self.rng.random() >= self.condition.digit_deletion:
                digits.append(self._mishear_digit(char))
        # Keep the caller's grouping where the digits still fill it (4417-90781).
        groups = [len(g) for g in core.split("-")]
        if len(groups) > 1 and len(digits) == sum(groups):
            parts, at = [], 0
            for size in groups:
                parts.append("".join(digits[at : at + size]))
                at += size
            return "-".join(parts)
        return "".join(digits)

    def _mishear_digit(self, digit: str) -> str:
        observed = self.confusions.digits.get(digit)
        if observed:
            return observed[int(self.rng.integers(len(observed)))]
        return DIGIT_CONFUSIONS[digit]

    def _substitute(self, core: str) -> str:
        lower = core.lower()
        observed = self.confusions.words.get(lower)
        if observed:
            return _with_case(core, observed[int(self.rng.integers(len(observed)))])
        if lower in CONFUSABLE:
            return _with_case(core, CONFUSABLE[lower])
        positions = [i for i, ch in enumerate(core) if ch.isdigit()]
        if positions:
            i = int(self.rng.choice(positions))
            return core[:i] + self._mishear_digit(core[i]) + core[i + 1 :]
        vowels = [i for i, ch in enumerate(lower) if ch in _VOWELS]
        if not vowels:
            return core + "s"
        i = int(self.rng.choice(vowels))
        others = [v for v in _VOWELS if v != lower[i]]
        return core[:i] + str(self.rng.choice(others)) + core[i + 1 :]

    def _mangle_email(self, email: str) -> str:
        local, domain = email.split("@", 1)
        way = int(self.rng.integers(4))
        if way == 0 and "." in local:  # the dot in the name is lost
            return local.replace(".", "", 1) + "@" + domain
        if way == 1:  # a letter of the name slips
            return self._substitute(local) + "@" + domain
        if way == 2:  # the top-level domain is misheard
            stem, _, tld = domain.rpartition(".")
            return (
                local
                + "@"
                + stem
                + "."
                + {"com": "con", "net": "nat", "org": "ork"}.get(tld, tld + "s")
            )
        # The spoken form written out as one run: "dana.whitfield@..." -> "danadotwhitfield@...".
        return local.replace(".", "dot") + "at" + domain
