"""Amounts said every way people say them parse back to a reading set holding the amount.

``render.money`` is how the reference agent speaks; the other renderings here are how
people (and other agents) say the same amounts: the hundreds shortcut in paired
groups, the point form, dollars and cents without "dollars", "even", the British
"and", "X dollars Y". Each is checked alone and after a question's cue words.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vamos_env.speech import find_amounts, find_money, money, number
from vamos_env.speech.vocabulary import DIGIT_WORDS

FAST = settings(max_examples=200, deadline=None)
# Utility bills: up to $9,999.99, where paired groups and the hundreds shortcut are said.
# Dollars of every size a bill has, and cents that are none, one digit or two, drawn
# evenly, so every rendering (some only say round dollars, some only cents) gets its share.
DOLLARS = st.one_of(
    st.integers(min_value=0, max_value=99),
    st.integers(min_value=100, max_value=999),
    st.integers(min_value=1_000, max_value=9_999),
)
REST = st.one_of(st.just(0), st.integers(min_value=1, max_value=9), st.integers(10, 99))
CENTS = st.tuples(DOLLARS, REST).map(lambda pair: pair[0] * 100 + pair[1]).filter(bool)


def _group(n: int) -> str:
    """A two-digit group as said: 7 -> "oh seven", 28 -> "twenty-eight"."""
    return number(n) if n >= 10 else f"oh {DIGIT_WORDS[n]}"


def _dollars_shortcut(dollars: int) -> str | None:
    """215 -> "two fifteen", 1234 -> "twelve thirty-four"; None where it is not said so."""
    head, tail = divmod(dollars, 100)
    if not 1 <= head <= 99 or tail == 0:
        return None
    return f"{number(head)} {_group(tail)}"


def paired(cents: int) -> str | None:
    """ "two fifteen twenty-eight", "sixty-five fifty-two", "two hundred fourteen oh seven"."""
    dollars, rest = divmod(cents, 100)
    if not dollars or not rest:
        return None
    shortcut = _dollars_shortcut(dollars) if dollars >= 100 else number(dollars)
    return None if shortcut is None else f"{shortcut} {_group(rest)}"


def paired_full(cents: int) -> str | None:
    """ "two hundred fifteen twenty-eight": the dollars said in full, then the cents."""
    dollars, rest = divmod(cents, 100)
    if dollars < 100 or dollars % 100 == 0 or not rest:
        return None
    return f"{number(dollars)} {_group(rest)}"


def point_form(cents: int) -> str | None:
    """ "two fifteen point two eight", "sixty-five point five two"."""
    dollars, rest = divmod(cents, 100)
    if not dollars:
        return None
    fraction = " ".join(DIGIT_WORDS[int(d)] for d in f"{rest:02d}")
    if dollars >= 100:
        head = _dollars_shortcut(dollars)
        if head is None or dollars % 100 < 10:
            return None  # "two oh five point ..." is not said
        return f"{head} point {fraction}"
    return f"{number(dollars)} point {fraction}"


def point_full(cents: int) -> str | None:
    """ "two hundred fifteen point two eight"."""
    dollars, rest = divmod(cents, 100)
    fraction = " ".join(DIGIT_WORDS[int(d)] for d in f"{rest:02d}")
    return f"{number(dollars)} point {fraction}" if dollars else None


def and_cents(cents: int) -> str | None:
    """ "six hundred fifty-six and thirty-one cents": no "dollars"."""
    dollars, rest = divmod(cents, 100)
    if not dollars or not rest:
        return None
    return f"{number(dollars)} and {number(rest)} cent{'s' if rest > 1 else ''}"


def even(cents: int) -> str | None:
    """ "one hundred twelve even" and "two fifteen even" for round dollars."""
    dollars, rest = divmod(cents, 100)
    return f"{number(dollars)} even" if dollars and not rest else None


def shortcut_even(cents: int) -> str | None:
    dollars, rest = divmod(cents, 100)
    head = _dollars_shortcut(dollars) if not rest else None
    return None if head is None else f"{head} even"


def british(cents: int) -> str | None:
    """ "two hundred and fifteen dollars and twenty-eight cents"."""
    dollars, rest = divmod(cents, 100)
    hundreds, tail = divmod(dollars, 100)
    if not 1 <= hundreds <= 9 or not tail or not rest:
        return None
    return f"{number(hundreds)} hundred and {number(tail)} dollars and {number(rest)} cents"


def dollars_then_group(cents: int) -> str | None:
    """ "two hundred fifteen dollars twenty-eight", "215 dollars 28"."""
    dollars, rest = divmod(cents, 100)
    if not dollars or rest < 10:
        return None
    return f"{number(dollars)} dollars {number(rest)}"


def written_bare(cents: int) -> str | None:
    """ "215.28" (no "$")."""
    dollars, rest = divmod(cents, 100)
    return f"{dollars:,}.{rest:02d}"


RENDERINGS: dict[str, Callable[[int], str | None]] = {
    "words": money,
    "short": lambda c: money(c, style="short"),
    "digits": lambda c: money(c, style="digits"),
    "paired": paired,
    "paired_full": paired_full,
    "point": point_form,
    "point_full": point_full,
    "and_cents": and_cents,
    "even": even,
    "shortcut_even": shortcut_even,
    "british": british,
    "dollars_then_group": dollars_then_group,
    "written_bare": written_bare,
}


def _check(spoken: str, cents: int) -> None:
    (amount,) = find_amounts(spoken)
    assert cents in amount.readings, (spoken, amount)
    assert amount.text == spoken  # the whole rendering is the evidence
    asked = f"The amount due is {spoken}."
    (in_context,) = find_amounts(asked)
    assert cents in in_context.readings and in_context.text == spoken
    # With its cue, find_money hears it too (as the most likely reading, or another one).
    (heard,) = find_money(asked)
    assert heard.value in amount.readings


def _cents(dollars: st.SearchStrategy[int], rest: st.SearchStrategy[int]) -> st.SearchStrategy[int]:
    return st.tuples(dollars, rest).map(lambda pair: pair[0] * 100 + pair[1])


_SHORTCUT_DOLLARS = st.tuples(st.integers(1, 99), st.integers(1, 99)).map(
    lambda p: p[0] * 100 + p[1]
)
# Where a rendering says only some amounts, it draws from those, so nothing is filtered.
DOMAINS: dict[str, st.SearchStrategy[int]] = {
    "even": _cents(st.integers(1, 9_999), st.just(0)),
    "shortcut_even": _cents(_SHORTCUT_DOLLARS, st.just(0)),
    "british": _cents(
        st.tuples(st.integers(1, 9), st.integers(1, 99)).map(lambda p: p[0] * 100 + p[1]),
        st.integers(1, 99),
    ),
    "paired": _cents(st.one_of(st.integers(1, 99), _SHORTCUT_DOLLARS), st.integers(1, 99)),
    "paired_full": _cents(_SHORTCUT_DOLLARS.filter(lambda d: d >= 100), st.integers(1, 99)),
    "point": _cents(st.one_of(st.integers(1, 99), _SHORTCUT_DOLLARS), st.integers(0, 99)),
    "and_cents": _cents(st.integers(1, 9_999), st.integers(1, 99)),
    "dollars_then_group": _cents(st.integers(1, 9_999), st.integers(10, 99)),
}
ISSUE_EXAMPLES = [21528, 65631, 6552, 21407, 11200, 100, 1, 999_999]


@pytest.mark.parametrize("style", sorted(RENDERINGS))
@FAST
@given(data=st.data())
def test_each_rendering_reads_back(style: str, data: st.DataObject) -> None:
    cents = data.draw(DOMAINS.get(style, CENTS), label="cents")
    spoken = RENDERINGS[style](cents)
    assume(spoken is not None)
    assert spoken is not None
    _check(spoken, cents)


@pytest.mark.parametrize("style", sorted(RENDERINGS))
@pytest.mark.parametrize("cents", ISSUE_EXAMPLES)
def test_each_rendering_of_the_issue_amounts_reads_back(style: str, cents: int) -> None:
    spoken = RENDERINGS[style](cents)
    if spoken is not None:
        _check(spoken, cents)


@FAST
@given(cents=st.integers(min_value=1, max_value=999_999))
def test_the_agents_words_are_read_as_exactly_one_amount(cents: int) -> None:
    # render.money is what the reference agent says: it must have one reading only.
    (amount,) = find_amounts(money(cents))
    assert amount.readings == (cents,) and amount.marked


def test_the_renderings_cover_the_issue_examples() -> None:
    assert point_form(65631) == "six fifty-six point three one"
    assert and_cents(65631) == "six hundred fifty-six and thirty-one cents"
    assert paired(6552) == "sixty-five fifty-two"
    assert paired(21407) == "two fourteen oh seven"
    assert paired(21528) == "two fifteen twenty-eight"
    assert even(11200) == "one hundred twelve even"
    assert british(21528) == "two hundred and fifteen dollars and twenty-eight cents"
