"""Number phrases in heard text: the grammar of English number words.

``analyse(text)`` splits a text into tokens and "atoms": each atom is one
number as a listener would group it. Words are joined greedily while they
still form one valid English number, so adjacent numbers stay apart the way a
listener hears them:

- "sixty five fifty two" -> 65 | 52 (a tens word cannot follow a units word);
- "four four one seven" -> 4 | 4 | 1 | 7;
- "twenty twenty six" -> 20 | 26;
- "two hundred and fourteen", "twelve hundred", "a thousand" -> 214, 1200, 1000;
- "twenty first", "one hundredth" -> ordinals 21, 100;
- "twelve point five" -> the decimal 12.5; "sixty-five point fifty-two" -> 65.52
  (a fraction said as one two-digit group, as people say prices).

"oh" is a zero digit only next to another number ("two fourteen oh seven"),
never on its own ("Oh, okay"); "double four" is the digit string "44".

Atoms are the lexical layer: they never decide what a number *is* (money, a
year, a code); the finders in ``money``, ``dates`` and ``parse`` do, from the
atoms and the words around them.

The analysis is cached per text (a bounded LRU), and every finder keeps its
result on the analysis (``Analysis.memo``): the caller, the gate and the checks
run the same finders over the same utterance, so each text is parsed once per
process, and clearing ``analyse``'s cache clears every finder's result with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, TypeVar

from vamos_env.speech.tokens import Token, tokenize
from vamos_env.speech.vocabulary import (
    DIGIT_WORDS,
    HEARD_TENS,
    ORDINAL_TO_CARDINAL,
    SCALES,
    TEENS,
    UNITS,
)

AtomKind = Literal["cardinal", "numeral", "decimal", "ordinal", "oh", "repeat"]

_ARTICLES = frozenset({"a", "an"})
_NUMBER_WORDS = frozenset(
    {*UNITS, *TEENS, *HEARD_TENS, *SCALES, "zero", "hundred", "and", *_ARTICLES}
)
# Words that can start a number phrase (cardinal or ordinal); a quick filter.
_STARTERS = frozenset({*UNITS, *TEENS, *HEARD_TENS, "zero", *_ARTICLES, *ORDINAL_TO_CARDINAL})
_DIGIT_VALUES = {word: value for value, word in enumerate(DIGIT_WORDS)} | {"oh": 0}
_REPEATS = {"double": 2, "triple": 3}
_ORDINAL_REACH = 24  # the longest ordinal below 10**12 is 19 words (23 with "and")
# Texts kept analysed: a call has a few hundred turns and sentences; the grader,
# the caller and the gate each see them all. Bounded so a long run stays flat.
CACHE_SIZE = 4096

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Atom:
    """One number as heard, spanning tokens ``first`` to ``last`` (exclusive)."""

    kind: AtomKind
    value: int  # the number; for "decimal" the whole part, for "repeat" int(digits)
    digits: str  # its digits as said: "0781" keeps the zero, "44" for "double four"
    first: int
    last: int
    single_word: bool  # said as one word ("seven", "fifty"), as digits are in codes
    # For a cardinal that took a British "and" before its last part ("one hundred
    # and fifty"): that part (50). A listener may hear the "and" as the one between
    # dollars and cents instead ("one hundred and fifty cents": $1.50 or $100.50).
    and_tail: int = 0


class Analysis:
    """A text's tokens, its atoms (found when first asked for) and every finder's result."""

    __slots__ = ("_atoms", "_ending", "_starting", "memo", "norms", "text", "tokens")

    def __init__(self, text: str, tokens: tuple[Token, ...]) -> None:
        self.text = text
        self.tokens = tokens
        self.norms: tuple[str, ...] = tuple(t.norm for t in tokens)  # for hot loops
        # Each finder's result for this text, keyed by the finder and its options.
        self.memo: dict[object, object] = {}
        self._atoms: tuple[Atom, ...] | None = None
        self._starting: dict[int, int] = {}
        self._ending: dict[int, int] = {}

    @property
    def atoms(self) -> tuple[Atom, ...]:
        if self._atoms is None:
            self._atoms = _atoms(self.tokens)
            self._starting = {atom.first: k for k, atom in enumerate(self._atoms)}
            self._ending = {atom.last: k for k, atom in enumerate(self._atoms)}
        return self._atoms

    @property
    def atom_starting(self) -> dict[int, int]:
        """Token index -> index into ``atoms`` of the atom starting there."""
        if self._atoms is None:
            self.atoms  # noqa: B018 - builds the index
        return self._starting

    def remember(self, key: object, compute: Callable[[], R]) -> R:
        """``compute()``, once per text and key: the finders share one parse of a text."""
        try:
            return self.memo[key]  # type: ignore[return-value]
        except KeyError:
            value = self.memo[key] = compute()
            return value

    def norm_at(self, k: int) -> str:
        """The normalised token at ``k``, or "" past either end."""
        return self.norms[k] if 0 <= k < len(self.norms) else ""

    def atom_at(self, token_index: int) -> Atom | None:
        """The atom starting at this token."""
        atoms = self.atoms
        k = self._starting.get(token_index)
        return None if k is None else atoms[k]

    def atom_before(self, token_index: int) -> Atom | None:
        """The atom ending just before this token."""
        atoms = self.atoms
        k = self._ending.get(token_index)
        return None if k is None else atoms[k]

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Character span of tokens ``first`` .. ``last - 1``."""
        return self.tokens[first].start, self.tokens[last - 1].end


@lru_cache(maxsize=CACHE_SIZE)
def analyse(text: str) -> Analysis:
    """The analysis of ``text``, shared by every caller in the process (a bounded LRU)."""
    return Analysis(text, tokenize(text))


def normalised(text: str) -> str:
    """``tokens.normalise(text)``, computed once per text with its analysis."""
    a = analyse(text)
    return a.remember("normalise", lambda: " ".join(t.norm for t in a.tokens if t.kind != "punct"))


# Tokens that can begin an atom; every other word is skipped without a look.
_ATOM_WORDS = frozenset({*_STARTERS, "oh", *_REPEATS})


def _atoms(tokens: tuple[Token, ...]) -> tuple[Atom, ...]:
    words = [t.norm if t.kind == "word" else "" for t in tokens]
    atoms: list[Atom] = []
    i = 0
    n = len(tokens)
    while i < n:
        token = tokens[i]
        if (token.kind == "word" and token.norm not in _ATOM_WORDS) or token.kind in _NO_ATOM:
            i += 1
            continue
        atom = _atom_at(tokens, words, i, atoms)
        if atom is None:
            i += 1
            continue
        atoms.append(atom)
        i = atom.last
    return tuple(atoms)


_NO_ATOM = frozenset({"sym", "punct"})


def _atom_at(tokens: tuple[Token, ...], words: list[str], i: int, done: list[Atom]) -> Atom | None:
    token = tokens[i]
    if token.kind == "num":
        if "." in token.norm:
            whole = token.norm.split(".", 1)[0]
            return Atom("decimal", int(whole or "0"), token.norm, i, i + 1, False)
        return Atom("numeral", int(token.norm), token.norm, i, i + 1, False)
    if token.kind == "ordnum":
        return Atom("ordinal", int(token.norm), token.norm, i, i + 1, False)
    word = words[i]
    if word in _STARTERS:
        cardinal = parse_cardinal(words, i)
        spoken_ordinal = _parse_ordinal(words, i)
        if spoken_ordinal and (cardinal is None or spoken_ordinal[1] > cardinal[1]):
            value, end = spoken_ordinal
            return Atom("ordinal", value, str(value), i, end, end == i + 1)
        if cardinal:
            value, end = cardinal
            fraction = _fraction_after(words, end)
            if fraction:
                # "twelve point five": a decimal, so "point five cents" is not five cents.
                last = end + 1 + len(fraction)
                return Atom("decimal", value, f"{value}.{fraction}", i, last, False)
            return Atom(
                "cardinal", value, str(value), i, end, end == i + 1, _and_tail(words, i, end)
            )
        return None
    if word == "oh":
        follows_number = bool(done) and done[-1].last == i
        next_word = words[i + 1] if i + 1 < len(words) else ""
        if follows_number or next_word in _DIGIT_VALUES or next_word in _REPEATS:
            return Atom("oh", 0, "0", i, i + 1, True)
        return None
    if word in _REPEATS and i + 1 < len(words) and words[i + 1] in _DIGIT_VALUES:
        digits = str(_DIGIT_VALUES[words[i + 1]]) * _REPEATS[word]
        return Atom("repeat", int(digits), digits, i, i + 2, False)
    return None


def _fraction_after(words: list[str], i: int) -> str:
    """The digits of "point five two" (or "point fifty-two") at ``words[i]``, or ""."""
    if i >= len(words) or words[i] != "point":
        return ""
    group = _below_hundred(words, i + 1)
    if group is not None and group[0] >= 10:
        return str(group[0])  # "point fifty-two", "point twelve": one two-digit group
    digits = ""
    for word in words[i + 1 :]:
        if word not in _DIGIT_VALUES:
            break
        digits += str(_DIGIT_VALUES[word])
    return digits


def _and_tail(words: list[str], first: int, end: int) -> int:
    """The part after a British "and" that ends the cardinal ``words[first:end]``, or 0."""
    for k in range(end - 2, first, -1):
        if words[k] == "and":
            tail = _below_hundred(words, k + 1)
            return tail[0] if tail is not None and tail[1] == end else 0
    return 0


def _below_hundred(words: list[str], i: int) -> tuple[int, int] | None:
    if i >= len(words):
        return None
    word = words[i]
    if word in HEARD_TENS:
        value = HEARD_TENS[word]
        if i + 1 < len(words) and words[i + 1] in UNITS:
            return value + UNITS[words[i + 1]], i + 2
        return value, i + 1
    if word in TEENS:
        return TEENS[word], i + 1
    if word in UNITS:
        return UNITS[word], i + 1
    return None


def _below_thousand(words: list[str], i: int) -> tuple[int, int] | None:
    """1-999, plus the spoken "twelve hundred" / "twenty-five hundred" (up to 9999)."""
    if i + 1 < len(words) and words[i] in _ARTICLES and words[i + 1] == "hundred":
        value, j = 100, i + 2
    else:
        head = _below_hundred(words, i)
        if head is None:
            return None
        if head[1] >= len(words) or words[head[1]] != "hundred":
            return head
        value, j = head[0] * 100, head[1] + 1
    # British "and" is taken only when a number follows it: "two hundred and fourteen".
    k = j + 1 if j < len(words) and words[j] == "and" else j
    tail = _below_hundred(words, k)
    if tail is not None:
        return value + tail[0], tail[1]
    return value, j


def parse_cardinal(words: list[str], i: int) -> tuple[int, int] | None:
    """The longest valid cardinal starting at ``words[i]``: (value, end index) or None."""
    if i < len(words) and words[i] == "zero":
        return 0, i + 1
    total = 0
    j = i
    smallest_scale: int | None = None
    found = False
    while j < len(words):
        if not found and words[j] in _ARTICLES and j + 1 < len(words) and words[j + 1] in SCALES:
            group: tuple[int, int] | None = (1, j + 1)  # "a thousand", "a million"
        else:
            group = _below_thousand(words, j)
        if group is None:
            break
        value, k = group
        scale = SCALES.get(words[k]) if k < len(words) else None
        if scale and value < 1000 and (smallest_scale is None or scale < smallest_scale):
            total += value * scale
            smallest_scale = scale
            found = True
            j = k + 1
            if j + 1 < len(words) and words[j] == "and" and _below_hundred(words, j + 1):
                j += 1  # "one thousand and five"
            continue
        if smallest_scale is not None and value >= smallest_scale:
            break  # "one thousand twelve hundred" is not one number
        total += value
        found = True
        j = k
        break
    return (total, j) if found else None


def _parse_ordinal(words: list[str], i: int) -> tuple[int, int] | None:
    """ "twenty first" -> (21, i + 2): number words ending in one ordinal word."""
    for k in range(i, min(len(words), i + _ORDINAL_REACH)):
        if words[k] in ORDINAL_TO_CARDINAL:
            break
        if words[k] not in _NUMBER_WORDS:
            return None
    else:
        return None
    cardinal_word = ORDINAL_TO_CARDINAL[words[k]]
    spoken = [*words[i:k], cardinal_word]
    if k == i and (cardinal_word == "hundred" or cardinal_word in SCALES):
        spoken = ["one", cardinal_word]  # "the hundredth"
    parsed = parse_cardinal(spoken, 0)
    if parsed is None or parsed[1] != len(spoken):
        return None
    return parsed[0], k + 1


# --- runs of atoms, shared by the finders ---------------------------------------------------

NUMBER_KINDS = frozenset({"cardinal", "numeral", "oh", "repeat"})


def atoms_from(a: Analysis, j: int) -> list[Atom]:
    """Adjacent number atoms starting at token ``j`` (a run), possibly empty."""
    out: list[Atom] = []
    atom = a.atom_at(j)
    while atom is not None and atom.kind in NUMBER_KINDS:
        out.append(atom)
        atom = a.atom_at(atom.last)
    return out


def two_digit(atoms: Sequence[Atom], k: int) -> tuple[int, int] | None:
    """A two-digit group as said in "sixty-five fifty-two" / "oh seven" / "07": (value, atoms)."""
    if k >= len(atoms):
        return None
    atom = atoms[k]
    if atom.kind == "cardinal" and 10 <= atom.value <= 99:
        return atom.value, 1
    if atom.kind == "numeral" and len(atom.digits) == 2:
        return atom.value, 1
    if atom.value == 0 and atom.single_word and atom.kind in ("oh", "cardinal"):
        unit = atoms[k + 1] if k + 1 < len(atoms) else None
        if unit is not None and unit.kind == "cardinal" and unit.single_word and unit.value < 10:
            return unit.value, 2
    return None


def number_runs(a: Analysis) -> list[list[Atom]]:
    """Maximal runs of adjacent number atoms (cardinals, numerals, "oh", "double four")."""

    def compute() -> list[list[Atom]]:
        runs: list[list[Atom]] = []
        for atom in a.atoms:
            if atom.kind not in NUMBER_KINDS:
                continue
            if runs and runs[-1][-1].last == atom.first:
                runs[-1].append(atom)
            else:
                runs.append([atom])
        return runs

    return a.remember("number_runs", compute)
