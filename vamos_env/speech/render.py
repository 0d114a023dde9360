"""Values as a person says them: money, numbers, dates, counts and codes in words.

The reference agent speaks with these, and every rendering here parses back to
its value with ``vamos_env.speech.parse`` (the tests hold both sides to that).
Deterministic and locale-fixed: American English, no "and" inside numbers.

Negative money is rendered "minus ..." rather than "a credit of ...": the sign
then survives a round trip, and an agent that wants the friendlier wording can
say "a credit of" + ``money(abs(cents))`` itself.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from vamos_env.speech.vocabulary import (
    CARDINAL_TO_ORDINAL,
    DIGIT_WORDS,
    EMAIL_STOP_WORDS,
    MONTHS,
    SYMBOL_WORDS,
    TEENS,
    TENS,
)

MoneyStyle = Literal["words", "short", "digits"]
DateStyle = Literal["words", "digits"]

_LARGEST = 10**12  # number() speaks up to "nine hundred ninety-nine billion ..."
_TEEN_WORDS = {v: k for k, v in TEENS.items()}
_TEN_WORDS = {v: k for k, v in TENS.items()}
_SCALE_STEPS = ((1_000_000_000, "billion"), (1_000_000, "million"), (1_000, "thousand"))
# Words a listener would hear as syntax inside an email address, so an address
# part spelled like one is spelled out letter by letter instead; before the "at",
# also the words that end an address read backwards ("my", "is").
_RESERVED_IN_DOMAIN = frozenset(
    {*DIGIT_WORDS, *SYMBOL_WORDS.values(), "oh", "double", "triple", "hyphen", "period"}
)
_RESERVED_IN_LOCAL = _RESERVED_IN_DOMAIN | EMAIL_STOP_WORDS


def number(n: int) -> str:
    """Cardinal words: 1214 -> "one thousand two hundred fourteen"; negatives "minus ..."."""
    if n < 0:
        return "minus " + number(-n)
    if n >= _LARGEST:
        raise ValueError(f"number() speaks values below 10**12, got {n}")
    if n == 0:
        return "zero"
    parts = []
    for step, name in _SCALE_STEPS:
        count, n = divmod(n, step)
        if count:
            parts.append(f"{_below_thousand(count)} {name}")
    if n:
        parts.append(_below_thousand(n))
    return " ".join(parts)


def _below_hundred(n: int) -> str:
    if n < 10:
        return DIGIT_WORDS[n]
    if n < 20:
        return _TEEN_WORDS[n]
    tens, units = divmod(n, 10)
    word = _TEN_WORDS[tens * 10]
    return f"{word}-{DIGIT_WORDS[units]}" if units else word


def _below_thousand(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    head = f"{DIGIT_WORDS[hundreds]} hundred" if hundreds else ""
    if not rest:
        return head
    return f"{head} {_below_hundred(rest)}" if head else _below_hundred(rest)


def ordinal(n: int) -> str:
    """Ordinal words: 21 -> "twenty-first", 100 -> "one hundredth"."""
    if n < 1:
        raise ValueError(f"ordinal() needs a positive number, got {n}")
    words = number(n)
    head, sep, last = _split_last_word(words)
    return head + sep + CARDINAL_TO_ORDINAL[last]


def _split_last_word(words: str) -> tuple[str, str, str]:
    cut = max(words.rfind(" "), words.rfind("-"))
    if cut < 0:
        return "", "", words
    return words[:cut], words[cut], words[cut + 1 :]


def _ordinal_digits(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def money(cents: int, *, style: MoneyStyle = "words") -> str:
    """Money as spoken.

    - ``words``: "two hundred fourteen dollars and seven cents", "one dollar",
      "fifty cents", "zero dollars".
    - ``short``: "sixty-five fifty-two", "two hundred fourteen oh seven". Only
      parsed as money near a money word ("your balance is ..."), as a listener
      would. Round dollars, amounts under a dollar, and whole hundreds with
      cents ("one hundred fifty-two" would be heard as 152) fall back to words.
    - ``digits``: "$65.52", "$1,234.56", "-$5.00" (for text channels and TTS).
    """
    sign = "minus " if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    if style == "digits":
        return f"{'-' if cents < 0 else ''}${dollars:,}.{rest:02d}"
    if style == "short" and dollars and rest and dollars % 100:
        cents_words = _below_hundred(rest) if rest >= 10 else f"oh {DIGIT_WORDS[rest]}"
        return f"{sign}{number(dollars)} {cents_words}"
    if style not in ("words", "short"):
        raise ValueError(f"money style must be words, short or digits, got {style!r}")
    dollar_part = f"{number(dollars)} dollar{'' if dollars == 1 else 's'}"
    cent_part = f"{number(rest)} cent{'' if rest == 1 else 's'}"
    if dollars and rest:
        return f"{sign}{dollar_part} and {cent_part}"
    return sign + (cent_part if rest else dollar_part)


def year_spoken(year: int) -> str:
    """2026 -> "twenty twenty-six", 2005 -> "two thousand five", 1905 -> "nineteen oh five"."""
    if not 1000 <= year <= 9999:
        raise ValueError(f"year_spoken() needs a four-digit year, got {year}")
    century, rest = divmod(year, 100)
    if 2000 <= year <= 2009:
        return number(year)
    if rest == 0:
        return f"{_below_hundred(century)} hundred"
    tail = _below_hundred(rest) if rest >= 10 else f"oh {DIGIT_WORDS[rest]}"
    return f"{_below_hundred(century)} {tail}"


def date_spoken(d: date, *, with_year: bool = False, style: DateStyle = "words") -> str:
    """A date as said: "October tenth", "October tenth, twenty twenty-six" (``words``),
    "October 10th", "October 10th, 2026" (``digits``)."""
    month = MONTHS[d.month - 1].capitalize()
    if style == "words":
        text = f"{month} {ordinal(d.day)}"
        return f"{text}, {year_spoken(d.year)}" if with_year else text
    if style == "digits":
        text = f"{month} {_ordinal_digits(d.day)}"
        return f"{text}, {d.year}" if with_year else text
    raise ValueError(f"date style must be words or digits, got {style!r}")


def characters(code: str) -> str:
    """Spell a code one character at a time: "4417-90781" -> "four four one seven dash nine ..."."""
    return " ".join(_character(ch) for ch in code)


def _character(ch: str) -> str:
    if ch.isdigit() and ch.isascii():
        return DIGIT_WORDS[int(ch)]
    if ch.isalpha():
        return ch.upper()
    if ch in SYMBOL_WORDS:
        return SYMBOL_WORDS[ch]
    raise ValueError(f"characters() cannot spell {ch!r}")


def email_spoken(address: str, *, spell_letters: bool = False) -> str:
    """ "dana.whitfield@example.com" -> "dana dot whitfield at example dot com".

    Letter runs are said as words (a text-to-speech voice pronounces them) unless
    ``spell_letters``; digits and symbols are always spelled.
    """
    words: list[str] = []
    run = ""
    reserved = _RESERVED_IN_LOCAL
    for ch in address.lower() + "\0":
        if ch.isalpha():
            run += ch
            continue
        if run:
            spell = spell_letters or len(run) == 1 or run in reserved
            words.append(characters(run).lower() if spell else run)
            run = ""
        if ch == "@":
            reserved = _RESERVED_IN_DOMAIN
        if ch != "\0":
            words.append(_character(ch))
    return " ".join(words)


def count(n: int, unit: str) -> str:
    """ "six monthly payments", "one day", "fifteen days": ``unit`` is given singular."""
    if n == 1:
        return f"{number(n)} {unit}"
    return f"{number(n)} {_plural(unit)}"


def _plural(unit: str) -> str:
    if unit.endswith(("s", "x", "ch", "sh")):
        return unit + "es"
    if unit.endswith("y") and len(unit) > 1 and unit[-2] not in "aeiou":
        return unit[:-1] + "ies"
    return unit + "s"
