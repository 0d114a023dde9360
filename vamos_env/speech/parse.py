"""What was said, back into values: money, numbers, digit strings, dates, counts, emails.

The scripted caller understands the agent with these, and the grader's code
verifier checks spoken values with them. Every finder returns ``Mention``s:
the value plus the exact characters it came from, so a check can quote its
evidence. Input is ASR-ish text: any case, digits or words, stray hyphens and
commas, "oh" for zero.

Rules a reader must know (each is a decision, tested in tests/speech/):

- **Money** is found without context when a money word says so: "$65.52",
  "65.52 dollars", "sixty-five dollars and fifty-two cents", "65 dollars 52
  cents", "fifty cents", "a hundred dollars", "sixty-five dollars and
  fifty-two". Bare number groups are money only in a money context:
  "sixty-five fifty-two" = $65.52 and "two fourteen oh seven" = $214.07 (a
  two- or three-group run whose later groups are two-digit: "fifty-two",
  "oh seven", "07"), and so is a written "65.52" without its "$". The context
  rule: scanning back up to six words (within the sentence), the nearest cue
  or blocker word decides; cues are money words (dollars, amount, balance,
  pay, owe, payment, instalment, bill, total, due, charge, a month, ...), blockers are
  code words (ending, digits, zip, postal, code, number, ...): "card ending in
  forty-two forty-two" is not money. With no word either way behind it, a cue
  up to five words after the run counts. Runs of more groups, runs touching a
  dash, runs inside a date and runs followed by a count unit are never money,
  so a postal code ("one five two one three") or a phone number is not money.
  "Sixty-five dollars, fifty-two cents" is two amounts: a comma ends one.
- A lone bare number ("I'll pay fifty") is not money by default: a listener
  cannot tell fifty dollars from fifty cents or fifty days. ``bare_amounts=True``
  reads it as dollars when the same context rule holds.
- Negative money: "minus" or "negative" before the amount, or "-$5.00".
  "A credit of five dollars" stays +500: whether a credit is a negative
  balance is the caller's reading, not the parser's.
- **Numbers** (``find_numbers``) are standalone quantities: a run of adjacent
  number groups ("four four one seven", "twenty twenty-six") is a code, a
  year or money, not a quantity, and is left to the other finders; so is a
  number joined to a dash or slash ("4417-90781", "10/10/2026").
- **Digit strings** join adjacent groups by their digits ("four four one
  seven" -> "4417", "forty-four seventeen" -> "4417", "double four" -> "44",
  "oh" -> "0") across spaces and commas, keep dashes ("dash", "hyphen", "-"),
  and read a group after the dash as its number's digits: "four four one
  seven dash ninety thousand seven hundred eighty-one" -> "4417-90781". A
  single group is a digit string only as a numeral of three or more digits.
  ``find_codes`` adds spelled letters ("A C M E dash four two" -> "ACME-42").
- **Emails**: "dana dot whitfield at example dot com", spelled letters
  ("d a n a seven seven at ..."), or written. Read backwards from "at", the
  address starts after a stop word ("my email is ..."); each part is one word
  (digits may follow it) or a run of spelled characters.
- **Dates**: "October tenth", "October 10th", "Oct. 10", "October the tenth",
  "the twelfth of March", "12 March", with an optional year ("2026", "twenty
  twenty-six", "two thousand twenty-six", "twenty oh five"), and written
  "10/10/2026", "10-10-26", "2026-10-10" (US month first). No month, no date:
  "the 10th" alone and "10/10" alone return nothing. A missing year is
  ``default_year`` (the frozen clock's year): a caller comparing dates that
  may fall in the next year should pass the year it expects.
- **Counts** need an explicit number next to the unit, with at most two
  modifiers between ("six monthly payments", "fifteen more days"); units are
  payments (payment, instalment, installment), months, days, weeks, years. A
  number of payments is never months, and an ordinal ("the sixth payment") is
  never a count.

Library evaluation: ``text2num`` 3.1 (PyPI, Rust wheels) was tried. Its
``alpha2digit`` is fast and right on plain cardinals, but it returns a
rewritten string with no offsets (we need spans for evidence), and its
grouping conflicts with the traps we must handle: it leaves "one" and "a
hundred" as words, merges "nine zero seven" into "9 07", does not read "oh"
as zero or "double four", and has no notion of money, dates or codes. The
part it does well, the cardinal grammar, is ~80 lines in numbers.py; adding
a compiled dependency for that was not worth it, so this package has none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Generic, Literal, TypeVar

from vamos_env import clock
from vamos_env.speech.numbers import Analysis, Atom, analyse
from vamos_env.speech.tokens import tokenize
from vamos_env.speech.vocabulary import DIGIT_WORDS, EMAIL_STOP_WORDS, MONTH_NUMBERS

T = TypeVar("T")
Unit = Literal["payments", "months", "days", "weeks", "years", "kwh"]


@dataclass(frozen=True, slots=True)
class Mention(Generic[T]):
    """A value found in text, with the characters it came from: ``text == source[start:end]``."""

    value: T
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Count:
    n: int
    unit: Unit


_DOLLAR_WORDS = frozenset({"dollar", "dollars", "buck", "bucks"})
_CENT_WORDS = frozenset({"cent", "cents"})
_MONEY_CUES = frozenset(
    {
        *_DOLLAR_WORDS, *_CENT_WORDS, "$", "amount", "amounts", "balance", "balances",
        "pay", "pays", "paid", "paying", "payment", "payments", "owe", "owes", "owed",
        "owing", "due", "instalment", "instalments", "installment", "installments",
        "bill", "bills", "billed", "total", "totals", "charge", "charges", "charged",
        "cost", "costs", "price", "fee", "fees", "deposit", "credit", "refund",
        "outstanding", "arrears", "split", "month", "monthly", "per",
    }
)  # fmt: skip
_CODE_CUES = frozenset(
    {
        "ending", "ends", "digits", "digit", "zip", "postal", "code", "number",
        "numbers", "phone", "extension", "meter", "pin", "id",
    }
)  # fmt: skip
_CUE_REACH_BEFORE = 6
_CUE_REACH_AFTER = 5
_SENTENCE_ENDS = frozenset({".", "?", "!", ";"})

_UNIT_WORDS: dict[str, Unit] = {
    "payment": "payments", "payments": "payments", "instalment": "payments",
    "instalments": "payments", "installment": "payments", "installments": "payments",
    "month": "months", "months": "months", "day": "days", "days": "days",
    "week": "weeks", "weeks": "weeks", "year": "years", "years": "years",
    # Energy: "920 kWh", "nine hundred twenty kilowatt-hours" (the next word, hours, is not read).
    "kwh": "kwh", "kilowatt": "kwh", "kilowatts": "kwh", "kilowatt-hours": "kwh",
    "kilowatt-hour": "kwh",
}  # fmt: skip
_COUNT_MODIFIERS = frozenset(
    {
        "monthly", "weekly", "equal", "more", "additional", "extra", "separate",
        "consecutive", "further", "remaining", "full", "business", "calendar", "total",
        "smaller", "even",
    }
)  # fmt: skip
_MAX_MODIFIERS = 2
# After a number, these words make it something other than money.
_NOT_MONEY_AFTER = frozenset(
    {*_UNIT_WORDS, "percent", "%", "kilowatt", "kilowatts", "kwh", "o'clock", "am", "pm"}
)

_DASHES = frozenset({"dash", "hyphen", "minus"})
_CODE_JOINERS = frozenset({",", "(", ")"})
_NUMBER_KINDS = frozenset({"cardinal", "numeral", "oh", "repeat"})
_AMOUNT_KINDS = frozenset({"cardinal", "numeral"})  # whole numbers said as a quantity
_CONNECTOR_CHARS = {
    "dot": ".", "period": ".", "underscore": "_", "dash": "-", "hyphen": "-", "plus": "+",
}  # fmt: skip
_DIGIT_OF = {word: str(value) for value, word in enumerate(DIGIT_WORDS)} | {"oh": "0"}

_ISO_DATE = re.compile(r"(?<![\d/.-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d/-])")
_US_DATE = re.compile(r"(?<![\d/.-])(\d{1,2})([/-])(\d{1,2})\2(\d{4}|\d{2})(?![\d/-])")


def _mention(a: Analysis, value: T, first: int, last: int) -> Mention[T]:
    start, end = a.span(first, last)
    return Mention(value, start, end, a.text[start:end])


# --- money -----------------------------------------------------------------------------


def find_money(text: str, *, bare_amounts: bool = False) -> list[Mention[int]]:
    """Amounts of money said in ``text``, in integer cents, in order of appearance."""
    a = analyse(text)
    found: list[tuple[int, int, int]] = []  # (cents, first token, last token exclusive)
    claimed = [False] * len(a.tokens)

    def claim(cents: int, first: int, last: int) -> None:
        sign_first = _sign_start(a, first)
        if sign_first is not None:
            cents, first = -cents, sign_first
        found.append((cents, first, last))
        for k in range(first, last):
            claimed[k] = True

    for i, token in enumerate(a.tokens):
        if token.norm == "$" and i + 1 < len(a.tokens) and a.tokens[i + 1].kind == "num":
            cents = _numeral_cents(a.tokens[i + 1].norm)
            if cents is not None:
                claim(cents, i, i + 2)
    for i, token in enumerate(a.tokens):
        if token.norm in _DOLLAR_WORDS and not claimed[i]:
            amount = _dollars_ending_at(a, i)
            if amount is not None and not claimed[amount[1]]:
                cents, first, last = amount
                claim(cents, first, last)
    for i, token in enumerate(a.tokens):
        if token.norm in _CENT_WORDS and not claimed[i]:
            atom = a.atom_before(i)
            if atom is not None and atom.kind in _AMOUNT_KINDS and not claimed[atom.first]:
                claim(atom.value, atom.first, i + 1)

    date_spans = _date_token_ranges(a)
    for atom in a.atoms:
        # "the balance is 65.52": a written amount without its "$", in a money context.
        # "12.52 cents" is a rate, not an amount.
        written_amount = atom.kind == "decimal" and len(atom.digits.partition(".")[2]) == 2
        written_amount = written_amount and _norm_at(a, atom.last) not in _CENT_WORDS
        if written_amount and not claimed[atom.first] and _may_be_money(a, atom.first, atom.last):
            claim(_numeral_cents(atom.digits) or 0, atom.first, atom.last)
    for run in _number_runs(a):
        first, last = run[0].first, run[-1].last
        if any(claimed[first:last]) or _overlaps(date_spans, first, last):
            continue
        if not _may_be_money(a, first, last):
            continue
        cents_value = _short_money(run)
        if cents_value is None and bare_amounts and len(run) == 1:
            cents_value = _bare_dollars(run[0])
        if cents_value is not None:
            claim(cents_value, first, last)

    found.sort(key=lambda item: item[1])
    return [_mention(a, cents, first, last) for cents, first, last in found]


def _numeral_cents(numeral: str) -> int | None:
    whole, _, fraction = numeral.partition(".")
    if len(fraction) > 2:
        return None  # "$65.525" is not an amount anyone says
    return int(whole or "0") * 100 + int(fraction.ljust(2, "0") or "0")


def _norm_at(a: Analysis, k: int) -> str:
    return a.tokens[k].norm if 0 <= k < len(a.tokens) else ""


def _sign_start(a: Analysis, first: int) -> int | None:
    if first > 0 and a.tokens[first - 1].norm in ("minus", "negative"):
        return first - 1
    return None


def _dollars_ending_at(a: Analysis, i: int) -> tuple[int, int, int] | None:
    """ "<amount> dollars [and <cents> [cents]]" whose dollar word is token ``i``."""
    atom = a.atom_before(i)
    if atom is not None and atom.kind == "decimal":
        cents = _numeral_cents(atom.digits)
        return None if cents is None else (cents, atom.first, i + 1)
    if atom is not None and atom.kind in ("cardinal", "numeral"):
        cents, first = atom.value * 100, atom.first
    elif i > 0 and a.tokens[i - 1].norm in ("a", "an") and a.tokens[i].norm in ("dollar", "buck"):
        cents, first = 100, i - 1
    else:
        return None
    tail = _cents_after(a, i + 1)
    if tail is None:
        return cents, first, i + 1
    return cents + tail[0], first, tail[1]


def _cents_after(a: Analysis, j: int) -> tuple[int, int] | None:
    """The cents after "... dollars": "and fifty-two cents", "fifty-two", "and 7 cents"."""
    # A comma ends the amount: in "a hundred dollars, fifty cents" a listener hears two.
    tokens = a.tokens
    said_and = j < len(tokens) and tokens[j].norm == "and"
    if said_and:
        j += 1
    atoms = _atoms_from(a, j)
    if not atoms:
        return None
    two_digit = _two_digit(atoms, 0)  # "fifty-two", "oh seven", "07"
    if two_digit is not None:
        value, used = two_digit
    elif atoms[0].kind in _AMOUNT_KINDS and atoms[0].value < 100:
        value, used = atoms[0].value, 1  # "seven", said before "cents" or after "and"
    else:
        return None
    end = atoms[used - 1].last
    after = tokens[end].norm if end < len(tokens) else ""
    if after in _CENT_WORDS:
        return value, end + 1
    # Without the word "cents" the number must end the amount: "and fifty-two", not
    # "and two payments", "and two fourteen" or "fifty dollars ten dollars".
    if after in _NOT_MONEY_AFTER or after in _DOLLAR_WORDS or a.atom_at(end) is not None:
        return None
    if two_digit is not None or (said_and and value >= 1):
        return value, end
    return None


def _atoms_from(a: Analysis, j: int) -> list[Atom]:
    """Adjacent number atoms starting at token ``j`` (a run), possibly empty."""
    out: list[Atom] = []
    atom = a.atom_at(j)
    while atom is not None and atom.kind in _NUMBER_KINDS:
        out.append(atom)
        atom = a.atom_at(atom.last)
    return out


def _two_digit(atoms: Sequence[Atom], k: int) -> tuple[int, int] | None:
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


def _short_money(run: Sequence[Atom]) -> int | None:
    """ "sixty-five fifty-two" -> 6552; "two fourteen oh seven" -> 21407; else None."""
    head = run[0]
    if head.kind not in ("cardinal", "numeral") or head.value < 1 or len(run) < 2:
        return None
    middle = _two_digit(run, 1)
    if middle is None:
        return None
    after = 1 + middle[1]
    if after == len(run):
        return head.value * 100 + middle[0]
    last = _two_digit(run, after)
    if last is None or after + last[1] != len(run) or head.value > 99:
        return None
    return (head.value * 100 + middle[0]) * 100 + last[0]


def _bare_dollars(atom: Atom) -> int | None:
    if atom.kind in ("cardinal", "numeral") and atom.value >= 1:
        return atom.value * 100
    return None


def _number_runs(a: Analysis) -> list[list[Atom]]:
    """Maximal runs of adjacent number atoms (cardinals, numerals, "oh", "double four")."""
    runs: list[list[Atom]] = []
    for atom in a.atoms:
        if atom.kind not in _NUMBER_KINDS:
            continue
        if runs and runs[-1][-1].last == atom.first:
            runs[-1].append(atom)
        else:
            runs.append([atom])
    return runs


def _may_be_money(a: Analysis, first: int, last: int) -> bool:
    tokens = a.tokens
    if first > 0 and tokens[first - 1].norm in ("dash", "hyphen", "/", "dot", "$"):
        return False
    if last < len(tokens) and tokens[last].norm in (*_DASHES, "/", "dot", *_NOT_MONEY_AFTER):
        return False
    for k in range(first - 1, max(-1, first - 1 - _CUE_REACH_BEFORE), -1):
        norm = tokens[k].norm
        if norm in _SENTENCE_ENDS:
            break
        if norm in _CODE_CUES:
            return False
        if norm in _MONEY_CUES:
            return True
    for k in range(last, min(len(tokens), last + _CUE_REACH_AFTER)):
        norm = tokens[k].norm
        if norm in _SENTENCE_ENDS or norm in _CODE_CUES:
            return False
        if norm in _MONEY_CUES:
            return True
    return False


def _overlaps(ranges: Iterable[tuple[int, int]], first: int, last: int) -> bool:
    return any(first < b and a < last for a, b in ranges)


# --- numbers, digit strings, codes ----------------------------------------------------------


def find_numbers(text: str) -> list[Mention[int]]:
    """Standalone whole numbers ("fifteen", "a hundred", "1,200", "minus three")."""
    a = analyse(text)
    out: list[Mention[int]] = []
    for run in _number_runs(a):
        if len(run) != 1 or run[0].kind not in ("cardinal", "numeral"):
            continue
        atom = run[0]
        if _touches_code_symbol(a, atom.first, atom.last):
            continue
        sign_first = _sign_start(a, atom.first)
        if sign_first is None:
            out.append(_mention(a, atom.value, atom.first, atom.last))
        else:
            out.append(_mention(a, -atom.value, sign_first, atom.last))
    return out


def _touches_code_symbol(a: Analysis, first: int, last: int) -> bool:
    code_symbols = ("dash", "hyphen", "/", "dot")
    before = a.tokens[first - 1].norm if first > 0 else ""
    after = a.tokens[last].norm if last < len(a.tokens) else ""
    return before in code_symbols or after in code_symbols


def find_digit_strings(text: str) -> list[Mention[str]]:
    """Digit strings as read out: "four four one seven dash nine zero ..." -> "4417-90..."."""
    a = analyse(text)
    out: list[Mention[str]] = []
    for value, first, last, elements, _letters in _code_runs(a, letters=False):
        single_short = elements == 1 and not (
            a.atoms[a.atom_starting[first]].kind == "numeral" and len(value) >= 3
        )
        if single_short:
            continue
        if first > 0 and a.tokens[first - 1].norm == "$":
            continue  # "$1,234" is money, not a code
        out.append(_mention(a, value, first, last))
    return out


def find_codes(text: str) -> list[Mention[str]]:
    """Codes spelled with letters and digits: "A C M E dash four two" -> "ACME-42".

    A run needs two spelled letters, or one letter among at least three
    characters, so the article in "a one-time fee" is not a code.
    """
    a = analyse(text)
    out: list[Mention[str]] = []
    for value, first, last, elements, letters in _code_runs(a, letters=True):
        if letters >= 2 or (letters == 1 and elements >= 3):
            out.append(_mention(a, value, first, last))
    return out


def _code_runs(a: Analysis, *, letters: bool) -> list[tuple[str, int, int, int, int]]:
    """(value, first, last, elements, letters) for each run of spelled characters."""
    tokens = a.tokens
    runs: list[tuple[str, int, int, int, int]] = []
    i = 0
    while i < len(tokens):
        if not _starts_character(a, i, letters):
            i += 1
            continue
        pieces: list[str] = []
        elements = letter_count = 0
        j = end = i
        while j < len(tokens):
            atom = a.atom_at(j)
            token = tokens[j]
            if atom is not None and atom.kind in _NUMBER_KINDS:
                pieces.append(atom.digits)
                elements += 1
                j = end = atom.last
            elif letters and _is_letter(token.norm, token.kind):
                pieces.append(token.norm.upper())
                elements += 1
                letter_count += 1
                j = end = j + 1
            elif token.norm in _DASHES and _character_follows(a, j + 1, letters):
                if pieces[-1] != "-":
                    pieces.append("-")
                j += 1
            elif token.norm in _CODE_JOINERS and _character_follows(a, j + 1, letters):
                j += 1
            else:
                break
        runs.append(("".join(pieces), i, end, elements, letter_count))
        i = end
    return runs


def _is_letter(norm: str, kind: str) -> bool:
    return kind == "word" and len(norm) == 1 and "a" <= norm <= "z"


def _character_follows(a: Analysis, i: int, letters: bool) -> bool:
    """A spelled character comes next, past commas and dashes ("four, dash, nine")."""
    while i < len(a.tokens) and a.tokens[i].norm in (_CODE_JOINERS | _DASHES):
        i += 1
    return _starts_character(a, i, letters)


def _starts_character(a: Analysis, i: int, letters: bool) -> bool:
    if i >= len(a.tokens):
        return False
    atom = a.atom_at(i)
    if atom is not None:
        return atom.kind in _NUMBER_KINDS
    return letters and _is_letter(a.tokens[i].norm, a.tokens[i].kind)


# --- counts ---------------------------------------------------------------------------------


def find_counts(text: str, unit: str | None = None) -> list[Mention[Count]]:
    """ "six monthly payments", "over 6 months", "15 days": numbers of a unit.

    ``unit`` filters: "payments" (also "instalments"/"installments"), "months",
    "days", "weeks", "years"; singular accepted.
    """
    wanted = _unit_named(unit) if unit is not None else None
    a = analyse(text)
    tokens = a.tokens
    out: list[Mention[Count]] = []
    for run in _number_runs(a):
        atom = run[-1]
        if len(run) != 1 or atom.kind not in ("cardinal", "numeral"):
            continue
        k = atom.last
        while k < len(tokens) and k - atom.last < _MAX_MODIFIERS:
            if tokens[k].norm not in _COUNT_MODIFIERS:
                break
            k += 1
        if k < len(tokens) and tokens[k].norm in _UNIT_WORDS:
            found = _UNIT_WORDS[tokens[k].norm]
            if wanted is None or found == wanted:
                out.append(_mention(a, Count(atom.value, found), atom.first, k + 1))
    return out


def _unit_named(unit: str) -> Unit:
    key = unit.lower().strip()
    if key in _UNIT_WORDS:
        return _UNIT_WORDS[key]
    raise ValueError(f"unit must be one of payments, months, days, weeks, years, kwh; got {unit!r}")


# --- dates ----------------------------------------------------------------------------------


def find_dates(text: str, *, default_year: int = clock.TODAY.year) -> list[Mention[date]]:
    """Calendar dates said or written in ``text``; a date needs a month and a day."""
    a = analyse(text)
    return [
        Mention(value, start, end, text[start:end]) for value, start, end in _dates(a, default_year)
    ]


def _dates(a: Analysis, default_year: int) -> list[tuple[date, int, int]]:
    found: list[tuple[date, int, int]] = []
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
        if token.kind == "word" and token.norm in MONTH_NUMBERS:
            spoken = _month_first(a, i, default_year)
        else:
            spoken = _day_first(a, i, default_year)
        if spoken is not None:
            value, first, last = spoken
            start, end = a.span(first, last)
            found.append((value, start, end))
    found.sort(key=lambda item: (item[1], -item[2]))
    kept: list[tuple[date, int, int]] = []
    for item in found:
        if not kept or item[1] >= kept[-1][2]:
            kept.append(item)
    return kept


def _valid_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _month_first(a: Analysis, i: int, default_year: int) -> tuple[date, int, int] | None:
    """ "October tenth", "Oct. 10, 2026", "October the tenth twenty twenty-six"."""
    tokens = a.tokens
    month = MONTH_NUMBERS[tokens[i].norm]
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
    if j >= len(tokens) or tokens[j].kind != "word" or tokens[j].norm not in MONTH_NUMBERS:
        return None
    year, last = _year_after(a, j + 1, default_year)
    value = _valid_date(year, MONTH_NUMBERS[tokens[j].norm], day[0])
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
    run = _atoms_from(a, k)
    if run:
        head = run[0]
        if head.kind == "numeral" and len(head.digits) == 4 and 1900 <= head.value < 2200:
            return head.value, head.last
        if head.kind == "cardinal" and 1900 <= head.value < 2200:
            return head.value, head.last  # "two thousand twenty-six", "nineteen hundred"
        if head.kind == "cardinal" and head.value in (19, 20, 21):
            tail = _two_digit(run, 1)  # "twenty twenty-six", "twenty oh five"
            if tail is not None:
                return head.value * 100 + tail[0], run[tail[1]].last
    return default_year, j


def _date_token_ranges(a: Analysis) -> list[tuple[int, int]]:
    """Token ranges covered by dates, so "twenty twenty-six" after a month is not money."""
    ranges = []
    for _value, start, end in _dates(a, clock.TODAY.year):
        covered = [k for k, t in enumerate(a.tokens) if t.start < end and start < t.end]
        if covered:
            ranges.append((covered[0], covered[-1] + 1))
    return ranges


# --- email ----------------------------------------------------------------------------------


def find_email(text: str) -> list[Mention[str]]:
    """ "dana dot whitfield at example dot com", "d a n a at ...", "dana.whitfield@example.com"."""
    a = analyse(text)
    out: list[Mention[str]] = []
    for i, token in enumerate(a.tokens):
        if token.norm != "at":
            continue
        local = _email_local(a, i)
        domain = _email_domain(a, i)
        if local is None or domain is None:
            continue
        (local_text, first), (domain_text, last) = local, domain
        out.append(_mention(a, f"{local_text}@{domain_text}", first, last))
    return out


def _email_piece(a: Analysis, k: int, *, local: bool) -> tuple[str, str] | None:
    """(role, characters) of token ``k`` inside an address: letter, digit, word or connector.

    Stop words matter only before "at" ("my email is dana at ..."); after it the
    domain ends at the first word that does not follow a dot.
    """
    token = a.tokens[k]
    if token.kind == "num" and token.norm.isdigit():
        return "digit", token.norm
    if token.kind == "sym" and token.norm in _CONNECTOR_CHARS:
        return "connector", _CONNECTOR_CHARS[token.norm]
    if token.kind != "word":
        return None
    if token.norm in _DIGIT_OF:
        return "digit", _DIGIT_OF[token.norm]
    if token.norm in _CONNECTOR_CHARS:
        return "connector", _CONNECTOR_CHARS[token.norm]
    if len(token.norm) == 1:
        return "letter", token.norm
    if (local and token.norm in EMAIL_STOP_WORDS) or not token.norm.isalnum():
        return None
    return "word", token.norm


def _email_local(a: Analysis, at: int) -> tuple[str, int] | None:
    """Read backwards from "at": chunks of (a word | spelled characters) joined by connectors."""
    parts: list[str] = []
    state = "need"  # need a chunk / "digits" so far / "spelled" / "closed" by a word
    k = at - 1
    first = at
    while k >= 0:
        piece = _email_piece(a, k, local=True)
        if piece is None:
            break
        role, chars = piece
        if role == "connector":
            if state == "need":
                break
            state = "need"
        elif role == "word":
            if state not in ("need", "digits"):
                break
            state = "closed"
        elif state == "closed":
            break
        else:
            state = "spelled" if role == "letter" or state == "spelled" else "digits"
        parts.append(chars)
        first = k
        k -= 1
    if state == "need" and parts:
        parts.pop()
        first += 1
    if not parts:
        return None
    return "".join(reversed(parts)), first


def _email_domain(a: Analysis, at: int) -> tuple[str, int] | None:
    """Read forwards from "at": a word (digits may follow) or spelled characters, dots between."""
    parts: list[str] = []
    state = "need"
    k = at + 1
    last, kept = at + 1, 0  # end of the last complete chunk, and its parts
    while k < len(a.tokens):
        piece = _email_piece(a, k, local=False)
        if piece is None:
            break
        role, chars = piece
        if role == "connector":
            if state == "need":
                break
            state = "need"
        elif state == "need":
            state = "word" if role == "word" else "spelled"
        elif role == "word" or (state == "word" and role == "letter"):
            break  # "dot com a few days": the address ended at "com"
        parts.append(chars)
        k += 1
        if state != "need":
            last, kept = k, len(parts)
    domain = "".join(parts[:kept])
    if "." not in domain or domain.startswith(".") or domain.endswith("."):
        return None
    return domain, last


# --- windows ----------------------------------------------------------------------------------


def mentions_near(
    text: str, mentions: Sequence[Mention[T]], keywords: Iterable[str], window_words: int
) -> list[Mention[T]]:
    """The mentions with one of ``keywords`` (words or phrases) within ``window_words`` words.

    Distance counts the words strictly between the mention and the keyword, in
    either direction; punctuation is not a word.
    """
    words = [t for t in analyse(text).tokens if t.kind != "punct"]
    norms = [t.norm for t in words]
    phrases = {tuple(t.norm for t in tokenize(k) if t.kind != "punct") for k in keywords}
    places: list[tuple[int, int]] = []  # word index ranges of keyword hits
    for phrase in phrases:
        if not phrase:
            continue
        size = len(phrase)
        for k in range(len(norms) - size + 1):
            if tuple(norms[k : k + size]) == phrase:
                places.append((k, k + size))
    out: list[Mention[T]] = []
    for mention in mentions:
        inside = [k for k, t in enumerate(words) if t.start < mention.end and mention.start < t.end]
        if not inside:
            continue
        lo, hi = inside[0], inside[-1] + 1
        for start, end in places:
            gap = start - hi if start >= hi else lo - end if end <= lo else 0
            if gap <= window_words:
                out.append(mention)
                break
    return out
