"""What was said, back into values: money, numbers, digit strings, dates, counts, emails.

The scripted caller understands the agent with these, and the grader's code
verifier checks spoken values with them. Every finder returns ``Mention``s:
the value plus the exact characters it came from, so a check can quote its
evidence. Input is ASR-ish text: any case, digits or words, stray hyphens and
commas, "oh" for zero.

Rules a reader must know (each is a decision, tested in tests/speech/):

- **Amounts** (``find_amounts``, in ``money.py``, whose docstring has the
  grammar) are every stretch a listener could take as money, with every
  reading its words allow, most likely first: "sixty-five fifty-two" is
  (6552, 655200) cents, "six fifty-six point three one" (65631,), "six
  hundred fifty-six and thirty-one cents" (65631,), "one hundred twelve even"
  (11200,), "two fifteen twenty-eight" (21528,). ``marked`` says a money word
  or sign belongs to it. Dates, counts with a unit, percentages, prices per
  kWh, clock times, years after "in", phone numbers, digit-by-digit codes and
  figures a code word governs ("card ending in forty-two forty-two") are not
  amounts. ``find_rates`` reads prices in cents per kWh ("nine point eight
  nine cents", "$0.0989 per kWh" -> 9.89).
- **Money** (``find_money``) is the amounts a listener would take as money
  without being asked: marked ones ("$65.52", "sixty-five dollars and
  fifty-two cents", "fifty cents", "one hundred twelve even"), and unmarked
  groups or decimals in a money context ("your balance is sixty-five
  fifty-two", "the balance is 65.52"), as the most likely reading. The
  context rule: scanning back up to six words (within the sentence), the
  nearest cue or blocker word decides; cues are money words (dollars, amount,
  balance, pay, owe, payment, instalment, bill, total, due, charge, a month,
  ...), blockers are code words (ending, digits, zip, postal, code, number,
  "last four", ...). With no word either way behind it, a cue up to five words
  after the figure counts. A checker that knows what it asked (a question about
  the amount due) should read ``find_amounts`` instead: the question is the cue.
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

Library evaluation (numbers as words are a solved problem in general; these
were installed and tried on the forms above). ``text2num`` 3.1 (Rust,
``alpha2digit``), ``number-parser`` 0.3.2, ``numerizer`` 0.2.4,
``word2number`` 1.1 and ``text2digits`` 0.1.2 all return a rewritten string
or one number, never offsets (a check quotes its evidence), and none reads
money: "six fifty-six point three one" became "6 56.31" (text2num), "6 56
point 3 1" (number-parser), "656 point 3 1" (numerizer), 306.31
(word2number), "656.31" (text2digits, the closest); "six hundred fifty-six
and thirty-one cents" became "656 and 31 cents" or, in numerizer, "687
cents", and in word2number 6; "sixty-five fifty-two" became "65 52", "60 500
52" (numerizer), 352 (word2number) or "6552" (text2digits, one value, the
ambiguity gone); none reads "oh" as zero ("2 14 oh 7"), "even", "nine
eighty-nine cents a kWh", and text2digits glues the traps into amounts
("one five two one three" -> "15213", "forty-two forty-two" -> "4242",
"October tenth twenty twenty-six" -> "October 10 2026" but as one run, with
no date). What they do well is the cardinal grammar, about 100 lines in
``numbers.py``; the work is in what comes after (groups, figures, marks,
readings, the traps), which no library has, so this package depends on none.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from vamos_env.speech.dates import find_dates
from vamos_env.speech.mention import Count, Mention, Unit, mention
from vamos_env.speech.money import Amount, find_amounts, find_money, find_rates
from vamos_env.speech.numbers import NUMBER_KINDS, Analysis, analyse, number_runs
from vamos_env.speech.tokens import tokenize
from vamos_env.speech.vocabulary import (
    COUNT_MODIFIERS,
    DIGIT_WORDS,
    EMAIL_STOP_WORDS,
    HEARD_TENS,
    MONTH_NUMBERS,
    ORDINAL_TO_CARDINAL,
    SCALES,
    SPOKEN_DIGITS,
    TEENS,
    UNIT_WORDS,
    UNITS,
)

__all__ = [
    "Amount",
    "Count",
    "Mention",
    "Unit",
    "find_amounts",
    "find_codes",
    "find_counts",
    "find_dates",
    "find_digit_strings",
    "find_email",
    "find_money",
    "find_numbers",
    "find_rates",
    "mentions_near",
    "without_unfinished_figure",
]

T = TypeVar("T")

_MAX_MODIFIERS = 2
_DASHES = frozenset({"dash", "hyphen", "minus"})
_CODE_JOINERS = frozenset({",", "(", ")"})
_CONNECTOR_CHARS = {
    "dot": ".", "period": ".", "underscore": "_", "dash": "-", "hyphen": "-", "plus": "+",
}  # fmt: skip


def _sign_start(a: Analysis, first: int) -> int | None:
    if first > 0 and a.tokens[first - 1].norm in ("minus", "negative"):
        return first - 1
    return None


# --- numbers, digit strings, codes ----------------------------------------------------------


def find_numbers(text: str) -> list[Mention[int]]:
    """Standalone whole numbers ("fifteen", "a hundred", "1,200", "minus three")."""
    a = analyse(text)
    return list(a.remember("find_numbers", lambda: tuple(_numbers(a))))


def _numbers(a: Analysis) -> list[Mention[int]]:
    out: list[Mention[int]] = []
    for run in number_runs(a):
        if len(run) != 1 or run[0].kind not in ("cardinal", "numeral"):
            continue
        atom = run[0]
        if _touches_code_symbol(a, atom.first, atom.last):
            continue
        sign_first = _sign_start(a, atom.first)
        if sign_first is None:
            out.append(mention(a, atom.value, atom.first, atom.last))
        else:
            out.append(mention(a, -atom.value, sign_first, atom.last))
    return out


def _touches_code_symbol(a: Analysis, first: int, last: int) -> bool:
    code_symbols = ("dash", "hyphen", "/", "dot")
    before = a.tokens[first - 1].norm if first > 0 else ""
    after = a.tokens[last].norm if last < len(a.tokens) else ""
    return before in code_symbols or after in code_symbols


def find_digit_strings(text: str) -> list[Mention[str]]:
    """Digit strings as read out: "four four one seven dash nine zero ..." -> "4417-90..."."""
    a = analyse(text)
    return list(a.remember("find_digit_strings", lambda: tuple(_digit_strings(a))))


def _digit_strings(a: Analysis) -> list[Mention[str]]:
    out: list[Mention[str]] = []
    for value, first, last, elements, _letters in _code_runs(a, letters=False):
        single_short = elements == 1 and not (
            a.atoms[a.atom_starting[first]].kind == "numeral" and len(value) >= 3
        )
        if single_short:
            continue
        if first > 0 and a.tokens[first - 1].norm == "$":
            continue  # "$1,234" is money, not a code
        out.append(mention(a, value, first, last))
    return out


def find_codes(text: str) -> list[Mention[str]]:
    """Codes spelled with letters and digits: "A C M E dash four two" -> "ACME-42".

    A run needs two spelled letters, or one letter among at least three
    characters, so the article in "a one-time fee" is not a code.
    """
    a = analyse(text)
    return list(a.remember("find_codes", lambda: tuple(_codes(a))))


def _codes(a: Analysis) -> list[Mention[str]]:
    out: list[Mention[str]] = []
    for value, first, last, elements, letters in _code_runs(a, letters=True):
        if letters >= 2 or (letters == 1 and elements >= 3):
            out.append(mention(a, value, first, last))
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
            if atom is not None and atom.kind in NUMBER_KINDS:
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
        return atom.kind in NUMBER_KINDS
    return letters and _is_letter(a.tokens[i].norm, a.tokens[i].kind)


# --- counts ---------------------------------------------------------------------------------


def find_counts(text: str, unit: str | None = None) -> list[Mention[Count]]:
    """ "six monthly payments", "over 6 months", "15 days": numbers of a unit.

    ``unit`` filters: "payments" (also "instalments"/"installments"), "months",
    "days", "weeks", "years"; singular accepted.
    """
    wanted = _unit_named(unit) if unit is not None else None
    a = analyse(text)
    found = a.remember("find_counts", lambda: tuple(_counts(a)))
    return [m for m in found if wanted is None or m.value.unit == wanted]


def _counts(a: Analysis) -> list[Mention[Count]]:
    tokens = a.tokens
    out: list[Mention[Count]] = []
    for run in number_runs(a):
        atom = run[-1]
        if len(run) != 1 or atom.kind not in ("cardinal", "numeral"):
            continue
        k = atom.last
        while k < len(tokens) and k - atom.last < _MAX_MODIFIERS:
            if tokens[k].norm not in COUNT_MODIFIERS:
                break
            k += 1
        if k < len(tokens) and tokens[k].norm in UNIT_WORDS:
            unit = UNIT_WORDS[tokens[k].norm]
            out.append(mention(a, Count(atom.value, unit), atom.first, k + 1))
    return out


def _unit_named(unit: str) -> Unit:
    key = unit.lower().strip()
    if key in UNIT_WORDS:
        return UNIT_WORDS[key]
    raise ValueError(f"unit must be one of payments, months, days, weeks, years, kwh; got {unit!r}")


# --- email ----------------------------------------------------------------------------------


def find_email(text: str) -> list[Mention[str]]:
    """ "dana dot whitfield at example dot com", "d a n a at ...", "dana.whitfield@example.com"."""
    a = analyse(text)
    return list(a.remember("find_email", lambda: tuple(_emails(a))))


def _emails(a: Analysis) -> list[Mention[str]]:
    out: list[Mention[str]] = []
    for i, token in enumerate(a.tokens):
        if token.norm != "at":
            continue
        local = _email_local(a, i)
        domain = _email_domain(a, i)
        if local is None or domain is None:
            continue
        (local_text, first), (domain_text, last) = local, domain
        out.append(mention(a, f"{local_text}@{domain_text}", first, last))
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
    if token.norm in SPOKEN_DIGITS:
        return "digit", SPOKEN_DIGITS[token.norm]
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
    for said in mentions:
        inside = [k for k, t in enumerate(words) if t.start < said.end and said.start < t.end]
        if not inside:
            continue
        lo, hi = inside[0], inside[-1] + 1
        for start, end in places:
            gap = start - hi if start >= hi else lo - end if end <= lo else 0
            if gap <= window_words:
                out.append(said)
                break
    return out


# Words a spoken figure is made of (money, a number, a date, a code), and the words that
# can only end one: a figure cut off on any other of its words may have gone on.
_FIGURE_WORDS = frozenset(
    {*UNITS, *TEENS, *HEARD_TENS, *SCALES, *DIGIT_WORDS, *MONTH_NUMBERS}
    | {"hundred", "and", "oh", "point", "dollar", "dollars", "$", "dash", "minus", "dot"}
    | {"double", "triple"}
)
_FIGURE_ENDS = frozenset({"cent", "cents", "percent", *ORDINAL_TO_CARDINAL})


def without_unfinished_figure(text: str) -> str:
    """What a listener takes from speech that was cut off: all but an unfinished figure.

    A reply cut in the middle of a figure ("Your payment of two hundred", "due
    September") leaves the listener a figure that may have gone on ("two hundred
    eleven dollars and thirty-three cents", "September thirtieth"); it states nothing.
    The trailing figure is dropped unless its last word can only end one (cents, an
    ordinal day, percent): "...sixty-seven cents" and "September thirtieth" are whole.
    """
    tokens = [t for t in tokenize(text) if t.kind != "punct"]
    start = None
    for token in reversed(tokens):
        if token.kind in ("num", "ordnum") or token.norm in _FIGURE_WORDS:
            start = token.start
            continue
        break
    if start is None or tokens[-1].kind == "ordnum" or tokens[-1].norm in _FIGURE_ENDS:
        return text
    return text[:start].rstrip()
