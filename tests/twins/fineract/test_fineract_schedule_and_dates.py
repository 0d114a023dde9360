"""The pure pieces: Fineract's instalment rounding, due dates, and date/locale parsing."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env.twins.fineract.errors import ValidationProblem
from vamos_env.twins.fineract.request_body import RequestBody, parse_date, parse_locale
from vamos_env.twins.fineract.schedule import (
    MONTHS,
    WEEKS,
    YEARS,
    due_dates,
    instalment_amount,
    round_half_even,
    split_principal,
)


def test_round_half_even():
    assert round_half_even(5, 2) == 2  # 2.5 -> 2
    assert round_half_even(7, 2) == 4  # 3.5 -> 4
    assert round_half_even(10, 3) == 3
    assert round_half_even(658410, 6000) == 110  # 109.735 -> 110 at whole units


@pytest.mark.parametrize(
    ("principal", "count", "kwargs", "emi"),
    [
        (65_841, 6, {}, 10_974),  # 109.735 rounds half-even up to 109.74
        (10_000, 3, {}, 3_333),
        (100_000, 60, {}, 1_667),
        (65_841, 6, {"instalment_multiple": 1}, 11_000),  # to whole dollars: 110
        (65_841, 6, {"instalment_multiple": 5}, 11_000),
        (10_050, 4, {"digits_after_decimal": 1}, 2_510),  # 25.125 -> 25.1
        (10_050, 4, {"digits_after_decimal": 0}, 2_500),
        (1_000_000, 3, {"digits_after_decimal": 0, "currency_multiple": 50}, 335_000),
    ],
)
def test_instalment_amount(principal, count, kwargs, emi):
    assert instalment_amount(principal, count, **kwargs) == emi


def test_split_gives_the_remainder_to_the_last_and_never_overshoots():
    assert split_principal(65_841, 11_000, 6) == [11_000] * 5 + [10_841]
    assert split_principal(10_000, 3_334, 3) == [3_334, 3_334, 3_332]
    assert split_principal(5, 1, 6) == [1, 1, 1, 1, 1, 0]
    assert split_principal(100, 60, 3) == [60, 40, 0]


def test_due_dates():
    assert due_dates(date(2026, 1, 31), None, 3, 1, MONTHS) == [
        date(2026, 2, 28),
        date(2026, 3, 31),
        date(2026, 4, 30),
    ]
    assert due_dates(date(2026, 9, 10), date(2026, 10, 10), 2, 1, MONTHS) == [
        date(2026, 10, 10),
        date(2026, 11, 10),
    ]
    assert due_dates(date(2026, 9, 10), None, 2, 2, WEEKS) == [date(2026, 9, 24), date(2026, 10, 8)]
    assert due_dates(date(2024, 2, 29), None, 2, 1, YEARS) == [date(2025, 2, 28), date(2026, 2, 28)]


@pytest.mark.parametrize(
    ("text", "pattern", "expected"),
    [
        ("10 September 2026", "dd MMMM yyyy", date(2026, 9, 10)),
        ("10 september 2026", "dd MMMM yyyy", date(2026, 9, 10)),
        ("1 September 2026", "dd MMMM yyyy", date(2026, 9, 1)),
        ("10 Sep 2026", "dd MMMM yyyy", date(2026, 9, 10)),
        ("10 Sep 2026", "dd MMM yyyy", date(2026, 9, 10)),
        ("2026-09-10", "yyyy-MM-dd", date(2026, 9, 10)),
        ("10/09/26", "dd/MM/yy", date(2026, 9, 10)),
        ("20260910", "yyyyMMdd", date(2026, 9, 10)),
        ("10 September 2026 00:00:00", "dd MMMM yyyy", date(2026, 9, 10)),
        ("o'clock 10 September 2026", "'o''clock' dd MMMM yyyy", date(2026, 9, 10)),
    ],
)
def test_parse_date_accepts(text, pattern, expected):
    assert parse_date(text, pattern) == expected


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("31 February 2026", "dd MMMM yyyy"),
        ("2026-09-10", "dd MMMM yyyy"),
        ("10 Septembre 2026", "dd MMMM yyyy"),
        ("10 September 2026 extra", "dd MMMM yyyy"),
        ("10 September", "dd MMMM"),
        ("10:00", "HH:mm"),
        ("x", "'unterminated"),
    ],
)
def test_parse_date_rejects(text, pattern):
    with pytest.raises(ValueError):
        parse_date(text, pattern)


def test_locales():
    assert parse_locale("en") == "en"
    assert parse_locale("en_US") == "en_US"
    assert parse_locale("EN_GB") == "en_GB"
    for bad in ("", "xx", "en_us", "en_ZZ", "a_b_c_d"):
        with pytest.raises(ValidationProblem) as caught:
            parse_locale(bad)
        assert {e.code for e in caught.value.errors} == {"validation.msg.invalid.locale.format"}


def test_request_body_numbers_need_a_locale_and_stay_exact():
    body = RequestBody(b'{"principal": 658.41, "n": "1,000", "locale": "en", "k": 6.0}')
    assert str(body.decimal("principal")) == "658.41"
    assert body.integer("n") == 1000
    with pytest.raises(ValidationProblem) as caught:
        body.integer("k")
    assert caught.value.errors[0].code == "validation.msg.invalid.integer.format"
    with pytest.raises(ValidationProblem) as caught:
        RequestBody(b'{"principal": 5}').decimal("principal")
    assert caught.value.errors[0].code == "validation.msg.missing.locale.parameter"
