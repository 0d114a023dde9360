"""Finders share one analysis of an utterance (the grader runs several on each turn)."""

from __future__ import annotations

from vamos_env.speech import find_counts, find_dates, find_digit_strings, find_money
from vamos_env.speech.numbers import analyse

UTTERANCES = [
    "Thanks for waiting. Your current balance is two hundred fourteen dollars and seven "
    "cents, and it was due on September tenth. I can set up six monthly payments of "
    "thirty-five sixty-eight, with the first one due October tenth. Would you like that?",
    "Okay, so I have your account four four one seven dash nine zero seven eight one, and "
    "the card ending in four two four two. To confirm, you want to pay sixty-five dollars "
    "and fifty-two cents today with that card, is that right?",
]


def test_later_finders_reuse_the_analysis_of_the_same_text() -> None:
    analyse.cache_clear()
    text = UTTERANCES[0]
    find_money(text)
    before = analyse.cache_info()
    find_dates(text)
    find_counts(text)
    find_digit_strings(text)
    after = analyse.cache_info()
    assert after.misses == before.misses
    assert after.hits > before.hits
