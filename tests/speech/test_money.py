"""Money as said and as written, back to integer cents, and what is not money."""

from __future__ import annotations

import pytest

from vamos_env.speech import find_money, money, without_unfinished_figure

# (what was heard, the amount in cents). Each must yield exactly this one amount.
SPOKEN_MONEY = [
    # the words style the agent uses
    ("two hundred fourteen dollars and seven cents", 21407),
    ("sixty-five dollars and fifty-two cents", 6552),
    ("one dollar", 100),
    ("fifty cents", 50),
    ("zero dollars", 0),
    ("one thousand two hundred dollars", 120000),
    ("one cent", 1),
    ("one dollar and one cent", 101),
    ("ninety-nine dollars and ninety-nine cents", 9999),
    ("twelve thousand three hundred forty-five dollars and sixty-seven cents", 1234567),
    ("one hundred thousand dollars", 10000000),
    ("one million dollars", 100000000),
    # ASR spellings of the same
    ("sixty five dollars", 6500),
    ("Sixty-Five Dollars And Fifty-Two Cents", 6552),
    ("sixty five dollars and fifty two cents", 6552),
    ("sixty-five dollars fifty-two cents", 6552),
    ("two hundred and fourteen dollars and seven cents", 21407),
    ("a hundred dollars", 10000),
    ("a dollar", 100),
    ("a dollar and five cents", 105),
    ("twelve hundred dollars", 120000),
    ("twenty-five hundred dollars", 250000),
    ("a thousand dollars", 100000),
    ("one thousand and five dollars", 100500),
    ("forty bucks", 4000),
    ("fourty dollars", 4000),
    ("one hundred and fifty cents", 150),
    ("seven cents", 7),
    ("sixty-five dollars and fifty-two", 6552),
    ("sixty-five dollars fifty-two", 6552),
    ("two dollars and oh seven cents", 207),
    ("three dollars and five", 305),
    # digits as transcribed
    ("$65.52", 6552),
    ("$1,234.56", 123456),
    ("$0.50", 50),
    ("$5", 500),
    ("$65.5", 6550),
    ("$ 40", 4000),
    ("$1,200", 120000),
    ("$100,000.00", 10000000),
    ("65.52 dollars", 6552),
    ("65 dollars 52 cents", 6552),
    ("65 dollars and 52 cents", 6552),
    ("65 dollars", 6500),
    ("52 cents", 52),
    ("1,200 dollars", 120000),
    ("sixty-five dollars and 52 cents", 6552),
    ("65 dollars and fifty-two cents", 6552),
    # the short style, heard in a money context
    ("your balance is sixty-five fifty-two", 6552),
    ("the amount is two fourteen oh seven", 21407),
    ("your bill is two hundred fourteen oh seven", 21407),
    ("you owe five fifty-two", 552),
    ("the payment would be one oh five", 105),
    ("the total comes to twelve thirty-four fifty-six", 123456),
    ("each instalment is thirty-five sixty-eight", 3568),
    ("the monthly installment is nineteen ninety-nine", 1999),
    ("I paid forty-two ten", 4210),
    ("a down payment of ninety-nine oh one", 9901),
    ("the charge is 65 52", 6552),
    ("it's due: sixty-five fifty-two", 6552),
    ("sixty-five fifty-two is the total", 6552),
    ("sixty-five fifty-two for this month's payment", 6552),
    ("you're paying one thousand two hundred thirty-four fifty-six", 123456),
    ("you owe twenty zero five", 2005),
    ("the balance is twenty twenty-six", 2026),
    ("the balance is 65.52", 6552),
    ("you'd pay 35.68 a month", 3568),
    ("that's thirty-five sixty-eight a month", 3568),
    ("we'll split the 428.14 over twelve months", 42814),
    ("sixty-five point five two dollars", 6552),
    ("sixty-five point five dollars", 6550),
]

# Sign words and signs.
SIGNED_MONEY = [
    ("minus five dollars", -500),
    ("negative sixty-five dollars and fifty-two cents", -6552),
    ("-$5.00", -500),
    ("-$1,234.56", -123456),
    ("your balance is minus sixty-five fifty-two", -6552),
    ("minus fifty cents", -50),
]

# Said in one breath: every amount, in order.
SEVERAL = [
    ("a hundred dollars, fifty cents", [10000, 50]),
    ("sixty-five dollars, fifty-two cents", [6500, 52]),
    ("pay $65.52 today and 65.52 dollars next month", [6552, 6552]),
    (
        "your balance is two hundred fourteen dollars and seven cents, and I can split it "
        "into six payments of thirty-five sixty-eight",
        [21407, 3568],
    ),
    ("sixty five dollars 65 dollars", [6500, 6500]),
    ("a down payment of fifty dollars and then twenty-five fifty a month", [5000, 2550]),
]

# Heard text with no amount of money in it: the code verifier's traps.
NOT_MONEY = [
    "my postal code is one five two one three",
    "the zip is fifteen two thirteen",
    "I'll pay with the card ending in forty-two forty-two",
    "the card ending in four two four two, can you use that to pay",
    "my account number is four four one seven dash nine zero seven eight one",
    "account forty-four seventeen dash ninety seven eighty-one for the bill",
    "call four one two, five five five, one two three four to pay",
    "my phone number is four one two five five five one two three four",
    "the last four digits are twelve thirty-four, on the card I pay with",
    "I want to pay in six payments",
    "pay it over twelve monthly payments",
    "a fifteen day extension on the bill",
    "the payment is due October tenth twenty twenty-six",
    "your bill is due on the twelfth of March",
    "your bill is due 10/10/2026",
    "you used eight hundred eighty-five kilowatt hours",
    "the price went up five percent",
    "the price went up 2.50 percent",
    "version 65.52 of the app",
    "the total is 65.5",  # a written amount has two decimals
    "at twelve point five cents per kilowatt hour",  # a rate, not an amount
    "the rate is twelve point five two cents per kilowatt hour",
    "the rate is 12.52 cents",
    "I can pay at ten thirty am",
    "the payment window opens at nine fifteen o'clock",
    "I'll pay fifty",
    "sixty-five fifty-two",  # no money word anywhere: a bare pair
    "it's forty two",
    "Oh, okay, thank you",
    "the first payment",
    "two of the payments were late",
]


@pytest.mark.parametrize(("heard", "cents"), SPOKEN_MONEY + SIGNED_MONEY)
def test_spoken_money_is_read_as_one_amount(heard: str, cents: int) -> None:
    found = find_money(heard)
    assert [m.value for m in found] == [cents], heard
    mention = found[0]
    assert heard[mention.start : mention.end] == mention.text


@pytest.mark.parametrize(("heard", "amounts"), SEVERAL)
def test_several_amounts_in_one_utterance(heard: str, amounts: list[int]) -> None:
    assert [m.value for m in find_money(heard)] == amounts


@pytest.mark.parametrize("heard", NOT_MONEY)
def test_codes_counts_dates_and_bare_numbers_are_not_money(heard: str) -> None:
    assert find_money(heard) == [], heard


def test_evidence_is_the_exact_span_including_the_sign() -> None:
    heard = "Okay. Your balance is minus sixty-five fifty-two, due today."
    (mention,) = find_money(heard)
    assert mention.text == "minus sixty-five fifty-two"
    assert (mention.start, mention.end) == (22, 48)


def test_bare_amounts_are_dollars_only_when_asked_and_in_context() -> None:
    assert find_money("I'll pay fifty") == []
    assert [m.value for m in find_money("I'll pay fifty", bare_amounts=True)] == [5000]
    assert [m.value for m in find_money("the balance is 1,200", bare_amounts=True)] == [120000]
    # Context still rules: no money word, a code word, or a unit after it.
    assert find_money("I have fifty", bare_amounts=True) == []
    assert find_money("the code is fifty, for the bill", bare_amounts=True) == []
    assert find_money("pay it in six payments", bare_amounts=True) == []


def test_short_style_needs_money_context_but_words_style_does_not() -> None:
    assert find_money(money(6552, style="short")) == []
    assert [m.value for m in find_money(money(6552))] == [6552]
    assert [m.value for m in find_money(money(6552, style="digits"))] == [6552]


def test_more_than_two_decimals_is_not_an_amount() -> None:
    assert find_money("$65.525") == []


@pytest.mark.parametrize(
    ("heard", "kept"),
    [
        ("Your payment of two hundred", "Your payment of"),
        ("It shows four hundred thirty-seven dollars and ninety-seven", "It shows"),
        ("It stays due September", "It stays due"),
        ("account four four seven nine dash nine", "account"),
        ("The total is sixty-seven cents", "The total is sixty-seven cents"),
        ("Your new due date is September thirtieth", "Your new due date is September thirtieth"),
        ("It was paid on the 10th", "It was paid on the 10th"),
        (
            "It can run from 2 to 36 monthly payments, so",
            "It can run from 2 to 36 monthly payments, so",
        ),
        ("Thanks.", "Thanks."),
    ],
)
def test_a_cut_drops_only_the_figure_it_broke_off(heard: str, kept: str) -> None:
    assert without_unfinished_figure(heard) == kept
