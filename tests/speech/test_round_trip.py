"""Every rendering parses back to exactly its value."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vamos_env.speech import (
    Count,
    characters,
    count,
    date_spoken,
    email_spoken,
    find_codes,
    find_counts,
    find_dates,
    find_digit_strings,
    find_email,
    find_money,
    find_numbers,
    money,
    number,
    ordinal,
)
from vamos_env.speech.numbers import analyse

CENTS = st.integers(min_value=-10_000_000, max_value=10_000_000)
FAST = settings(max_examples=400, deadline=None)


def only_value(found: list) -> object:
    assert len(found) == 1, found
    return found[0].value


@FAST
@given(CENTS)
@example(0)
@example(1)
@example(100)
@example(10_000_000)
@example(10052)
@example(100005)
def test_money_words(cents: int) -> None:
    spoken = money(cents)
    (mention,) = find_money(spoken)
    assert mention.value == cents
    assert mention.text == spoken  # the whole rendering is the evidence


@FAST
@given(CENTS)
@example(105)
@example(21407)
@example(9999999)
@example(190005)
def test_money_short_in_context(cents: int) -> None:
    assert only_value(find_money(f"Your balance is {money(cents, style='short')}.")) == cents


@FAST
@given(CENTS)
def test_money_digits(cents: int) -> None:
    assert only_value(find_money(money(cents, style="digits"))) == cents


@pytest.mark.parametrize("cents", range(0, 20_001, 7))
def test_money_every_style_over_small_amounts(cents: int) -> None:
    for style in ("words", "digits"):
        assert only_value(find_money(money(cents, style=style))) == cents
    assert only_value(find_money(f"you owe {money(cents, style='short')}")) == cents


@FAST
@given(st.integers(min_value=-(10**12) + 1, max_value=10**12 - 1))
def test_numbers(n: int) -> None:
    assert only_value(find_numbers(number(n))) == n


@FAST
@given(st.integers(min_value=1, max_value=10**12 - 1))
def test_ordinals(n: int) -> None:
    (atom,) = analyse(ordinal(n)).atoms
    assert (atom.kind, atom.value) == ("ordinal", n)


DAYS_2026_2027 = [date(2026, 1, 1) + timedelta(days=k) for k in range(730)]


def test_every_date_in_2026_and_2027_in_every_style() -> None:
    for d in DAYS_2026_2027:
        for style in ("words", "digits"):
            with_year = date_spoken(d, with_year=True, style=style)
            assert only_value(find_dates(with_year, default_year=1999)) == d, with_year
            without = date_spoken(d, style=style)
            assert only_value(find_dates(without, default_year=d.year)) == d, without
            said = f"the new due date is {with_year}, and the bill is still owed"
            assert only_value(find_dates(said)) == d


@FAST
@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2199, 12, 31)))
def test_dates_across_two_centuries(d: date) -> None:
    assert only_value(find_dates(date_spoken(d, with_year=True))) == d


DIGIT_GROUPS = st.lists(st.text("0123456789", min_size=1, max_size=6), min_size=1, max_size=3)


@FAST
@given(DIGIT_GROUPS)
@example(["4417", "90781"])
@example(["00", "7"])
def test_digit_strings(groups: list[str]) -> None:
    code = "-".join(groups)
    if len(code.replace("-", "")) < 2:
        return  # one digit alone is a number, not a string of them
    spoken = characters(code)
    assert only_value(find_digit_strings(spoken)) == code
    assert only_value(find_digit_strings(f"it's {spoken}, thanks")) == code


@FAST
@given(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", min_size=2, max_size=10))
def test_codes_with_letters(code: str) -> None:
    letters = sum(ch.isalpha() for ch in code)
    clean = code.strip("-")
    if "--" in code or letters < 2 or not clean:
        return
    assert only_value(find_codes(characters(clean))) == clean


@pytest.mark.parametrize("unit", ["payment", "monthly payment", "instalment", "month", "day"])
def test_counts(unit: str) -> None:
    expected_unit = {"month": "months", "day": "days"}.get(unit, "payments")
    for n in range(0, 1001):
        assert only_value(find_counts(count(n, unit))) == Count(n, expected_unit)  # type: ignore[arg-type]


WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
LOCAL_CHUNK = st.tuples(WORD, st.text("0123456789", max_size=3)).map("".join)
LOCAL = st.lists(LOCAL_CHUNK, min_size=1, max_size=3).flatmap(
    lambda chunks: st.lists(
        st.sampled_from("._"), min_size=len(chunks) - 1, max_size=len(chunks) - 1
    ).map(lambda seps: "".join(c + s for c, s in zip(chunks, [*seps, ""], strict=True)))
)
DOMAIN = st.tuples(
    st.lists(LOCAL_CHUNK, min_size=1, max_size=2).map("-".join),
    st.lists(st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=6), min_size=1, max_size=2),
).map(lambda parts: ".".join([parts[0], *parts[1]]))


@FAST
@given(LOCAL, DOMAIN, st.booleans())
@example("dana.whitfield", "example.com", False)
@example("is", "my.org", False)
def test_emails(local: str, domain: str, spell_letters: bool) -> None:
    address = f"{local}@{domain}"
    spoken = email_spoken(address, spell_letters=spell_letters)
    assert only_value(find_email(spoken)) == address, spoken
    assert only_value(find_email(f"my email is {spoken}, is that right?")) == address
