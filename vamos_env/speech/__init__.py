"""Spoken forms: values rendered as a person says them, and heard text parsed back.

``render`` turns money, numbers, dates, counts and codes into words (the
reference agent speaks with it); ``parse`` finds those values in what was said,
each with the characters it came from (the scripted caller and the grader's
code verifier listen with it). Every rendering parses back to its value.
"""

from __future__ import annotations

from vamos_env.speech.parse import (
    Count,
    Mention,
    Unit,
    find_codes,
    find_counts,
    find_dates,
    find_digit_strings,
    find_email,
    find_money,
    find_numbers,
    mentions_near,
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
from vamos_env.speech.tokens import normalise

__all__ = [
    "Count",
    "Mention",
    "Unit",
    "characters",
    "count",
    "date_spoken",
    "email_spoken",
    "find_codes",
    "find_counts",
    "find_dates",
    "find_digit_strings",
    "find_email",
    "find_money",
    "find_numbers",
    "mentions_near",
    "money",
    "normalise",
    "number",
    "ordinal",
    "year_spoken",
]
