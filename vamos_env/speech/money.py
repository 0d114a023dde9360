"""Amounts of money and prices per kWh in heard text: a small grammar over number atoms.

``numbers.analyse`` turns words into atoms (one number each, as a listener groups
them); this module reads amounts from runs of adjacent atoms and the words
around them. A run is first cut into *groups*: a number ("two hundred fifteen",
"6", "1,215") or a two-digit group ("fifty-two", "oh seven", "07"), or a decimal
("sixty-five point five two", "65.52", "point fifty-two" included). Then the
groups must form one *figure*, or the run is no amount (a code, a list of
digits):

======================  =========================================  ====================
figure                  said                                       as a figure
======================  =========================================  ====================
whole                   "one hundred twelve", "a hundred and       112
                        twelve", "twelve hundred", "1,215"
pair (head <= 99)       "sixty-five fifty-two", "six fifty-six",   6552, 656 (the
                        "two fifteen", "twenty oh five"            hundreds shortcut)
dollars.cents           "two fifteen twenty-eight", "two hundred   215.28
                        fifteen twenty-eight", "two fourteen oh
                        seven", "215 28", "zero sixty-five"        (0.65)
decimal                 "65.52", "sixty-five point five two",      65.52, 656.31
                        "six fifty-six point three one"
======================  =========================================  ====================

What follows or precedes the figure marks it as money and fixes its readings:

- "dollars"/"bucks" (and "$" before a numeral): whole dollars, then an optional
  cents part ("and fifty-two cents", "fifty-two", "and 7 cents", "oh seven");
  a decimal figure is dollars.cents ("sixty-five point five dollars" = 65.50);
  a pair is the number it makes ("six fifty-six dollars" = 656.00, though a
  listener may take it as 6.56: that reading comes second); "X dollars even".
- "cents": the figure as a number of cents ("fifty cents", "one hundred and
  fifty cents": 150, or 10050 if the "and" was the one between dollars and
  cents). "<figure> and <n> cents" is dollars and cents ("six hundred
  fifty-six and thirty-one cents" = 656.31, no "dollars" needed).
- "even" after a whole figure or a pair: whole dollars ("one hundred twelve
  even", "two fifteen even" = 215.00), unless it begins another phrase ("six
  even payments", "even though").

Unmarked, a figure is still an amount a listener could take as money, with
every reading its words allow, most likely first: a pair is dollars.cents or a
number of dollars ("sixty-five fifty-two" -> 6552 or 655200 cents; "six
fifty-six" -> 656 or 65600), a decimal needs exactly two places ("215.28",
"six fifty-six point three one"), a whole number is dollars ("one hundred
twelve" -> 11200). What is not an amount even unmarked: a run inside a date;
a number with a unit after it ("six payments", "920 kWh", "five percent",
"two questions", "one of them"); a run touching a dash, slash or dot (codes,
versions); digits read one by one ("one five two one three") and written
numerals of five or more digits without commas ("15213"); a year after "in",
"since", "until", ... ("in twenty twenty-six"); a clock time ("at ten thirty",
"nine fifteen am"); a phone number read in groups ("four twelve, five
fifty-five, twelve thirty-four"); and a figure whose nearest cue behind it is a
code word ("the card ending in forty-two forty-two", "my zip is ...").

Prices per kWh (``find_rates``) are in cents: a decimal number of cents is
always a price ("nine point eight nine cents", "12.52 cents"; no amount is
said in fractions of a cent), a whole or paired one is a price when "per kWh"
(or "a kilowatt-hour", "/kWh") follows or a rate word ("rate", "price to
compare") stands nearest behind it ("nine eighty-nine cents a kWh" = 9.89);
dollars per kWh are converted ("$0.0989 per kWh" = 9.89).

Everything is computed once per text and kept on its analysis.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from vamos_env.speech.dates import date_token_ranges
from vamos_env.speech.mention import Mention
from vamos_env.speech.numbers import Analysis, Atom, analyse, atoms_from, two_digit
from vamos_env.speech.vocabulary import COUNT_MODIFIERS, COUNTED_NOUNS, SCALES

AmountForm = Literal["whole", "paired", "decimal", "dollars_and_cents"]


@dataclass(frozen=True, slots=True)
class Amount:
    """A stretch of text a listener could take as an amount of money.

    ``readings`` are every amount in cents the words allow, most likely first;
    ``marked`` says a money word or sign belongs to it (dollars, cents, bucks,
    "$", "even" after the figure); ``form`` is how the figure was said: one
    ``whole`` number, ``paired`` groups, a ``decimal``, or ``dollars_and_cents``
    said apart ("sixty-five dollars and fifty-two cents").
    """

    start: int
    end: int
    text: str  # == source[start:end]
    readings: tuple[int, ...]
    marked: bool
    form: AmountForm

    @property
    def cents(self) -> int:
        """The most likely reading."""
        return self.readings[0]


DOLLAR_WORDS = frozenset({"dollar", "dollars", "buck", "bucks"})
CENT_WORDS = frozenset({"cent", "cents"})
MONEY_CUES = frozenset(
    {
        *DOLLAR_WORDS, *CENT_WORDS, "$", "amount", "amounts", "balance", "balances",
        "pay", "pays", "paid", "paying", "payment", "payments", "owe", "owes", "owed",
        "owing", "due", "instalment", "instalments", "installment", "installments",
        "bill", "bills", "billed", "total", "totals", "charge", "charges", "charged",
        "cost", "costs", "price", "fee", "fees", "deposit", "credit", "refund",
        "outstanding", "arrears", "split", "month", "monthly", "per",
    }
)  # fmt: skip
CODE_CUES = frozenset(
    {
        "ending", "ends", "digits", "digit", "zip", "postal", "code", "number",
        "numbers", "phone", "extension", "meter", "pin", "id",
    }
)  # fmt: skip
_RATE_CUES = frozenset({"rate", "rates", "tariff", "compare"})  # "price to compare"
CUE_REACH_BEFORE = 6
CUE_REACH_AFTER = 5
SENTENCE_ENDS = frozenset({".", "?", "!", ";"})

_DASHES = frozenset({"dash", "hyphen", "minus"})
_CODE_SYMBOLS = frozenset({"dash", "hyphen", "/", "dot"})
_TIME_WORDS = frozenset({"am", "pm", "o'clock"})
# "in twenty twenty-six": a year, not an amount.
_YEAR_CUES = frozenset({"in", "since", "during", "until", "till", "through", "year"})
# "even" that begins another phrase, not "and no cents".
_EVEN_STARTS = frozenset(
    {
        "though", "if", "so", "when", "with", "without", "more", "less", "number",
        "numbers", "split", "amounts", "better", "worse", "higher", "lower", "after",
        "before", "now", "then", "just",
    }
)  # fmt: skip
# "the last four", "the first two", "all three": counting, not an amount.
_COUNTING_WORDS = frozenset({"last", "first", "next", "other", "all", "both", "those", "these"})
_KWH_WORDS = frozenset({"kwh", "kilowatt", "kilowatts"})
_PER_WORDS = frozenset({"per", "a", "an", "each", "every", "/"})
_PHONE_SHAPES = frozenset({(3, 3, 4), (3, 4), (1, 3, 3, 4)})
_LONGEST_SPOKEN_DIGITS = 4  # a numeral of more digits with no commas is a code


# --- groups and figures ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Group:
    value: int
    first: int  # token range
    last: int
    two_digit: bool  # said as a two-digit group: "fifty-two", "oh seven", "07"
    zero_led: bool  # "oh seven": cannot lead a figure
    fraction: str | None  # the digits after the point, for a decimal
    atom: Atom


FigureKind = Literal["whole", "pair", "dollars_cents", "decimal"]


@dataclass(frozen=True, slots=True)
class _Figure:
    kind: FigureKind
    number: int  # whole: the number; pair: head * 100 + group; else the cents
    fraction: str  # decimal: digits after the point as said ("5", "52", "0989")
    first: int
    last: int
    atom: Atom | None  # the one atom of a whole figure (for its British "and")


def _groups(run: Sequence[Atom]) -> list[_Group] | None:
    groups: list[_Group] = []
    k = 0
    while k < len(run):
        atom = run[k]
        if atom.kind == "repeat":
            return None  # "double four": a digit string
        if atom.kind == "decimal":
            if k != len(run) - 1:
                return None
            fraction = atom.digits.partition(".")[2]
            said_as_pair = 10 <= atom.value <= 99
            groups.append(
                _Group(atom.value, atom.first, atom.last, said_as_pair, False, fraction, atom)
            )
            break
        group = two_digit(run, k)
        if group is not None and group[1] == 2:  # "oh seven", "zero five"
            last = run[k + 1].last
            groups.append(_Group(group[0], atom.first, last, True, True, None, atom))
            k += 2
            continue
        if atom.value == 0 and atom.single_word and k == 0 and len(run) == 2:
            # "zero sixty-five", "oh sixty-five": no dollars and a pair's cents
            tail = two_digit(run, 1)
            if tail is not None and tail[1] == 1 and tail[0] >= 10:
                groups.append(_Group(0, atom.first, atom.last, True, False, None, atom))
                k += 1
                continue
        if atom.kind == "oh":
            return None
        said_as_pair = group is not None
        groups.append(_Group(atom.value, atom.first, atom.last, said_as_pair, False, None, atom))
        k += 1
    return groups


def _head(group: _Group) -> bool:
    """A group that can lead a pair: 1-99 said as one number ("six", "sixty-five", "65")."""
    if group.zero_led or group.fraction is not None or not 1 <= group.value <= 99:
        return False
    return group.atom.kind == "cardinal" or len(group.atom.digits) <= 2


def _figure(groups: Sequence[_Group]) -> _Figure | None:
    """The one figure these groups make, or None (a code, digits, a list of numbers)."""
    if not groups:
        return None
    first, last = groups[0].first, groups[-1].last
    g0 = groups[0]
    if g0.zero_led:
        return None
    if len(groups) == 1:
        if g0.fraction is not None:
            return _Figure("decimal", g0.value, g0.fraction, first, last, None)
        return _Figure("whole", g0.value, "", first, last, g0.atom)
    g1 = groups[1]
    if len(groups) == 2:
        if g1.fraction is not None:
            # "six fifty-six point three one", "two fifteen point two eight"
            if _head(g0) and g1.two_digit:
                return _Figure("decimal", g0.value * 100 + g1.value, g1.fraction, first, last, None)
            return None
        if not g1.two_digit:
            return None
        if _head(g0):
            return _Figure("pair", g0.value * 100 + g1.value, "", first, last, None)
        if g0.value == 0 and g1.value >= 10:  # "zero sixty-five": 65 cents
            return _Figure("dollars_cents", g1.value, "", first, last, None)
        if g0.value >= 100:  # "two hundred fourteen oh seven"
            return _Figure("dollars_cents", g0.value * 100 + g1.value, "", first, last, None)
        return None
    if len(groups) == 3:
        g2 = groups[2]
        if _head(g0) and g1.two_digit and g2.two_digit and g1.fraction is g2.fraction is None:
            cents = (g0.value * 100 + g1.value) * 100 + g2.value
            return _Figure("dollars_cents", cents, "", first, last, None)
    return None


def _scaled_cents(a: Analysis, numeral: str, k: int) -> int | None:
    """ "1.2" before "million" at token ``k``: the amount in cents, if it is whole cents."""
    scale = SCALES.get(a.norm_at(k))
    if scale is None or "." not in numeral:
        return None
    cents = Decimal(numeral) * scale * 100
    return int(cents) if cents == cents.to_integral_value() else None


def _decimal_cents(figure: _Figure, *, places: tuple[int, ...]) -> int | None:
    if len(figure.fraction) not in places:
        return None
    return figure.number * 100 + int(figure.fraction.ljust(2, "0"))


def _as_number(figure: _Figure) -> int | None:
    """The figure as one number ("sixty-five fifty-two" = 6552), for dollars or cents."""
    return figure.number if figure.kind in ("whole", "pair") else None


# --- what marks a figure -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Heard:
    readings: tuple[int, ...]
    first: int  # token range, the sign included
    last: int
    core_first: int  # the first token of the figure itself
    marked: bool
    form: AmountForm


def amounts_in(a: Analysis) -> tuple[_Heard, ...]:
    """Every amount in the analysed text, in order (kept on the analysis)."""
    return a.remember("amounts", lambda: _amounts(a))


def _money_runs(a: Analysis) -> list[list[Atom]]:
    """Adjacent atoms that may form a figure; a decimal ends its run."""

    def compute() -> list[list[Atom]]:
        runs: list[list[Atom]] = []
        for atom in a.atoms:
            if atom.kind == "ordinal":
                continue
            if runs and runs[-1][-1].last == atom.first and runs[-1][-1].kind != "decimal":
                runs[-1].append(atom)
            else:
                runs.append([atom])
        return runs

    return a.remember("money_runs", compute)


def _amounts(a: Analysis) -> tuple[_Heard, ...]:
    norms = a.norms
    n = len(norms)
    claimed = bytearray(n)
    found: list[_Heard] = []

    def claim(
        readings: tuple[int, ...], first: int, last: int, marked: bool, form: AmountForm
    ) -> None:
        core = first
        if first > 0 and norms[first - 1] in ("minus", "negative"):
            readings, first = tuple(-r for r in readings), first - 1
        found.append(_Heard(readings, first, last, core, marked, form))
        for k in range(first, last):
            claimed[k] = 1

    # "$65.52", "$1,215.28", "$5 and 52 cents", "-$5.00"
    for i in _indices(norms, "$"):
        if i + 1 >= n or a.tokens[i + 1].kind != "num":
            continue
        numeral = norms[i + 1]
        whole, _, fraction = numeral.partition(".")
        scaled = _scaled_cents(a, numeral, i + 2)
        if scaled is not None:  # "$1.2 million"
            claim((scaled,), i, i + 3, True, "decimal")
            continue
        if len(fraction) > 2:
            continue  # "$0.0989 per kWh" is a price; "$65.525" is nothing anyone owes
        cents = int(whole or "0") * 100 + int(fraction.ljust(2, "0") or "0")
        last, form = i + 2, "decimal" if fraction else "whole"
        if a.norm_at(last) in DOLLAR_WORDS:
            last += 1  # "$65 dollars": said twice
        if not fraction:
            tail = _cents_after(a, last)
            if tail is not None:
                cents, last, form = cents + tail[0], tail[1], "dollars_and_cents"
        if _even_at(a, last):
            last += 1
        if _per_kwh_at(a, last) is None:  # "$0.10 per kWh" is a price
            claim((cents,), i, last, True, form)  # type: ignore[arg-type]

    # "a dollar", "a buck and five cents"
    for i in (*_indices(norms, "dollar"), *_indices(norms, "buck")):
        said_a = a.norm_at(i - 1) in ("a", "an") and not claimed[i - 1]
        if not claimed[i] and said_a:
            if a.norm_at(i - 2) == "half":
                claim((50,), i - 2, i + 1, True, "whole")  # "half a dollar"
                continue
            cents, last = 100, i + 1
            tail = _cents_after(a, last)
            if tail is not None:
                cents, last = cents + tail[0], tail[1]
            claim((cents,), i - 1, last, True, "whole" if tail is None else "dollars_and_cents")

    runs = _money_runs(a)
    for r, run in enumerate(runs):
        if claimed[run[0].first]:
            continue
        groups = _groups(run)
        after = run[-1].last
        nxt = a.norm_at(after)
        if nxt in DOLLAR_WORDS:
            heard = _dollars(a, groups, run, after)
            if heard is not None:
                claim(*heard)
            continue
        if nxt in CENT_WORDS:
            heard = _cents(a, groups, run, after)
            if heard is not None:
                claim(*heard)
            continue
        figure = _figure(groups) if groups else None
        if figure is None:
            continue
        if figure.kind == "decimal" and a.norm_at(after + 1) in DOLLAR_WORDS:
            scaled = _scaled_cents(a, f"{figure.number}.{figure.fraction}", after)
            if scaled is not None:  # "one point two million dollars"
                claim((scaled,), figure.first, after + 2, True, "decimal")
                continue
        if nxt == "and":
            heard = _and_cents(a, figure, after)
            if heard is not None:
                claim(*heard)
                continue
        if _even_at(a, after) and _as_number(figure) is not None:
            claim((figure.number * 100,), figure.first, after + 1, True, "whole")
            continue
        unmarked = _unmarked(a, figure, runs, r)
        if unmarked is not None:
            claim(unmarked[0], figure.first, figure.last, False, unmarked[1])

    found.sort(key=lambda h: h.first)
    return tuple(found)


def _indices(norms: tuple[str, ...], word: str) -> list[int]:
    """Where ``word`` stands in ``norms`` (most texts have none: no loop then)."""
    if word not in norms:
        return []
    return [k for k, norm in enumerate(norms) if norm == word]


def _dollars(
    a: Analysis, groups: list[_Group] | None, run: Sequence[Atom], dollar: int
) -> tuple[tuple[int, ...], int, int, bool, AmountForm] | None:
    """ "<figure> dollars [and <cents> [cents]] [even]" whose dollar word is token ``dollar``."""
    figure = _figure(groups) if groups else None
    if figure is None and groups:
        figure = _figure(groups[-1:])  # "four four one seven sixty-five dollars": the last
    if figure is None:
        return None
    last = dollar + 1
    if figure.kind == "decimal":
        cents = _decimal_cents(figure, places=(1, 2))
        return None if cents is None else ((cents,), figure.first, last, True, "decimal")
    if figure.kind == "dollars_cents":  # "two fourteen oh seven dollars": loosely said
        return (figure.number,), figure.first, last, True, "dollars_and_cents"
    dollars = figure.number * 100
    tail = _cents_after(a, last)
    if tail is not None:
        return (dollars + tail[0],), figure.first, tail[1], True, "dollars_and_cents"
    if _even_at(a, last):
        last += 1
    if figure.kind == "pair":  # "six fifty-six dollars": 656 dollars, or loosely 6.56
        return (dollars, figure.number), figure.first, last, True, "paired"
    return (dollars,), figure.first, last, True, "whole"


def _cents(
    a: Analysis, groups: list[_Group] | None, run: Sequence[Atom], cent: int
) -> tuple[tuple[int, ...], int, int, bool, AmountForm] | None:
    """ "<figure> cents": a number of cents, unless it is a price per kWh."""
    figure = _figure(groups) if groups else None
    if figure is None and groups:
        figure = _figure(groups[-1:])
    if figure is None or figure.kind == "decimal" or _is_rate(a, figure.first, cent + 1):
        return None
    number = figure.number
    readings: tuple[int, ...] = (number,)
    atom = figure.atom
    if atom is not None and atom.and_tail and figure.kind == "whole":
        # "one hundred and fifty cents": 150 cents, or 100 dollars and 50 cents
        readings = (number, (number - atom.and_tail) * 100 + atom.and_tail)
    return readings, figure.first, cent + 1, True, "whole"


def _and_cents(
    a: Analysis, figure: _Figure, and_at: int
) -> tuple[tuple[int, ...], int, int, bool, AmountForm] | None:
    """ "six hundred fifty-six and thirty-one cents": dollars and cents without "dollars"."""
    number = _as_number(figure)
    if number is None:
        return None
    atoms = atoms_from(a, and_at + 1)
    if not atoms:
        return None
    pair = two_digit(atoms, 0)
    if pair is not None:
        value, used = pair
    elif atoms[0].kind in ("cardinal", "numeral") and atoms[0].value < 100:
        value, used = atoms[0].value, 1
    else:
        return None
    end = atoms[used - 1].last
    if a.norm_at(end) not in CENT_WORDS or len(atoms) != used or _is_rate(a, figure.first, end + 1):
        return None
    return (number * 100 + value,), figure.first, end + 1, True, "dollars_and_cents"


def _cents_after(a: Analysis, j: int) -> tuple[int, int] | None:
    """The cents after "... dollars": "and fifty-two cents", "fifty-two", "and 7 cents"."""
    # A comma ends the amount: in "a hundred dollars, fifty cents" a listener hears two.
    said_and = a.norm_at(j) == "and"
    if said_and:
        j += 1
    atoms = atoms_from(a, j)
    if not atoms:
        return None
    pair = two_digit(atoms, 0)  # "fifty-two", "oh seven", "07"
    if pair is not None:
        value, used = pair
    elif atoms[0].kind in ("cardinal", "numeral") and atoms[0].value < 100:
        value, used = atoms[0].value, 1  # "seven", said before "cents" or after "and"
    else:
        return None
    end = atoms[used - 1].last
    after = a.norm_at(end)
    if after in CENT_WORDS:
        return value, end + 1
    # Without the word "cents" the number must end the amount: "and fifty-two", not
    # "and two payments", "and two fourteen" or "fifty dollars ten dollars".
    if _counted_after(a, end) or after in DOLLAR_WORDS or a.atom_at(end) is not None:
        return None
    if pair is not None or (said_and and value >= 1):
        return value, end
    return None


def _even_at(a: Analysis, k: int) -> bool:
    """ "even" at token ``k`` means "and no cents" ("one hundred twelve even")."""
    if a.norm_at(k) != "even":
        return False
    nxt = a.norm_at(k + 1)
    return nxt not in _EVEN_STARTS and not _counted_after(a, k)


def _counted_after(a: Analysis, k: int) -> bool:
    """A unit or counted noun at ``k``, past up to two modifiers: "six monthly payments"."""
    for j in range(k, k + 3):
        norm = a.norm_at(j)
        if norm in COUNTED_NOUNS:
            return True
        if norm == "per" and a.norm_at(j + 1) in CENT_WORDS:
            return True  # "five per cent"
        if norm not in COUNT_MODIFIERS:
            return False
    return False


# --- unmarked figures ----------------------------------------------------------------------


def _unmarked(
    a: Analysis,
    figure: _Figure,
    runs: Sequence[Sequence[Atom]],
    r: int,
) -> tuple[tuple[int, ...], AmountForm] | None:
    """The readings of a figure said with no money word, or None where it is no amount."""
    first, last = figure.first, figure.last
    if a.norm_at(first - 1) in _CODE_SYMBOLS or a.norm_at(last) in _CODE_SYMBOLS | _DASHES:
        return None
    if any(first < b and s < last for s, b in date_token_ranges(a)):
        return None  # "October tenth twenty twenty-six"
    if _counted_after(a, last) or a.norm_at(last) in _TIME_WORDS or _said_am_pm(a, last):
        return None
    if _is_rate(a, first, last):
        return None
    if cue(a, first, last) == "code" or _phone_group(a, runs, r):
        return None
    before = a.norm_at(first - 1)
    if figure.kind == "whole":
        atom = figure.atom
        assert atom is not None
        token = a.tokens[atom.first]
        long_numeral = atom.kind == "numeral" and len(atom.digits) > _LONGEST_SPOKEN_DIGITS
        if long_numeral and "," not in a.text[token.start : token.end]:
            return None  # "15213": a code; an amount that long is written "15,213"
        if before in _YEAR_CUES and 1900 <= figure.number < 2100:
            return None
        if figure.number == 1 and atom.single_word:
            return None  # "the first one", "one of them": a pronoun; a dollar is "one dollar"
        if before in _COUNTING_WORDS:
            return None  # "the last four", "the next two": a count
        return (figure.number * 100,), "whole"
    if figure.kind == "pair":
        head, tail = divmod(figure.number, 100)
        if before in _YEAR_CUES and head in (19, 20):
            return None  # "in twenty twenty-six"
        if before == "at" and 1 <= head <= 12 and tail < 60:
            return None  # "at ten thirty": a time
        return (figure.number, figure.number * 100), "paired"
    if figure.kind == "dollars_cents":
        return (figure.number,), "paired"
    cents = _decimal_cents(figure, places=(2,))  # "215.28"; "65.5" is no amount said bare
    return None if cents is None else ((cents,), "decimal")


def _said_am_pm(a: Analysis, k: int) -> bool:
    """ "a.m." / "p.m." (tokenised as "a", "dot", "m")."""
    return a.norm_at(k) in ("a", "p") and a.norm_at(k + 1) == "dot" and a.norm_at(k + 2) == "m"


def _phone_group(a: Analysis, runs: Sequence[Sequence[Atom]], r: int) -> bool:
    """Whether run ``r`` is one group of a phone number read out with commas between."""
    lo = r
    while lo > 0 and _comma_between(a, runs[lo - 1], runs[lo]):
        lo -= 1
    hi = r
    while hi + 1 < len(runs) and _comma_between(a, runs[hi], runs[hi + 1]):
        hi += 1
    if lo == hi:
        return False
    shape = tuple(sum(len(atom.digits) for atom in run) for run in runs[lo : hi + 1])
    return shape in _PHONE_SHAPES


def _comma_between(a: Analysis, left: Sequence[Atom], right: Sequence[Atom]) -> bool:
    return right[0].first == left[-1].last + 1 and a.norm_at(left[-1].last) == ","


def cue(a: Analysis, first: int, last: int) -> Literal["money", "code"] | None:
    """What the words around tokens ``first``..``last`` say the figure is.

    Scanning back up to six words within the sentence, the nearest money or code
    word decides; with neither behind, the first one up to five words after it.
    """
    norms = a.norms
    for k in range(first - 1, max(-1, first - 1 - CUE_REACH_BEFORE), -1):
        norm = norms[k]
        if norm in SENTENCE_ENDS:
            break
        if norm in CODE_CUES or (norm == "four" and a.norm_at(k - 1) == "last"):
            return "code"  # "the last four are ...": a card's digits
        if norm in MONEY_CUES:
            return "money"
    for k in range(last, min(len(norms), last + CUE_REACH_AFTER)):
        norm = norms[k]
        if norm in SENTENCE_ENDS:
            return None
        if norm in CODE_CUES:
            return "code"
        if norm in MONEY_CUES:
            return "money"
    return None


def money_context(a: Analysis, first: int, last: int) -> bool:
    """A money word near the figure, and nothing that makes it a code, a count or a time."""
    if a.norm_at(first - 1) in ("dash", "hyphen", "/", "dot", "$"):
        return False
    after = a.norm_at(last)
    if after in _DASHES or after in ("/", "dot") or _counted_after(a, last):
        return False
    return cue(a, first, last) == "money"


# --- finders ----------------------------------------------------------------------------


_PACED_DIGITS = re.compile(r"(?<![\d.,$])\d(?:, \d){2,}(?!\.?\d)")


def find_amounts(text: str) -> list[Amount]:
    """Every stretch of ``text`` a listener could take as an amount of money, in order.

    Ambiguous figures keep all their readings ("sixty-five fifty-two": 6552 or
    655200 cents). Dates, counts, percentages, prices per kWh, clock times,
    years after "in", phone numbers and digit-by-digit codes are not amounts,
    nor is a figure a code word governs ("card ending in forty-two forty-two").
    """
    a = analyse(text)

    def compute() -> tuple[Amount, ...]:
        # Single digits written one by one with commas ("the card ending 4, 4, 4, 4", as a
        # recogniser writes a code read digit by digit): none of them is an amount unless
        # a money word marks it.
        paced = [m.span() for m in _PACED_DIGITS.finditer(text)]
        out = []
        for h in amounts_in(a):
            start, end = a.span(h.first, h.last)
            if not h.marked and any(a0 <= start and end <= b0 for a0, b0 in paced):
                continue
            out.append(Amount(start, end, text[start:end], h.readings, h.marked, h.form))
        return tuple(out)

    return list(a.remember("find_amounts", compute))


def find_money(text: str, *, bare_amounts: bool = False) -> list[Mention[int]]:
    """Amounts of money said in ``text``, in integer cents (the most likely reading).

    An amount counts when a money word marks it ("$65.52", "sixty-five dollars",
    "fifty cents", "one hundred twelve even"), or when a money cue stands near
    (``money_context``): "your balance is sixty-five fifty-two". A lone whole
    number ("I'll pay fifty") counts only with ``bare_amounts`` and a cue.
    """
    a = analyse(text)

    def compute() -> tuple[Mention[int], ...]:
        out = []
        for h in amounts_in(a):
            if not h.marked:
                if h.form == "whole" and (not bare_amounts or h.readings[0] == 0):
                    continue
                if not money_context(a, h.core_first, h.last):
                    continue
            start, end = a.span(h.first, h.last)
            out.append(Mention(h.readings[0], start, end, text[start:end]))
        return tuple(out)

    return list(a.remember(("find_money", bare_amounts), compute))


# --- prices per kWh -------------------------------------------------------------------------


def find_rates(text: str) -> list[Mention[Decimal]]:
    """Prices in cents per kWh: "nine point eight nine cents", "$0.0989 per kWh" -> 9.89."""
    a = analyse(text)
    return list(a.remember("find_rates", lambda: tuple(_rates(a))))


def _rates(a: Analysis) -> list[Mention[Decimal]]:
    out: list[Mention[Decimal]] = []
    norms = a.norms
    if not any(word in norms for word in (*CENT_WORDS, *_KWH_WORDS)):
        return out  # a price names its cents or its kWh
    for i in _indices(norms, "$"):
        if i + 1 < len(norms) and a.tokens[i + 1].kind == "num":
            end = _per_kwh_at(a, i + 2 + (a.norm_at(i + 2) in DOLLAR_WORDS))
            if end is not None:
                out.append(_rate(a, Decimal(norms[i + 1]) * 100, i, end))
    for run in _money_runs(a):
        groups = _groups(run)
        figure = _figure(groups) if groups else None
        if figure is None and groups:
            figure = _figure(groups[-1:])
        if figure is None or a.norm_at(figure.first - 1) == "$":
            continue
        value = _figure_decimal(figure)
        after = figure.last
        nxt = a.norm_at(after)
        if nxt in CENT_WORDS:
            per = _per_kwh_at(a, after + 1)
            if figure.kind == "decimal" or per is not None or _rate_cue(a, figure.first):
                out.append(_rate(a, value, figure.first, per or after + 1))
        elif nxt in DOLLAR_WORDS:
            per = _per_kwh_at(a, after + 1)
            if per is not None:
                out.append(_rate(a, value * 100, figure.first, per))
        elif nxt in ("per", "/"):
            per = _per_kwh_at(a, after)
            if per is not None:  # no unit said: cents, unless it is below one (dollars)
                out.append(_rate(a, value * 100 if value < 1 else value, figure.first, per))
    out.sort(key=lambda m: m.start)
    return out


def _figure_decimal(figure: _Figure) -> Decimal:
    if figure.kind == "decimal":
        return Decimal(f"{figure.number}.{figure.fraction or '0'}")
    if figure.kind == "pair":  # "nine eighty-nine cents a kWh": 9.89
        head, tail = divmod(figure.number, 100)
        return Decimal(f"{head}.{tail:02d}")
    if figure.kind == "dollars_cents":
        return Decimal(figure.number) / 100
    return Decimal(figure.number)


def _rate(a: Analysis, value: Decimal, first: int, last: int) -> Mention[Decimal]:
    value = value.normalize()
    if value == value.to_integral_value():
        value = value.quantize(Decimal(1))
    start, end = a.span(first, last)
    return Mention(value, start, end, a.text[start:end])


def _per_kwh_at(a: Analysis, k: int) -> int | None:
    """The end of "per kWh" / "a kilowatt-hour" / "/kWh" / "for each kWh" at ``k``, or None."""
    if a.norm_at(k) == "for" and a.norm_at(k + 1) in ("each", "every"):
        k += 1
    if a.norm_at(k) not in _PER_WORDS:
        return None
    k += 1
    if a.norm_at(k) not in _KWH_WORDS:
        return None
    k += 1
    if a.norm_at(k) in ("hour", "hours"):
        k += 1
    return k


def _is_rate(a: Analysis, first: int, after: int) -> bool:
    """A figure (with its "cents" ending at ``after``) priced per kWh, or after a rate word."""
    return _per_kwh_at(a, after) is not None or (
        a.norm_at(after - 1) in CENT_WORDS and _rate_cue(a, first)
    )


def _rate_cue(a: Analysis, first: int) -> bool:
    """The nearest cue behind is a rate word: "the rate is twelve cents"."""
    norms = a.norms
    for k in range(first - 1, max(-1, first - 1 - CUE_REACH_BEFORE), -1):
        norm = norms[k]
        if norm in SENTENCE_ENDS:
            return False
        if norm in _RATE_CUES:
            return True
        if norm in MONEY_CUES and norm != "price":
            return False
    return False
