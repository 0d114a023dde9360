"""``find_amounts``: every way an amount is said, its span, every reading it allows."""

from __future__ import annotations

import pytest

from vamos_env.speech import Amount, find_amounts, find_money

WHOLE = ""  # the amount is everything heard

# (heard, the amount's characters, readings most likely first, marked by a money word)
FORMS: list[tuple[str, str, tuple[int, ...], bool]] = [
    # dollars and cents with the money words
    ("sixty-five dollars and fifty-two cents", WHOLE, (6552,), True),
    ("two hundred and fifteen dollars and twenty-eight cents", WHOLE, (21528,), True),
    ("the balance is sixty-five dollars fifty-two", "sixty-five dollars fifty-two", (6552,), True),
    ("215 dollars 28", WHOLE, (21528,), True),
    ("five dollars and fifty", WHOLE, (550,), True),
    ("a dollar fifty", WHOLE, (150,), True),
    ("half a dollar", WHOLE, (50,), True),
    ("a hundred and twelve dollars", WHOLE, (11200,), True),
    (
        "we can do a hundred and twelve dollars and fifty cents today",
        "a hundred and twelve dollars and fifty cents",
        (11250,),
        True,
    ),
    ("twelve hundred dollars", WHOLE, (120000,), True),
    ("forty bucks", WHOLE, (4000,), True),
    ("two million dollars", WHOLE, (200_000_000,), True),
    ("one point two million dollars", WHOLE, (120_000_000,), True),
    # no "dollars": "and N cents" makes the figure dollars
    ("six hundred fifty-six and thirty-one cents", WHOLE, (65631,), True),
    ("two hundred fifteen and twenty-eight cents", WHOLE, (21528,), True),
    ("two fourteen and seven cents", WHOLE, (21407,), True),
    ("twenty-one seventy-three and forty cents", WHOLE, (217340,), True),
    # the hundreds shortcut before "dollars" keeps its hundreds
    ("six fifty-six dollars and thirty-one cents", WHOLE, (65631,), True),
    ("two fifteen dollars and twenty-eight cents", WHOLE, (21528,), True),
    # "X point Y Z"
    ("six fifty-six point three one", WHOLE, (65631,), False),
    ("two fifteen point two eight", WHOLE, (21528,), False),
    ("two hundred fifteen point two eight", WHOLE, (21528,), False),
    ("sixty-five point five two", WHOLE, (6552,), False),
    ("sixty-five point fifty-two dollars", WHOLE, (6552,), True),
    ("sixty-five point five dollars", WHOLE, (6550,), True),
    ("six fifty six point three one dollars", WHOLE, (65631,), True),
    ("two fifteen point oh seven", WHOLE, (21507,), False),
    # paired groups, "oh" for zero
    ("two fourteen oh seven", WHOLE, (21407,), False),
    ("two fifteen twenty-eight", WHOLE, (21528,), False),
    ("twelve thirty-four fifty-six", WHOLE, (123456,), False),
    ("two hundred fourteen oh seven", WHOLE, (21407,), False),
    # no dollars: "zero" and a pair's cents
    ("zero sixty-five", WHOLE, (65,), False),
    ("the bill is zero sixty-five higher", "zero sixty-five", (65,), False),
    ("one thousand two hundred thirty-four fifty-six", WHOLE, (123456,), False),
    ("the new balance would be one thirty-six oh four.", "one thirty-six oh four", (13604,), False),
    ("the charge is 65 52", "65 52", (6552, 655200), False),
    # "even"
    ("one hundred twelve even", WHOLE, (11200,), True),
    ("the amount due is one hundred twelve even", "one hundred twelve even", (11200,), True),
    ("two fifteen even", WHOLE, (21500,), True),
    ("twenty-five hundred even", WHOLE, (250000,), True),
    ("one hundred twelve dollars even", WHOLE, (11200,), True),
    ("$112 even", WHOLE, (11200,), True),
    # written
    ("$215.28", WHOLE, (21528,), True),
    ("$1,215.28", WHOLE, (121528,), True),
    ("it's $65.52.", "$65.52", (6552,), True),
    ("your balance is $0.00", "$0.00", (0,), True),
    ("I owe $65 and 52 cents", "$65 and 52 cents", (6552,), True),
    ("$65 dollars", WHOLE, (6500,), True),
    ("$1.2 million", WHOLE, (120_000_000,), True),
    ("215.28", WHOLE, (21528,), False),
    ("the balance is 15,213.50", "15,213.50", (1521350,), False),
    ("50¢", WHOLE, (50,), True),
    # whole numbers said bare: dollars
    ("the amount due is one hundred twelve", "one hundred twelve", (11200,), False),
    ("a hundred and twelve", WHOLE, (11200,), False),
    ("twelve hundred", WHOLE, (120000,), False),
    ("I'll put a hundred on the card", "a hundred", (10000,), False),
    ("15,213", WHOLE, (1521300,), False),
    # signs
    ("a credit of minus five dollars", "minus five dollars", (-500,), True),
    (
        "your balance is minus sixty-five fifty-two",
        "minus sixty-five fifty-two",
        (-6552, -655200),
        False,
    ),
    ("-$1,234.56", WHOLE, (-123456,), True),
]

# An ambiguous figure keeps every reading instead of silently becoming one value.
AMBIGUOUS: list[tuple[str, tuple[int, ...]]] = [
    ("sixty-five fifty-two", (6552, 655200)),  # $65.52, or 6552 dollars said like a year
    ("six fifty-six", (656, 65600)),  # $6.56 or the hundreds shortcut $656
    ("one oh five", (105, 10500)),
    ("twenty oh five", (2005, 200500)),
    ("nineteen ninety-nine", (1999, 199900)),
    ("one fifty", (150, 15000)),
    ("one hundred and fifty cents", (150, 10050)),  # the "and" inside the number, or before cents
    ("a hundred and five cents", (105, 10005)),
    ("six fifty-six dollars", (65600, 656)),  # dollars: the figure as a number first
    ("nineteen ninety-nine dollars", (199900, 1999)),
]


def _one(heard: str) -> Amount:
    found = find_amounts(heard)
    assert len(found) == 1, (heard, found)
    return found[0]


@pytest.mark.parametrize(("heard", "said", "readings", "marked"), FORMS)
def test_every_form_is_one_amount_with_its_span_and_readings(
    heard: str, said: str, readings: tuple[int, ...], marked: bool
) -> None:
    amount = _one(heard)
    said = said or heard
    assert amount.text == said
    assert heard[amount.start : amount.end] == said
    assert amount.readings == readings
    assert amount.marked is marked
    assert amount.cents == readings[0]


@pytest.mark.parametrize(("heard", "readings"), AMBIGUOUS)
def test_an_ambiguous_amount_keeps_every_reading(heard: str, readings: tuple[int, ...]) -> None:
    amount = _one(heard)
    assert amount.readings == readings
    assert amount.text == heard


def test_forms_say_how_the_figure_was_said() -> None:
    forms = {
        "one hundred twelve": "whole",
        "sixty-five fifty-two": "paired",
        "two fourteen oh seven": "paired",
        "six fifty-six point three one": "decimal",
        "$65.52": "decimal",
        "sixty-five dollars and fifty-two cents": "dollars_and_cents",
        "six hundred fifty-six and thirty-one cents": "dollars_and_cents",
    }
    for heard, form in forms.items():
        assert _one(heard).form == form, heard


# Heard text in which no amount of money is said, even to a listener who expects one.
NOT_AMOUNTS = [
    # postal codes, digit by digit or in groups
    "my postal code is one five two one three",
    "the zip is fifteen two thirteen",
    "15213",
    "one five two one three",
    # card digits
    "I'll pay with the card ending in forty-two forty-two",
    "the card ending in four two four two",
    "the last four are 4242",
    "the last four digits are twelve thirty-four",
    # phone numbers, accounts, meters
    "call four one two, five five five, one two three four",
    "call me at four twelve, five fifty-five, twelve thirty-four",
    "my phone number is four one two five five five one two three four",
    "four four one seven dash nine zero seven eight one",
    "forty-four seventeen dash ninety seven eighty-one",
    "the meter number is one two three four five six",
    "double four one seven",
    # dates and years
    "October tenth twenty twenty-six",
    "the payment is due October tenth twenty twenty-six",
    "the twelfth of March",
    "10/10/2026",
    "in twenty twenty-six",
    "since 2019",
    "in 2026",
    # counts with a unit, percentages, energy
    "six payments",
    "pay it over twelve monthly payments",
    "split into six even payments",
    "a fifteen day extension",
    "two of the payments were late",
    "920 kWh",
    "you used nine hundred twenty kilowatt hours",
    "the price went up five percent",
    "it went up five per cent",
    "2.50%",
    "I have two questions",
    "one moment please",
    "one more thing",
    "the first one",
    "a one-time fee",
    # prices per kWh are rates, not amounts
    "nine point eight nine cents",
    "9.89 cents per kilowatt-hour",
    "nine eighty-nine cents a kWh",
    "$0.0989 per kWh",
    "the supply rate is eleven cents",
    # times
    "at ten thirty",
    "I can pay at ten thirty am",
    "nine fifteen o'clock",
    # versions and other dotted figures, decimals that are no amount
    "version 6.5.2",
    "the total is 65.5",
    "sixty-five point five two five",
    "$65.525",
    # ordinals, interjections
    "the sixth payment",
    "Oh, okay, thank you",
]


@pytest.mark.parametrize("heard", NOT_AMOUNTS)
def test_codes_dates_counts_rates_and_times_are_not_amounts(heard: str) -> None:
    assert find_amounts(heard) == [], heard
    assert find_money(heard) == [], heard
    assert find_money(heard, bare_amounts=True) == [], heard


def test_several_amounts_in_order_each_with_its_span() -> None:
    heard = (
        "Your balance is two hundred fourteen dollars and seven cents; six payments of "
        "thirty-five sixty-eight, the first on October tenth twenty twenty-six, and a fee of $5."
    )
    found = find_amounts(heard)
    assert [a.text for a in found] == [
        "two hundred fourteen dollars and seven cents",
        "thirty-five sixty-eight",
        "$5",
    ]
    assert [a.readings for a in found] == [(21407,), (3568, 356800), (500,)]
    assert all(heard[a.start : a.end] == a.text for a in found)


def test_a_comma_ends_an_amount() -> None:
    found = find_amounts("sixty-five dollars, fifty-two cents")
    assert [(a.text, a.readings) for a in found] == [
        ("sixty-five dollars", (6500,)),
        ("fifty-two cents", (52,)),
    ]


def test_a_list_of_amounts_is_not_a_phone_number() -> None:
    heard = "your last three bills were sixty-five fifty-two, seventy-one ten, eighty-three forty"
    assert [a.readings[0] for a in find_amounts(heard)] == [6552, 7110, 8340]


def test_even_that_begins_another_phrase_marks_nothing() -> None:
    (amount,) = find_amounts("it's sixty-five fifty-two even though you paid")
    assert (amount.text, amount.marked) == ("sixty-five fifty-two", False)
    (amount,) = find_amounts("that's fifty, even")
    assert (amount.text, amount.marked) == ("fifty", False)


def test_find_money_keeps_its_meaning_on_top_of_find_amounts() -> None:
    # A money word marks it: found anywhere.
    assert [m.value for m in find_money("one hundred twelve even")] == [11200]
    assert [m.value for m in find_money("six hundred fifty-six and thirty-one cents")] == [65631]
    # Unmarked groups need a money cue near, as before.
    assert find_money("sixty-five fifty-two") == []
    assert [m.value for m in find_money("the amount due is sixty-five fifty-two")] == [6552]
    assert find_money("six fifty-six point three one") == []
    assert [m.value for m in find_money("you owe six fifty-six point three one")] == [65631]
    # A bare whole number only with bare_amounts, and in context.
    assert find_money("the amount due is one hundred twelve") == []
    asked = "the amount due is one hundred twelve"
    assert [m.value for m in find_money(asked, bare_amounts=True)] == [11200]


def test_the_result_is_a_fresh_list_over_the_shared_parse() -> None:
    heard = "your balance is sixty-five fifty-two"
    first = find_amounts(heard)
    first.clear()
    assert len(find_amounts(heard)) == 1


@pytest.mark.parametrize(
    "text",
    [
        # A code read digit by digit, as a recogniser writes it: no stray amount in it.
        "Shall I charge $199.16 to the card ending 4, 4, 4, 4?",
        "Your payment of $199.16 on the card ending 8, 2, 1, 0 went through.",
        "It is 2, 2, 4, 9, 7.",
    ],
)
def test_digits_written_one_by_one_are_no_amount(text: str) -> None:
    unmarked = [a.text for a in find_amounts(text) if not a.marked]
    assert unmarked == []


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("The fee is 4, 4, 4, 4 dollars.", 400),  # a money word still marks its figure
        ("Sixty-five... sorry, two twenty-four ninety-seven.", 22497),  # words, not digits
        ("Then 1, 2, 3, 4.50 dollars.", 450),
    ],
)
def test_a_marked_or_spoken_amount_beside_single_digits_still_counts(text: str, cents: int) -> None:
    assert cents in {r for a in find_amounts(text) for r in a.readings}
