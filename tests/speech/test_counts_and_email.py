"""Counts with their units (payments are not months), emails, normalising, windows."""

from __future__ import annotations

import pytest

from vamos_env.speech import (
    Count,
    find_counts,
    find_email,
    find_money,
    mentions_near,
    normalise,
)

SPOKEN_COUNTS = [
    ("six payments", Count(6, "payments")),
    ("six monthly payments", Count(6, "payments")),
    ("six monthly instalments", Count(6, "payments")),
    ("twelve equal monthly installments", Count(12, "payments")),
    ("over 6 months", Count(6, "months")),
    ("over six months", Count(6, "months")),
    ("a six-month plan", Count(6, "months")),
    ("15 days", Count(15, "days")),
    ("fifteen more days", Count(15, "days")),
    ("a fifteen-day extension", Count(15, "days")),
    ("one payment", Count(1, "payments")),
    ("thirty-six months", Count(36, "months")),
    ("sixty monthly payments", Count(60, "payments")),
    ("two weeks", Count(2, "weeks")),
    ("one year", Count(1, "years")),
    ("ten business days", Count(10, "days")),
    ("3 installments", Count(3, "payments")),
]

NOT_COUNTS = [
    "the sixth payment",  # an ordinal names one payment, it counts none
    "a monthly payment",  # no number said
    "six",
    "your payment of six dollars",
    "four four one seven days",  # a code next to a unit is not a count
]


@pytest.mark.parametrize(("heard", "expected"), SPOKEN_COUNTS)
def test_counts_with_units(heard: str, expected: Count) -> None:
    found = find_counts(heard)
    assert [m.value for m in found] == [expected]
    assert [m.value for m in find_counts(heard, expected.unit)] == [expected]


@pytest.mark.parametrize("heard", NOT_COUNTS)
def test_not_counts(heard: str) -> None:
    assert find_counts(heard) == []


def test_a_number_of_payments_is_not_a_number_of_months() -> None:
    assert find_counts("six payments", "months") == []
    assert find_counts("six monthly payments", "months") == []
    assert find_counts("over six months", "payments") == []
    assert [m.value.n for m in find_counts("six months of payments", "months")] == [6]
    assert find_counts("six months of payments", "payments") == []


def test_unit_names_are_checked() -> None:
    assert find_counts("six instalments", "instalment")[0].value == Count(6, "payments")
    with pytest.raises(ValueError, match="unit must be one of"):
        find_counts("six fortnights", "fortnights")


SPOKEN_EMAILS = [
    ("dana dot whitfield at example dot com", "dana.whitfield@example.com"),
    ("my email is dana dot whitfield at example dot com please", "dana.whitfield@example.com"),
    ("dana.whitfield@example.com", "dana.whitfield@example.com"),
    ("It's Dana.Whitfield@Example.com.", "dana.whitfield@example.com"),
    ("d a n a at example dot com", "dana@example.com"),
    ("it's d a n a seven seven at example dot com", "dana77@example.com"),
    ("dana underscore w at mail dot example dot org", "dana_w@mail.example.org"),
    ("send it to j dot smith seven seven at my dash mail dot org okay", "j.smith77@my-mail.org"),
    ("dana dot whitfield at example dot com, is that right?", "dana.whitfield@example.com"),
    ("dana at example dot com and then the bill", "dana@example.com"),
]

NOT_EMAILS = [
    "I'll be at home",
    "call me at five five five one two three four",
    "at example",
    "my email is at example dot com",
]


@pytest.mark.parametrize(("heard", "address"), SPOKEN_EMAILS)
def test_spoken_emails(heard: str, address: str) -> None:
    found = find_email(heard)
    assert [m.value for m in found] == [address]
    assert heard[found[0].start : found[0].end] == found[0].text


@pytest.mark.parametrize("heard", NOT_EMAILS)
def test_not_emails(heard: str) -> None:
    assert find_email(heard) == []


def test_normalise() -> None:
    assert normalise("Sixty-Five dollars, and $1,234.56!") == "sixty five dollars and $ 1234.56"
    assert normalise("Dana.Whitfield@example.com") == "dana dot whitfield at example dot com"
    assert normalise("4417-90781, the 10th") == "4417 dash 90781 the 10"
    assert normalise("It’s -$5") == "it's minus $ 5"


def test_mentions_near_keeps_amounts_close_to_a_topic() -> None:
    heard = (
        "Your balance is two hundred fourteen dollars and seven cents. If you like, the "
        "arrangement would be six payments of thirty-five sixty-eight each."
    )
    amounts = find_money(heard)
    assert [m.value for m in amounts] == [21407, 3568]
    near_balance = mentions_near(heard, amounts, {"balance"}, 3)
    assert [m.value for m in near_balance] == [21407]
    near_plan = mentions_near(heard, amounts, ["six payments"], 2)
    assert [m.value for m in near_plan] == [3568]
    assert mentions_near(heard, amounts, {"refund"}, 50) == []
    # the window counts words strictly between: "six payments of [amount]" is 1 apart
    assert mentions_near(heard, amounts, ["six payments"], 0) == []
