"""Digit strings, spelled codes and standalone numbers, as read out on a call."""

from __future__ import annotations

import pytest

from vamos_env.speech import find_codes, find_digit_strings, find_numbers

# (what was heard, the one digit string in it)
SPOKEN_DIGITS = [
    ("four four one seven dash nine zero seven eight one", "4417-90781"),
    ("four four one seven", "4417"),
    ("my account number is four four one seven dash nine zero seven eight one", "4417-90781"),
    # The trap: the group after the dash read as one number.
    ("four four one seven dash ninety thousand seven hundred eighty-one", "4417-90781"),
    ("forty-four seventeen dash ninety thousand seven hundred eighty one", "4417-90781"),
    ("forty-four seventeen dash nine oh seven eight one", "4417-90781"),
    ("four four one seven hyphen nine zero seven eight one", "4417-90781"),
    ("four four one seven - nine zero seven eight one", "4417-90781"),
    ("4417-90781", "4417-90781"),
    ("it's 4417 - 90781", "4417-90781"),
    ("44 17 dash 907 81", "4417-90781"),
    ("four four one seven, dash, nine zero seven eight one", "4417-90781"),
    ("four four one seven dash", "4417"),
    ("one five two one three", "15213"),
    ("my zip is one five two one three.", "15213"),
    ("fifteen two thirteen", "15213"),
    ("15213", "15213"),
    ("ending in four two four two", "4242"),
    ("the card ending in forty-two forty-two", "4242"),
    ("the last four are 4242", "4242"),
    ("oh seven", "07"),
    ("two oh seven", "207"),
    ("zero zero seven", "007"),
    ("double oh seven", "007"),
    ("double four one seven", "4417"),
    ("triple five one two", "55512"),
    ("four one two, five five five, one two three four", "4125551234"),
    ("four one two five five five one two three four", "4125551234"),
    ("(412) 555-1234", "412555-1234"),
    ("nine oh two one oh", "90210"),
    ("one nine oh five", "1905"),
    ("twenty twenty-six", "2026"),
    ("Four Four One Seven", "4417"),
]

# Codes with letters, spelled one character at a time.
SPOKEN_CODES = [
    ("A C M E", "ACME"),
    ("a c m e dash four two", "ACME-42"),
    ("M E T dash one two three four", "MET-1234"),
    ("the meter is X Y seven seven oh one", "XY7701"),
    ("B seven seven", "B77"),
    ("in underscore A B C", "ABC"),
]

# Heard text with no digit string in it.
NO_DIGIT_STRING = [
    "fifteen days",
    "one more thing",
    "ninety thousand seven hundred eighty-one",  # one number, said as a number
    "I have 15 days",
    "Oh, okay",
    "$1,234 is the bill",
    "the first and the second",
]

# (heard, the standalone numbers in it)
SPOKEN_NUMBERS = [
    ("fifteen", [15]),
    ("a hundred", [100]),
    ("I have fifteen days and a hundred reasons", [15, 100]),
    ("one thousand two hundred", [1200]),
    ("1,200", [1200]),
    ("two hundred and fourteen", [214]),
    ("twelve hundred", [1200]),
    ("ninety-nine thousand nine hundred ninety-nine", [99999]),
    ("one million two hundred thousand", [1200000]),
    ("three billion", [3000000000]),
    ("zero", [0]),
    ("sixty five", [65]),
    ("the one ending in four two four two", [1]),
    ("four four one seven", []),  # a code, not a quantity
    ("one five two one three", []),  # a postal code, not a quantity
    ("4417-90781", []),
    ("10/10/2026", []),
    ("twenty twenty-six", []),
    ("the twenty-first", []),  # ordinals are not quantities
    ("Oh, okay", []),
    ("minus three", [-3]),
    ("twelve point five", []),  # a decimal is not a whole number
    ("negative 40", [-40]),
]


@pytest.mark.parametrize(("heard", "digits"), SPOKEN_DIGITS)
def test_digit_strings_read_out(heard: str, digits: str) -> None:
    found = find_digit_strings(heard)
    assert [m.value for m in found] == [digits], heard
    assert heard[found[0].start : found[0].end] == found[0].text


@pytest.mark.parametrize(("heard", "code"), SPOKEN_CODES)
def test_spelled_codes(heard: str, code: str) -> None:
    assert [m.value for m in find_codes(heard)] == [code]


@pytest.mark.parametrize("heard", NO_DIGIT_STRING)
def test_not_digit_strings(heard: str) -> None:
    assert find_digit_strings(heard) == []


@pytest.mark.parametrize(("heard", "numbers"), SPOKEN_NUMBERS)
def test_standalone_numbers(heard: str, numbers: list[int]) -> None:
    assert [m.value for m in find_numbers(heard)] == numbers


def test_an_article_is_not_a_spelled_letter() -> None:
    assert find_codes("a one-time fee of a hundred dollars") == []
    assert find_codes("I have a question") == []


def test_a_digit_string_keeps_its_evidence_span() -> None:
    heard = "Sure, it's four four one seven dash nine zero seven eight one, thanks."
    (mention,) = find_digit_strings(heard)
    assert mention.text == "four four one seven dash nine zero seven eight one"
    assert mention.start == heard.index("four")
