"""What the two ears make of each other's words: codes read so a recogniser keeps their
digits, and finished speech heard as finished (no audio needed)."""

from __future__ import annotations

import pytest

from vamos_env.callers.listening import listen
from vamos_env.duplex.cascade import money_in_words, paced_digits
from vamos_env.duplex.engine import _finished


@pytest.mark.parametrize(
    ("text", "paced"),
    [
        (
            "To confirm: account four nine four four dash two nine eight seven five, name Kwame.",
            "To confirm: account four, nine, four, four, dash, two, nine, eight, seven, five, "
            "name Kwame.",
        ),
        ("the card ending 4 4 4 4?", "the card ending four, four, four, four?"),
        ("That's one eight one zero four.", "That's one, eight, one, zero, four."),
    ],
)
def test_the_cascade_reads_codes_one_digit_at_a_time(text: str, paced: str) -> None:
    assert paced_digits(text) == paced


@pytest.mark.parametrize(
    "text",
    ["Your bill is $73.29, due October 10.", "Two payments of one hundred dollars.", "one two"],
)
def test_amounts_and_short_numbers_are_read_as_they_are(text: str) -> None:
    assert paced_digits(text) == text


def test_paced_codes_are_still_heard_as_codes() -> None:
    heard = listen(paced_digits("To confirm: account four nine four four dash two nine. Right?"))
    assert [m.value for m in heard.digits] == ["4944-29"]


def test_speech_the_agent_finished_is_heard_as_finished() -> None:
    # Whisper often leaves the last sentence open; the caller heard the agent stop.
    assert _finished("Shall I charge it to the card ending 4444") == (
        "Shall I charge it to the card ending 4444."
    )
    assert _finished("Is that right?") == "Is that right?"
    assert _finished("and the bill is paid,") == "and the bill is paid."
    assert _finished("") == ""
    # Open text is taken for speech cut short: its last value may be incomplete.
    assert listen("Shall I charge it to the card ending 4444").digits == ()
    assert [m.value for m in listen(_finished("... the card ending 4444")).digits] == ["4444"]


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        (
            "Shall I charge two hundred fifteen twenty-eight today?",
            "Shall I charge two hundred fifteen dollars and twenty-eight cents today?",
        ),
        (
            "That's seventy-five dollars, then sixty-two fifty.",
            "That's seventy-five dollars, then sixty-two dollars and fifty cents.",
        ),
        ("It is $1,234.00 in all.", "It is one thousand two hundred thirty-four dollars in all."),
        ("Your account four four one seven.", "Your account four four one seven."),
    ],
)
def test_the_cascade_says_amounts_whole(text: str, spoken: str) -> None:
    assert money_in_words(text) == spoken
