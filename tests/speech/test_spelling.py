"""Names spelled on the line, with a word for each letter or letter by letter."""

from __future__ import annotations

import pytest

from vamos_env.speech import (
    SPELLING_ALPHABET,
    find_letter,
    find_spelled,
    fits_spelling,
    last_name,
    spelled,
    spelling_pattern,
)


@pytest.mark.parametrize("name", ["Kwame", "Novak", "Whitfield", "Zoe", "Xiomara", "Quincy"])
@pytest.mark.parametrize("with_words", [True, False])
def test_a_spelling_reads_back_as_the_name(name: str, with_words: bool) -> None:
    assert find_spelled(spelled(name, with_words=with_words)) == name


def test_every_letter_has_its_word() -> None:
    alphabet = "".join(SPELLING_ALPHABET)
    assert alphabet == "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    assert find_spelled(spelled(alphabet)) == alphabet.capitalize()
    assert spelled("Kwame") == (
        "K as in Kilo, W as in Whiskey, A as in Alfa, M as in Mike, E as in Echo."
    )


@pytest.mark.parametrize(
    ("heard", "word"),
    [
        # Whisper through a street: the letters are lost, their words are not.
        ("And as in November, I was an Oscar, the as in Victor, and as in Alpha, K as in "
         "Kilo.", "Novak"),
        ("Kay as in kilo, W is in whiskey, I as in Alpha, M as in Mike, E as in echo.", "Kwame"),
        ("I was an Oscar, apostrophe, Emma's in Mike, I as an alpha, Elas and Lina, Elas and "
         "Lina, I as an echo, why as a Yankee?", "O'Malley"),
        ("W is in Whiskey, Aizan Alpha, Aizan Lina, Aizan Sierra, Hizan Hotel, hyphen, Aizan "
         "Oscar, Bizan Bravo, Aizan India.", "Walsh-Obi"),
        # The hyphen said alone and heard near its word; the joint written as "M.S.".
        ("W is in Whiskey, Isan Alpha, Aliz and Lima, S is in Sierra, H is in Hotel, Hiphon, "
         "Aliz and Oscar, B is in Bravo, I is in India.", "Walsh-Obi"),
        ("M.S. and Mike, he is an echo, I is an India.", "Mei"),
        # The hyphen as it sounds, one word or two, even split by a comma.
        ("S. as in Sierra. Hi, Finn. Why as in Yankee. I as an alpha.", "S-Ya"),
        ("S as in Sierra. Hi Finn. Why as in Yankee? I as an alpha.", "S-Ya"),
        ("K as in Kilo, S as in Sierra, Hifen, why as in Yankee, I as an alpha.", "Ks-Ya"),
        # The letter before its word misheard, the joint run into the word: the word wins.
        ("D. As Invictor. As in Alpha. And as in November.", "Van"),
        # A stretch the recogniser repeated: a letter three times is two.
        ("See as in Charlie, I as an alpha, S as in Sierra, T as in Tango, I as an India, Elas "
         "and Lina, Elas and Lina, Elas and Lina, Elas and Oscar.", "Castillo"),
        # ... or after a letter's word with no comma between ("as a November Space").
        ("V as Invictor, I as an Alpha, and as a November Space, D as in Delta, E as an Echo, R "
         "as in Romeo", "Van Der"),
        # Letters run together without their commas.
        ("Eisenhower and as in November and as in November, H as in Hotel.", "Annh"),
        ("H is in Hope Tell, Eisenhower and as in November and as in November, Eisenhower, H is "
         "in Hope Tell.", "Hannah"),
        ("S.S. and Sierra, Isan Alpha, Amazon Mike, U.S. and uniform, he is an echo, Alice and "
         "Lima.", "Samuel"),
        # The words alone, without "as in".
        ("November, Oscar, Victor, Alpha, Kilo.", "Novak"),
        ("Juliet, Oscar, X-ray.", "Jox"),
        # Letters one by one, or joined by the recogniser.
        ("K W A M E.", "Kwame"),
        ("KWAME.", "Kwame"),
        ("K-W-A-M-E", "Kwame"),
    ],
)  # fmt: skip
def test_what_a_recogniser_makes_of_a_spelling(heard: str, word: str) -> None:
    assert find_spelled(heard) == word


@pytest.mark.parametrize(
    "heard",
    [
        "Yes, that's right.",
        "It's Kwame Novak.",
        "I",
        "",
        "Mike.",
        # A letter lost ("A as in Alfa" as "Ice and Hover"): a spelling not heard whole is
        # not taken, or it would refute a name heard right.
        "S.S. and Sierra, Ice and Hover, Amazon Mike, U.S. and Uniform, E.S. and Echo, Alice and "
        "Lima.",
    ],
)
def test_nothing_spelled(heard: str) -> None:
    assert find_spelled(heard) is None


def test_a_word_without_letters_cannot_be_spelled() -> None:
    with pytest.raises(ValueError, match="no letters"):
        spelled("4417")


def test_a_surname_of_two_words_is_spelled_with_a_space() -> None:
    assert last_name("Elena Van Horn") == "Van Horn"
    assert last_name("Gregory Ann Moreau") == "Moreau"
    assert last_name("Van Morrison") == "Morrison"  # the first word is the first name
    said = spelled("Van Horn")
    assert "N as in November, space, H as in Hotel" in said
    assert find_spelled(said) == "Van Horn"


def test_a_letter_split_from_its_word_by_a_comma_is_one_letter() -> None:
    # Whisper on "O as in Oscar" and "U as in Uniform": "Oh, as an Oscar", "he was in uniform".
    heard = ("And as in Mike, oh, as an Oscar, or as in Romeo, he as an echo, as an alpha, he "
             "was in uniform.")  # fmt: skip
    assert find_spelled(heard) == "Moreau"
    assert find_spelled("D is in golf. R is in Romeo. Oh, as an Oscar.") == "Gro"
    # A letter said alone and split from its word by a stop is one letter too.
    assert find_spelled("P. as in Papa, or as in Romeo, I as in India.") == "Pri"
    assert find_spelled("And as in November, oh, as an Oscar, K, as in Kilo.") == "Nok"


def test_a_spelling_with_letters_lost_keeps_the_letters_that_came_through() -> None:
    # "E as in Echo, L as in Lima, E as in Echo, N as in November, A as in Alfa" in the angry
    # voice through Whisper: two stretches give no letter, and each is one letter lost.
    heard = "He has an echo, Alice and Lemon. He has an echo, and as in November, Ice and Hover."
    pattern = spelling_pattern(heard)
    assert pattern == "E?en?"
    # "Lena" is how Whisper writes Lima in every room: it is the letter, not a lost one.
    assert spelling_pattern(heard.replace("Lemon", "Lena")) == "Elen?"
    assert find_spelled(heard) is None
    assert fits_spelling("Elena", pattern)
    assert not fits_spelling("Alina", pattern)  # the first letter came through as E
    assert not fits_spelling("Elen", pattern) and not fits_spelling("Elenas", pattern)
    assert spelling_pattern(spelled("Kwame")) == "Kwame"
    assert spelling_pattern("Yes, that's right.") is None


def test_a_letter_split_from_its_word_with_a_word_between_is_one_letter() -> None:
    # "K as in Kilo, O as in Oscar, ..." beside a television through Whisper.
    heard = (
        "K as in kilo. Oh, it was an Oscar. W as in whiskey. That is an alpha. El as in Lena. "
        "S as in Sierra. K as in kilo. I as in India."
    )
    assert spelling_pattern(heard) == "Kowalski"
    # A capital before the joint is a letter of its own, not a word between.
    assert spelling_pattern("Ice and Hover, I as in India, N as in November.") == "?in"
    assert spelling_pattern("Eisenhower, I as in India, N as in November.") == "Ain"
    # A stretch of several words that gave no letter is a letter of its own: "L as in
    # Lima, E as in Echo, E as in Echo" in the angry voice in a quiet room.
    assert spelling_pattern("Elas and Lemon, he is an echo, he is an echo.") == "?ee"
    assert spelling_pattern("Elas and Lena, he is an echo, he is an echo.") == "Lee"
    # Without the comma between them, a stretch that gave no letter is still one lost
    # ("B as in Bravo, R as in Romeo" for Brooks-Yamada, in the angry voice).
    assert spelling_pattern("Dias and Brubbo are as in Romeo, oh as an Oscar.") == "?ro"
    assert spelling_pattern("So the D as in Delta, I as in India.") == "Di"
    assert spelling_pattern("Elas and Lena is an echo, he is an echo.") == "Lee"


def test_a_word_as_close_to_two_letters_words_is_the_letter_said_before_it() -> None:
    # "olfa" is as close to Alfa as to Golf: the "A" said before it decides, and with
    # that lost too the letter is lost, not guessed (a wrong letter would outvote a right
    # hearing of the name).
    heard = (
        "T as in Tango, H as in Hotel, O as in Oscir, Ms as in Mike, A as in olfa, S as in Sierra."
    )
    assert spelling_pattern(heard) == "Thomas"
    assert spelling_pattern(heard.replace("A as in olfa", "as in olfa")) == "Thom?s"


@pytest.mark.parametrize(
    ("heard", "letter"),
    [("A.", "A"), ("It's an A.", "A"), ("A as in Alfa.", "A"), ("Alpha.", "A"),
     ("I think it's A.", "A"), ("Hey.", None), ("B, C", None), ("Yes, that's right.", None),
     ("A as in olfa.", "A"), ("olfa.", None)],
)  # fmt: skip
def test_one_letter_said_alone(heard: str, letter: str | None) -> None:
    assert find_letter(heard) == letter
