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


def test_each_finder_parses_a_text_once_and_shares_the_result() -> None:
    from vamos_env.speech import find_amounts, find_rates, normalise

    analyse.cache_clear()
    text = UTTERANCES[1]
    first = (find_amounts(text), find_money(text), find_rates(text), normalise(text))
    kept = dict(analyse(text).memo)
    again = (find_amounts(text), find_money(text), find_rates(text), normalise(text))
    assert again == first
    assert analyse(text).memo.keys() == kept.keys()  # nothing computed twice
    assert all(analyse(text).memo[k] is v for k, v in kept.items())
    assert analyse.cache_info().misses == 1


def test_the_cache_is_bounded_and_clear_cache_forgets_everything() -> None:
    from vamos_env.speech import clear_cache
    from vamos_env.speech.numbers import CACHE_SIZE

    assert analyse.cache_info().maxsize == CACHE_SIZE
    for k in range(CACHE_SIZE + 10):
        find_money(f"you owe {k} dollars")
    assert analyse.cache_info().currsize == CACHE_SIZE
    clear_cache()
    assert analyse.cache_info().currsize == 0
