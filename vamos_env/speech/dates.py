"""Calendar dates said or written: "October tenth", "the twelfth of March", "10/10/2026".

A date needs a month and a day ("the 10th" alone is no date). A month glued to the word
before it counts ("duactober 10": the recogniser runs "due October" together; see
``glued_month``). The year is said after the day ("twenty twenty-six", "two thousand
twenty-six", "2026", "twenty oh five") or is ``default_year``. Written dates are ISO
("2026-10-10") or US month-first ("10/10/2026", "10-10-26").
"""

from __future__ import annotations

import re
from datetime import date

from vamos_env import clock
from vamos_env.speech.mention import Mention
from vamos_env.speech.numbers import Analysis, analyse, atoms_from, two_digit
from vamos_env.speech.vocabulary import MONTH_NUMBERS, MONTHS

_ISO_DATE = re.compile(r"(?<![\d/.-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d/-])")
_US_DATE = re.compile(r"(?<![\d/.-])(\d{1,2})([/-])(\d{1,2})\2(\d{4}|\d{2})(?![\d/-])")


def find_dates(text: str, *, default_year: int = clock.TODAY.year) -> list[Mention[date]]:
    """Calendar dates said or written in ``text``; a date needs a month and a day."""
    a = analyse(text)
    return list(
        a.remember(
            ("find_dates", default_year),
            lambda: tuple(
                Mention(value, start, end, text[start:end])
                for value, start, end in dates_in(a, default_year)
            ),
        )
    )


def dates_in(a: Analysis, default_year: int) -> tuple[tuple[date, int, int], ...]:
    """(date, start char, end char) of each date in the analysed text, in order."""
    return a.remember(("dates", default_year), lambda: _dates(a, default_year))


def date_token_ranges(a: Analysis) -> list[tuple[int, int]]:
    """Token ranges covered by dates, so "twenty twenty-six" after a month is not money."""

    def compute() -> list[tuple[int, int]]:
        ranges = []
        for _value, start, end in dates_in(a, clock.TODAY.year):
            covered = [k for k, t in enumerate(a.tokens) if t.start < end and start < t.end]
            if covered:
                ranges.append((covered[0], covered[-1] + 1))
        return ranges

    return a.remember("date_token_ranges", compute)


def _dates(a: Analysis, default_year: int) -> tuple[tuple[date, int, int], ...]:
    found: list[tuple[date, int, int]] = []
    if "/" in a.text or "-" in a.text:
        for pattern, order in ((_ISO_DATE, (1, 2, 3)), (_US_DATE, (4, 1, 3))):
            for match in pattern.finditer(a.text):
                y, m, d = (int(match.group(g)) for g in order)
                if y < 100:
                    y += 2000
                value = _valid_date(y, m, d)
                if value is not None:
                    found.append((value, match.start(), match.end()))
    tokens = a.tokens
    for i, token in enumerate(tokens):
        if token.kind == "word" and glued_month(token.norm) is not None:
            spoken = _month_first(a, i, default_year)
        elif i in a.atom_starting:  # a day-first date starts with the day's number
            spoken = _day_first(a, i, default_year)
        else:
            continue
        if spoken is not None:
            value, first, last = spoken
            start, end = a.span(first, last)
            found.append((value, start, end))
    found.sort(key=lambda item: (item[1], -item[2]))
    kept: list[tuple[date, int, int]] = []
    for item in found:
        if not kept or item[1] >= kept[-1][2]:
            kept.append(item)
    return tuple(kept)


# A full month name, or all of it but its first letter, of five letters or more.
_TAILS = {m[cut:]: n for m, n in MONTH_NUMBERS.items() for cut in (0, 1) if len(m) - cut >= 5}
_GLUED = re.compile(r"[a-z]{2,}(" + "|".join(sorted(_TAILS, key=len, reverse=True)) + ")")
# Short words a date follows, which may take a month of any length with them ("onjune").
_BEFORE_DATES = ("on", "due", "by", "in", "until", "since", "before", "after")
_AFTER_WORD = re.compile("(?:" + "|".join(_BEFORE_DATES) + ")(" + "|".join(m for m in MONTHS) + ")")


def glued_month(word: str) -> int | None:
    """The month ``word`` names: a month name or abbreviation, or a month glued to the
    word before it, its first sound sometimes swallowed ("duactober" -> 10: Whisper runs
    "due October" together so). Only tails of five letters or more are looked for
    ("ctober", "march", "ugust"), so "dismay" and "rejune" are no months; a
    short month only after a word a date follows ("onjune", "duemay"). Callers still
    need a day after it."""
    if word in MONTH_NUMBERS:
        return MONTH_NUMBERS[word]
    after_word = _AFTER_WORD.fullmatch(word)
    if after_word is not None:
        return MONTH_NUMBERS[after_word.group(1)]
    glued = _GLUED.fullmatch(word)
    return None if glued is None else _TAILS[glued.group(1)]


def _valid_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _month_first(a: Analysis, i: int, default_year: int) -> tuple[date, int, int] | None:
    """ "October tenth", "Oct. 10, 2026", "October the tenth twenty twenty-six"."""
    tokens = a.tokens
    month = glued_month(tokens[i].norm)
    assert month is not None
    j = i + 1
    if j < len(tokens) and tokens[j].norm == "." and len(tokens[i].norm) <= 4:
        j += 1
    if j < len(tokens) and tokens[j].norm == "the":
        j += 1
    day = _day_at(a, j, spoken_cardinal=True)
    if day is None:
        return None
    year, last = _year_after(a, day[1], default_year)
    value = _valid_date(year, month, day[0])
    return None if value is None else (value, i, last)


def _day_first(a: Analysis, i: int, default_year: int) -> tuple[date, int, int] | None:
    """ "the twelfth of March", "12th of March", "12 March 2026"."""
    tokens = a.tokens
    day = _day_at(a, i, spoken_cardinal=False)
    if day is None:
        return None
    j = day[1]
    atom = a.atom_at(i)
    said_of = j < len(tokens) and tokens[j].norm == "of"
    if said_of and atom is not None and atom.kind == "ordinal":
        j += 1
    month = glued_month(tokens[j].norm) if j < len(tokens) and tokens[j].kind == "word" else None
    if month is None:
        return None
    year, last = _year_after(a, j + 1, default_year)
    value = _valid_date(year, month, day[0])
    first = i - 1 if i > 0 and tokens[i - 1].norm == "the" else i
    return None if value is None else (value, first, last)


def _day_at(a: Analysis, j: int, *, spoken_cardinal: bool) -> tuple[int, int] | None:
    atom = a.atom_at(j)
    if atom is None or not 1 <= atom.value <= 31:
        return None
    if atom.kind == "ordinal" or (atom.kind == "numeral" and len(atom.digits) <= 2):
        return atom.value, atom.last
    if spoken_cardinal and atom.kind == "cardinal":
        return atom.value, atom.last
    return None


def _year_after(a: Analysis, j: int, default_year: int) -> tuple[int, int]:
    """The year said after a day, or ``default_year``; returns (year, last token)."""
    k = j + 1 if j < len(a.tokens) and a.tokens[j].norm == "," else j
    run = atoms_from(a, k)
    if run:
        head = run[0]
        if head.kind == "numeral" and len(head.digits) == 4 and 1900 <= head.value < 2200:
            return head.value, head.last
        if head.kind == "cardinal" and 1900 <= head.value < 2200:
            return head.value, head.last  # "two thousand twenty-six", "nineteen hundred"
        if head.kind == "cardinal" and head.value in (19, 20, 21):
            tail = two_digit(run, 1)  # "twenty twenty-six", "twenty oh five"
            if tail is not None:
                return head.value * 100 + tail[0], run[tail[1]].last
    return default_year, j
