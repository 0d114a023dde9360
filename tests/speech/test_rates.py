"""``find_rates``: prices in cents per kWh, with decimal cents, never read as amounts."""

from __future__ import annotations

from decimal import Decimal

import pytest

from vamos_env.speech import find_amounts, find_money, find_rates

WHOLE = ""  # the price is everything heard

# (heard, the price's characters, cents per kWh)
RATES = [
    ("nine point eight nine cents", WHOLE, "9.89"),
    ("9.89 cents per kilowatt-hour", WHOLE, "9.89"),
    ("nine eighty-nine cents a kWh", WHOLE, "9.89"),
    ("$0.0989 per kWh", WHOLE, "9.89"),
    ("0.0989 dollars per kWh", WHOLE, "9.89"),
    ("9.89¢/kWh", WHOLE, "9.89"),
    (
        "at twelve point five cents per kilowatt hour",
        "twelve point five cents per kilowatt hour",
        "12.5",
    ),
    ("the rate is 12.52 cents", "12.52 cents", "12.52"),
    ("ten point eight seven five cents per kilowatt hour", WHOLE, "10.875"),
    ("the supply rate is eleven cents", "eleven cents", "11"),
    ("the price to compare is 10.4 cents", "10.4 cents", "10.4"),
    ("twelve cents per kWh", WHOLE, "12"),
    ("eleven point two five cents for each kilowatt hour", WHOLE, "11.25"),
    ("nine point eighty-nine cents", WHOLE, "9.89"),
    ("supply at 11 cents per kWh", "11 cents per kWh", "11"),
    ("nine eighty-nine per kilowatt hour", WHOLE, "9.89"),
]


@pytest.mark.parametrize(("heard", "said", "cents"), RATES)
def test_prices_per_kwh(heard: str, said: str, cents: str) -> None:
    (rate,) = find_rates(heard)
    assert rate.value == Decimal(cents)
    assert str(rate.value) == cents  # tidy: "9.89", not "9.8900"
    said = said or heard
    assert rate.text == said == heard[rate.start : rate.end]
    assert find_amounts(heard) == [] and find_money(heard) == []


NOT_RATES = [
    "fifty cents",  # an amount of money, not a price per kWh
    "your balance is sixty-five dollars and fifty-two cents",
    "920 kWh",
    "nine hundred twenty kilowatt hours",
    "the price went up five per cent",
    "sixty-five fifty-two",
]


@pytest.mark.parametrize("heard", NOT_RATES)
def test_amounts_and_energy_are_not_rates(heard: str) -> None:
    assert find_rates(heard) == []


def test_a_rate_beside_an_amount() -> None:
    heard = "You used 920 kWh at 9.89 cents per kWh, so supply came to $90.99."
    assert [r.value for r in find_rates(heard)] == [Decimal("9.89")]
    assert [m.value for m in find_money(heard)] == [9099]
