"""Dates as a person says or writes them, back to calendar dates."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env import clock
from vamos_env.speech import find_dates

OCT_10 = date(2026, 10, 10)

# (heard, the one date in it); a missing year is the frozen clock's year, 2026.
SPOKEN_DATES = [
    ("the twelfth of March", date(2026, 3, 12)),
    ("March 12th", date(2026, 3, 12)),
    ("March twelfth", date(2026, 3, 12)),
    ("march twelve", date(2026, 3, 12)),
    ("October 10th", OCT_10),
    ("October tenth", OCT_10),
    ("October ten", OCT_10),
    ("October the tenth", OCT_10),
    ("Oct 10", OCT_10),
    ("Oct. 10", OCT_10),
    ("10/10/2026", OCT_10),
    ("10/10/26", OCT_10),
    ("10-10-2026", OCT_10),
    ("2026-10-10", OCT_10),
    ("October 10, 2026", OCT_10),
    ("October 10 2026", OCT_10),
    ("October tenth, twenty twenty-six", OCT_10),
    ("October tenth twenty twenty six", OCT_10),
    ("October ten, twenty twenty-six", OCT_10),
    ("October 10th, 2026", OCT_10),
    ("October tenth, two thousand twenty-six", OCT_10),
    ("October tenth, two thousand and twenty-six", OCT_10),
    ("the tenth of October twenty twenty-six", OCT_10),
    ("the tenth of October, 2026", OCT_10),
    ("the 10th of October", OCT_10),
    ("10th of October", OCT_10),
    ("10 October 2026", OCT_10),
    ("tenth October", OCT_10),
    ("your first payment is due on October tenth.", OCT_10),
    ("Saturday, October 10th", OCT_10),
    ("October twenty-first", date(2026, 10, 21)),
    ("October twenty first", date(2026, 10, 21)),
    ("October twenty one", date(2026, 10, 21)),
    ("October thirty-first", date(2026, 10, 31)),
    ("the thirty-first of October", date(2026, 10, 31)),
    ("September first", date(2026, 9, 1)),
    ("the first of September", date(2026, 9, 1)),
    ("September second", date(2026, 9, 2)),
    ("September 25", date(2026, 9, 25)),
    ("September twenty-fifth", date(2026, 9, 25)),
    ("May fifth", date(2026, 5, 5)),
    ("January third, twenty twenty-seven", date(2027, 1, 3)),
    ("January 3rd, 2027", date(2027, 1, 3)),
    ("February twenty-eighth twenty twenty-seven", date(2027, 2, 28)),
    ("December twentieth", date(2026, 12, 20)),
    ("the twentieth of December", date(2026, 12, 20)),
    ("March fifth, twenty oh five", date(2005, 3, 5)),
    ("March fifth, two thousand five", date(2005, 3, 5)),
    ("June first, nineteen ninety-nine", date(1999, 6, 1)),
    ("July fourth, nineteen hundred", date(1900, 7, 4)),
    ("August 22nd", date(2026, 8, 22)),
    ("November eleventh", date(2026, 11, 11)),
    ("the 2nd of April", date(2026, 4, 2)),
    ("1/3/2027", date(2027, 1, 3)),
    # The recogniser runs a word into the month ("due October" -> "duactober").
    ("The first payment is duactober 10.", date(2026, 10, 10)),
    ("it is dueseptember twelfth", date(2026, 9, 12)),
    ("the 3rd of bynovember", date(2026, 11, 3)),
    ("it was paid onjune 3", date(2026, 6, 3)),
    ("the payment is duemay fifth", date(2026, 5, 5)),
]

NOT_DATES = [
    "the 10th",  # a day without a month is not a date
    "the tenth",
    "on the tenth of next month",
    "10/10",  # month and day without a year could be a fraction
    "October 2026",  # a month without a day
    "in October",
    "February thirtieth",  # no such day
    "2026-02-30",
    "13/13/2026",
    "may I help you",
    "the first payment",
    "wait a second",
    "to my dismay 5 people",  # a short month inside a word is no month
    "a rejune 3",
    "duactober",  # a glued month still needs a day
]


@pytest.mark.parametrize(("heard", "expected"), SPOKEN_DATES)
def test_spoken_and_written_dates(heard: str, expected: date) -> None:
    found = find_dates(heard)
    assert [m.value for m in found] == [expected], heard
    assert heard[found[0].start : found[0].end] == found[0].text


@pytest.mark.parametrize("heard", NOT_DATES)
def test_not_dates(heard: str) -> None:
    assert find_dates(heard) == []


def test_default_year_is_the_frozen_clock_year_unless_given() -> None:
    assert find_dates("March 3rd")[0].value == date(clock.TODAY.year, 3, 3)
    assert find_dates("March 3rd", default_year=2027)[0].value == date(2027, 3, 3)
    assert find_dates("March 3rd, 2026", default_year=2027)[0].value == date(2026, 3, 3)


def test_several_dates_and_their_evidence() -> None:
    heard = "Your bill was due September tenth; the new due date is the 25th of September."
    found = find_dates(heard)
    assert [m.value for m in found] == [date(2026, 9, 10), date(2026, 9, 25)]
    assert [m.text for m in found] == ["September tenth", "the 25th of September"]


def test_a_day_number_after_the_month_is_not_taken_as_a_year() -> None:
    # "twenty-six" alone is not a year: October 20, the default year.
    (mention,) = find_dates("October twenty twenty-six")
    assert mention.value == date(2026, 10, 20)
    assert mention.text == "October twenty"
