"""Spoken forms: values rendered as a person says them, and heard text parsed back.

``render`` turns money, numbers, dates, counts and codes into words (the
reference agent speaks with it); ``parse`` finds those values in what was said,
each with the characters it came from (the scripted caller and the grader's
code verifier listen with it). Every rendering parses back to its value.

Each text is analysed once per process and every finder's result is kept with
its analysis, so the caller, the gate and the checks share one parse of each
sentence (``clear_cache`` forgets them all).
"""

from __future__ import annotations

from vamos_env.speech.numbers import analyse
from vamos_env.speech.numbers import normalised as normalise
from vamos_env.speech.parse import (
    Amount,
    Count,
    Mention,
    Unit,
    find_amounts,
    find_codes,
    find_counts,
    find_dates,
    find_digit_strings,
    find_email,
    find_money,
    find_numbers,
    find_rates,
    mentions_near,
    without_unfinished_figure,
)
from vamos_env.speech.render import (
    characters,
    count,
    date_spoken,
    email_spoken,
    money,
    number,
    ordinal,
    year_spoken,
)
from vamos_env.speech.spelling import (
    NAME_PARTICLES,
    SPELLING_ALPHABET,
    find_letter,
    find_spelled,
    fits_spelling,
    last_name,
    name_part,
    spelled,
    spelling_pattern,
)


def clear_cache() -> None:
    """Forget every analysed text (benchmarks time a cold parse with this)."""
    analyse.cache_clear()


__all__ = [
    "NAME_PARTICLES",
    "SPELLING_ALPHABET",
    "Amount",
    "Count",
    "Mention",
    "Unit",
    "characters",
    "clear_cache",
    "count",
    "date_spoken",
    "email_spoken",
    "find_amounts",
    "find_codes",
    "find_counts",
    "find_dates",
    "find_digit_strings",
    "find_email",
    "find_letter",
    "find_money",
    "find_numbers",
    "find_rates",
    "find_spelled",
    "fits_spelling",
    "last_name",
    "mentions_near",
    "money",
    "name_part",
    "normalise",
    "number",
    "ordinal",
    "spelled",
    "spelling_pattern",
    "without_unfinished_figure",
    "year_spoken",
]
