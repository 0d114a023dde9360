"""Values rendered as a person says them."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env.speech import (
    characters,
    count,
    date_spoken,
    email_spoken,
    money,
    number,
    ordinal,
    year_spoken,
)

MONEY = [
    (21407, "words", "two hundred fourteen dollars and seven cents"),
    (6552, "words", "sixty-five dollars and fifty-two cents"),
    (100, "words", "one dollar"),
    (50, "words", "fifty cents"),
    (1, "words", "one cent"),
    (0, "words", "zero dollars"),
    (120000, "words", "one thousand two hundred dollars"),
    (-6552, "words", "minus sixty-five dollars and fifty-two cents"),
    (6552, "short", "sixty-five fifty-two"),
    (21407, "short", "two hundred fourteen oh seven"),
    (105, "short", "one oh five"),
    (-6552, "short", "minus sixty-five fifty-two"),
    (6500, "short", "sixty-five dollars"),  # round dollars: words
    (52, "short", "fifty-two cents"),  # under a dollar: words
    (10052, "short", "one hundred dollars and fifty-two cents"),  # "one hundred fifty-two" = 152
    (6552, "digits", "$65.52"),
    (123456, "digits", "$1,234.56"),
    (0, "digits", "$0.00"),
    (-500, "digits", "-$5.00"),
]


@pytest.mark.parametrize(("cents", "style", "spoken"), MONEY)
def test_money(cents: int, style: str, spoken: str) -> None:
    assert money(cents, style=style) == spoken  # type: ignore[arg-type]


def test_money_rejects_an_unknown_style() -> None:
    with pytest.raises(ValueError, match="money style"):
        money(100, style="roman")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n", "spoken"),
    [
        (0, "zero"),
        (7, "seven"),
        (13, "thirteen"),
        (40, "forty"),
        (65, "sixty-five"),
        (100, "one hundred"),
        (214, "two hundred fourteen"),
        (1000, "one thousand"),
        (1200, "one thousand two hundred"),
        (90781, "ninety thousand seven hundred eighty-one"),
        (1_000_001, "one million one"),
        (2_000_300_000, "two billion three hundred thousand"),
        (-3, "minus three"),
    ],
)
def test_number(n: int, spoken: str) -> None:
    assert number(n) == spoken


def test_number_range() -> None:
    assert number(10**12 - 1).startswith("nine hundred ninety-nine billion")
    with pytest.raises(ValueError):
        number(10**12)


@pytest.mark.parametrize(
    ("n", "spoken"),
    [
        (1, "first"),
        (2, "second"),
        (3, "third"),
        (5, "fifth"),
        (8, "eighth"),
        (9, "ninth"),
        (10, "tenth"),
        (12, "twelfth"),
        (20, "twentieth"),
        (21, "twenty-first"),
        (30, "thirtieth"),
        (31, "thirty-first"),
        (100, "one hundredth"),
        (112, "one hundred twelfth"),
        (1000, "one thousandth"),
    ],
)
def test_ordinal(n: int, spoken: str) -> None:
    assert ordinal(n) == spoken


def test_dates() -> None:
    d = date(2026, 10, 10)
    assert date_spoken(d) == "October tenth"
    assert date_spoken(d, with_year=True) == "October tenth, twenty twenty-six"
    assert date_spoken(d, style="digits") == "October 10th"
    assert date_spoken(d, with_year=True, style="digits") == "October 10th, 2026"
    assert date_spoken(date(2026, 9, 1), style="digits") == "September 1st"
    assert date_spoken(date(2026, 9, 22), style="digits") == "September 22nd"
    assert date_spoken(date(2026, 9, 23), style="digits") == "September 23rd"
    assert date_spoken(date(2026, 9, 11), style="digits") == "September 11th"
    assert date_spoken(date(2026, 9, 12), style="digits") == "September 12th"


@pytest.mark.parametrize(
    ("year", "spoken"),
    [
        (2026, "twenty twenty-six"),
        (2010, "twenty ten"),
        (2005, "two thousand five"),
        (2000, "two thousand"),
        (1999, "nineteen ninety-nine"),
        (1905, "nineteen oh five"),
        (1900, "nineteen hundred"),
        (2100, "twenty-one hundred"),
    ],
)
def test_years(year: int, spoken: str) -> None:
    assert year_spoken(year) == spoken


def test_characters() -> None:
    assert characters("4417-90781") == "four four one seven dash nine zero seven eight one"
    assert characters("ACME") == "A C M E"
    assert characters("acme_2") == "A C M E underscore two"
    with pytest.raises(ValueError, match="cannot spell"):
        characters("4417~1")


def test_email_spoken() -> None:
    assert email_spoken("dana.whitfield@example.com") == "dana dot whitfield at example dot com"
    assert email_spoken("Dana77@example.com") == "dana seven seven at example dot com"
    assert email_spoken("dana@example.com", spell_letters=True) == (
        "d a n a at e x a m p l e dot c o m"
    )
    # A part that sounds like syntax ("one", "dot", "my") is spelled so it parses back.
    assert email_spoken("one.dot@my.org") == "o n e dot d o t at my dot org"
    assert email_spoken("my@x-y.com") == "m y at x dash y dot com"


def test_count() -> None:
    assert count(6, "monthly payment") == "six monthly payments"
    assert count(15, "day") == "fifteen days"
    assert count(1, "month") == "one month"
    assert count(2, "bus") == "two buses"
    assert count(3, "company") == "three companies"
