"""Tests for the executable policy model: every rule at its boundaries."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from vamos_env.clock import TODAY, unix
from vamos_env.envs.energy.policy import (
    AccountFacts,
    BillFacts,
    BillLineFacts,
    ChargeType,
    add_months,
    allocate_cents,
    arrangement_eligibility,
    arrears,
    compare_bills,
    down_payment_cents,
    explain_bill,
    extension_decision,
    format_cents,
    format_date,
    income_tier,
    installment_due_dates,
    max_installments,
    protections,
    quote_arrangement,
    readings,
    requires_down_payment,
    split_installments,
    winter_season,
    within_last_12_months,
)


def facts(
    past_due: int = 20_000,
    days: int = 30,
    *,
    balance: int | None = None,
    active: bool = False,
    fpl: int | None = 200,
    **extra: object,
) -> AccountFacts:
    return AccountFacts(
        past_due_cents=past_due,
        days_past_due=days if past_due else 0,
        open_balance_cents=past_due if balance is None else balance,
        arrangement_active=active,
        income_fpl_pct=fpl,
        **extra,
    )


def ago(n: int) -> date:
    return TODAY - timedelta(days=n)


# --- formatting ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cents", "shown"),
    [
        (0, "$0.00"),
        (7, "$0.07"),
        (21407, "$214.07"),
        (123456, "$1,234.56"),
        (-500, "-$5.00"),
        (-1, "-$0.01"),
        (100_000_000, "$1,000,000.00"),
    ],
)
def test_format_cents(cents: int, shown: str) -> None:
    assert format_cents(cents) == shown


def test_format_date_is_locale_free() -> None:
    assert format_date(date(2026, 10, 10)) == "October 10, 2026"
    assert format_date(date(2027, 1, 1)) == "January 1, 2027"


# --- arrangement eligibility --------------------------------------------------------------


def test_minimum_past_due_boundary() -> None:
    below = arrangement_eligibility(facts(4_999))
    assert (below.kind, below.reason) == ("refused", "below_minimum")
    assert "$50.00" in below.say and "$49.99" in below.say
    at = arrangement_eligibility(facts(5_000))
    assert (at.kind, at.reason) == ("eligible", "eligible")


@pytest.mark.parametrize(
    ("past_due", "days", "kind"),
    [
        (50_000, 60, "transfer"),
        (80_000, 200, "transfer"),
        (49_999, 60, "eligible"),
        (50_000, 59, "eligible"),
        (49_999, 365, "eligible"),
    ],
)
def test_shutoff_process_boundary(past_due: int, days: int, kind: str) -> None:
    assert arrangement_eligibility(facts(past_due, days)).kind == kind


def test_shutoff_is_checked_before_an_active_arrangement() -> None:
    decision = arrangement_eligibility(facts(50_000, 60, active=True))
    assert (decision.kind, decision.reason) == ("transfer", "shutoff_process")
    assert arrangement_eligibility(facts(49_999, 60, active=True)).reason == "arrangement_active"


def test_active_arrangement_is_checked_before_the_minimum() -> None:
    decision = arrangement_eligibility(facts(100, active=True))
    assert (decision.kind, decision.reason) == ("refused", "arrangement_active")


# --- term limits ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pct", "months", "code"),
    [
        (0, 60, "fpl_0_150"),
        (150, 60, "fpl_0_150"),
        (151, 36, "fpl_151_250"),
        (250, 36, "fpl_151_250"),
        (251, 12, "fpl_251_300"),
        (300, 12, "fpl_251_300"),
        (301, 6, "fpl_above_300"),
        (900, 6, "fpl_above_300"),
        (None, 6, "fpl_unknown"),
    ],
)
def test_term_limit_by_income(pct: int | None, months: int, code: str) -> None:
    assert max_installments(pct) == months
    assert income_tier(pct).code == code


def test_negative_income_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="income_fpl_pct"):
        income_tier(-1)


# --- windows, down payment ---------------------------------------------------------------------


@pytest.mark.parametrize(("days", "inside"), [(0, True), (364, True), (365, True), (366, False)])
def test_twelve_month_window(days: int, inside: bool) -> None:
    assert within_last_12_months(ago(days)) is inside


@pytest.mark.parametrize(("days", "required"), [(364, True), (365, True), (366, False)])
def test_down_payment_window(days: int, required: bool) -> None:
    assert requires_down_payment(facts(prior_arrangement_default_on=ago(days))) is required


def test_no_prior_default_needs_no_down_payment() -> None:
    assert not requires_down_payment(facts())


@pytest.mark.parametrize(
    ("past_due", "down"), [(10_000, 2_500), (10_001, 2_500), (10_002, 2_501), (10_003, 2_501)]
)
def test_down_payment_rounds_half_up(past_due: int, down: int) -> None:
    assert down_payment_cents(past_due) == down


# --- quote -------------------------------------------------------------------------------------


def test_remainder_cents_go_on_the_first_installment() -> None:
    assert split_installments(10_000, 3) == [3_334, 3_333, 3_333]
    assert split_installments(10_001, 60)[0] == 166 + 41


@given(st.integers(0, 10_000_000), st.integers(1, 60))
def test_installments_sum_exactly(financed: int, count: int) -> None:
    amounts = split_installments(financed, count)
    assert len(amounts) == count
    assert sum(amounts) == financed
    assert len(set(amounts[1:])) <= 1
    assert 0 <= amounts[0] - amounts[-1] < count


def test_quote_on_the_frozen_date() -> None:
    quote = quote_arrangement(facts(10_000), 3)
    assert (quote.allowed, quote.kind, quote.reason) == (True, "quote", "eligible")
    assert quote.first_due_date == date(2026, 10, 10)
    assert [i.due_date for i in quote.schedule] == [
        date(2026, 10, 10),
        date(2026, 11, 10),
        date(2026, 12, 10),
    ]
    assert [i.amount_cents for i in quote.schedule] == [3_334, 3_333, 3_333]
    assert (quote.first_installment_cents, quote.monthly_installment_cents) == (3_334, 3_333)
    assert (quote.down_payment_cents, quote.financed_cents) == (0, 10_000)
    assert "$33.34" in quote.say and "$33.33" in quote.say and "October 10, 2026" in quote.say


@pytest.mark.parametrize(
    ("fpl", "count", "reason"),
    [
        (200, 0, "too_few_installments"),
        (200, 1, "too_few_installments"),
        (200, 2, "eligible"),
        (200, 36, "eligible"),
        (200, 37, "too_many_installments"),
        (None, 6, "eligible"),
        (None, 7, "too_many_installments"),
        (100, 60, "eligible"),
        (100, 61, "too_many_installments"),
    ],
)
def test_quote_term_range(fpl: int | None, count: int, reason: str) -> None:
    quote = quote_arrangement(facts(fpl=fpl), count)
    assert quote.reason == reason
    assert quote.allowed is (reason == "eligible")
    if not quote.allowed:
        assert quote.kind == "refused" and quote.schedule == () and quote.financed_cents is None


def test_quote_with_a_recent_default_states_the_down_payment_then_transfers() -> None:
    quote = quote_arrangement(facts(21_407, prior_arrangement_default_on=ago(100)), 6)
    assert (quote.kind, quote.reason) == ("quote_then_transfer", "down_payment_required")
    assert quote.down_payment_cents == 5_352
    assert quote.financed_cents == 21_407 - 5_352
    assert sum(i.amount_cents for i in quote.schedule) == quote.financed_cents
    assert "$53.52" in quote.say and "transfer" in quote.say


def test_quote_follows_eligibility_refusals() -> None:
    shutoff = quote_arrangement(facts(60_000, 90), 6)
    assert (shutoff.allowed, shutoff.kind, shutoff.reason) == (False, "transfer", "shutoff_process")
    low = quote_arrangement(facts(4_999), 6)
    assert (low.kind, low.reason, low.schedule) == ("refused", "below_minimum", ())


def test_month_arithmetic_clamps_from_the_first_due_date() -> None:
    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)
    assert add_months(date(2026, 11, 30), 3) == date(2027, 2, 28)
    # First due January 31: later dues clamp per month but do not drift to the 28th.
    assert installment_due_dates(4, today=date(2026, 1, 1)) == [
        date(2026, 1, 31),
        date(2026, 2, 28),
        date(2026, 3, 31),
        date(2026, 4, 30),
    ]


# --- due-date extension ---------------------------------------------------------------------

DUE = date(2026, 9, 25)


@pytest.mark.parametrize(
    ("days", "reason"),
    [
        (0, "too_few_days"),
        (1, "allowed"),
        (15, "allowed"),
        (16, "too_many_days"),
        (-3, "too_few_days"),
    ],
)
def test_extension_days(days: int, reason: str) -> None:
    decision = extension_decision(facts(), days, DUE)
    assert decision.reason == reason
    if reason == "allowed":
        assert decision.new_due_date == DUE + timedelta(days=days)
        assert "still owed" in decision.say
    else:
        assert decision.new_due_date is None


@pytest.mark.parametrize(
    ("days_ago", "allowed"), [(0, False), (364, False), (365, False), (366, True)]
)
def test_extension_once_per_rolling_year(days_ago: int, allowed: bool) -> None:
    decision = extension_decision(facts(last_extension_on=ago(days_ago)), 10, DUE)
    assert decision.allowed is allowed
    if not allowed:
        assert decision.reason == "recent_extension"
        assert decision.next_eligible_on is not None
        on_that_day = extension_decision(
            facts(last_extension_on=ago(days_ago)), 10, DUE, today=decision.next_eligible_on
        )
        assert on_that_day.allowed


def test_recent_extension_is_reported_before_a_bad_day_count() -> None:
    assert (
        extension_decision(facts(last_extension_on=ago(10)), 30, DUE).reason == "recent_extension"
    )


def test_extension_states_the_new_date() -> None:
    decision = extension_decision(facts(), 15, DUE)
    assert decision.new_due_date == date(2026, 10, 10)
    assert "October 10, 2026" in decision.say and "September 25, 2026" in decision.say


# --- protections ------------------------------------------------------------------------------


def test_winter_protection_is_not_in_effect_on_the_frozen_date() -> None:
    result = protections(facts(fpl=250))
    assert result.winter.eligibility == "eligible"
    assert not result.winter.in_season and not result.winter.in_effect
    assert (result.winter.season_start, result.winter.season_end) == (
        date(2026, 12, 1),
        date(2027, 3, 31),
    )
    assert not result.any_in_effect


@pytest.mark.parametrize(
    ("fpl", "eligibility", "human"),
    [(250, "eligible", False), (251, "not_eligible", False), (None, "unknown", True)],
)
def test_winter_eligibility(fpl: int | None, eligibility: str, human: bool) -> None:
    winter = protections(facts(fpl=fpl)).winter
    assert winter.eligibility == eligibility
    assert winter.needs_human_decision is human


@pytest.mark.parametrize(
    ("today", "in_season"),
    [
        (date(2026, 11, 30), False),
        (date(2026, 12, 1), True),
        (date(2027, 1, 15), True),
        (date(2027, 3, 31), True),
        (date(2027, 4, 1), False),
    ],
)
def test_winter_season_edges(today: date, in_season: bool) -> None:
    winter = protections(facts(fpl=100), today=today).winter
    assert winter.in_season is in_season and winter.in_effect is in_season
    assert not protections(facts(fpl=251), today=today).winter.in_effect
    assert winter_season(date(2027, 1, 15)) == (date(2026, 12, 1), date(2027, 3, 31))


def test_medical_certificate_states() -> None:
    today_cert = protections(facts(medical_certificate_until=TODAY)).medical
    assert (today_cert.status, today_cert.days_remaining) == ("active", 0)
    assert format_date(TODAY) in today_cert.say
    later = protections(facts(medical_certificate_until=date(2026, 10, 1)))
    assert later.medical.days_remaining == 21 and later.any_in_effect
    expired = protections(facts(medical_certificate_until=ago(1))).medical
    assert expired.status == "expired" and expired.needs_human_decision
    assert "September 9, 2026" in expired.say
    assert protections(facts()).medical.status == "none"


# --- bills ---------------------------------------------------------------------------------------

JUN, JUL, AUG = date(2026, 6, 1), date(2026, 7, 1), date(2026, 8, 1)


def line(
    charge_type: ChargeType,
    amount: int,
    kwh: int | None = None,
    rate: str | None = None,
    *,
    start: date = JUN,
    end: date = JUL,
    meter: str | None = "M-1",
    reads: bool = True,
) -> BillLineFacts:
    metered = kwh is not None
    return BillLineFacts(
        amount_cents=amount,
        charge_type=charge_type,
        description=charge_type.replace("_", " "),
        kwh=kwh,
        rate_cents_per_kwh=Decimal(rate) if rate else None,
        period_start=start,
        period_end=end,
        read_start=start if metered and reads else None,
        read_end=end if metered and reads else None,
        meter=meter if metered else None,
    )


def bill(bill_id: str, *lines: BillLineFacts, total: int | None = None) -> BillFacts:
    return BillFacts(
        bill_id=bill_id,
        total_cents=sum(li.amount_cents for li in lines) if total is None else total,
        lines=lines,
        due_date=date(2026, 8, 25),
        status="open",
        bill_date=date(2026, 8, 2),
    )


def energy_bill(
    bill_id: str,
    kwh: int,
    *,
    supply: str = "11",
    delivery: str = "9.5",
    start: date = JUN,
    end: date = JUL,
    fixed: int = 1_200,
    tax: int = 700,
) -> BillFacts:
    return bill(
        bill_id,
        line("supply", int(kwh * Decimal(supply)), kwh, supply, start=start, end=end),
        line("delivery", int(kwh * Decimal(delivery)), kwh, delivery, start=start, end=end),
        line("customer_charge", fixed, start=start, end=end),
        line("tax", tax, start=start, end=end),
    )


def test_explanation_counts_each_reading_once() -> None:
    explained = explain_bill(energy_bill("in_1", 500))
    assert explained.total_kwh == 500
    assert len(explained.readings) == 1
    assert explained.readings[0].days == 30
    assert [g.charge_type for g in explained.groups] == [
        "supply",
        "delivery",
        "customer_charge",
        "tax",
    ]
    assert [g.subtotal_cents for g in explained.groups] == [5_500, 4_750, 1_200, 700]
    assert (explained.fixed_charges_cents, explained.taxes_cents) == (1_200, 700)
    assert explained.lines_match_total and explained.warnings == ()
    supply = explained.groups[0].lines[0]
    assert "500 kWh at 11 cents per kWh" in supply.say and "June 1, 2026" in supply.say


def test_two_premises_are_two_readings() -> None:
    two = bill(
        "in_2",
        line("supply", 5_500, 500, "11", meter="M-1"),
        line("delivery", 4_750, 500, "9.5", meter="M-1"),
        line("supply", 3_300, 300, "11", meter="M-2"),
        line("delivery", 2_850, 300, "9.5", meter="M-2"),
        line("customer_charge", 2_400),
    )
    explained = explain_bill(two)
    assert explained.total_kwh == 800
    assert sorted(r.meter or "" for r in explained.readings) == ["M-1", "M-2"]


def test_tiered_supply_lines_add_up_within_one_reading() -> None:
    tiered = [
        line("supply", 3_000, 300, "10"),
        line("supply", 2_400, 200, "12"),
        line("delivery", 4_750, 500, "9.5"),
    ]
    assert [r.kwh for r in readings(tiered)] == [500]


def test_reading_without_read_dates_falls_back_to_the_period() -> None:
    found = readings(
        [line("supply", 100, 10, "10", reads=False), line("delivery", 95, 10, "9.5", reads=False)]
    )
    assert len(found) == 1 and found[0].kwh == 10 and found[0].read_start is None


def test_explanation_flags_lines_that_do_not_add_up() -> None:
    off = bill(
        "in_3",
        line("supply", 5_500, 500, "11"),
        line("delivery", 4_750, 480, "9.5"),
        total=10_000,
    )
    explained = explain_bill(off)
    assert not explained.lines_match_total and explained.lines_sum_cents == 10_250
    assert len(explained.warnings) == 2
    assert explained.total_kwh == 500


def test_arrears_over_bills() -> None:
    def b(bill_id: str, due: date, total: int, status: str = "open") -> BillFacts:
        return BillFacts(
            bill_id=bill_id,
            total_cents=total,
            lines=(),
            due_date=due,
            status=status,
            bill_date=due - timedelta(days=21),
        )

    bills = [
        b("in_today", TODAY, 9_000),
        b("in_old", ago(70), 30_000),
        b("in_mid", ago(40), 25_000),
        b("in_paid", ago(100), 12_000, "paid"),
        b("in_void", ago(100), 12_000, "void"),
    ]
    result = arrears(bills)
    assert result.past_due_cents == 55_000
    assert result.days_past_due == 70
    assert result.open_balance_cents == 64_000
    assert result.oldest_past_due_bill_id == "in_old"
    assert arrears([b("in_today", TODAY, 9_000)]).days_past_due == 0


# --- variance --------------------------------------------------------------------------------


def parts_of(older: BillFacts, newer: BillFacts) -> dict[str, int]:
    variance = compare_bills(older, newer)
    parts = {p.component: p.cents for p in variance.parts}
    assert sum(parts.values()) == newer.total_cents - older.total_cents == variance.difference_cents
    return parts


def test_more_usage_shows_only_in_usage() -> None:
    assert parts_of(energy_bill("a", 500), energy_bill("b", 600)) == {
        "usage": 2_050,
        "rate": 0,
        "period_length": 0,
        "fixed_and_taxes": 0,
    }
    less = parts_of(energy_bill("a", 600), energy_bill("b", 500))
    assert less["usage"] == -2_050 and less["rate"] == less["period_length"] == 0


def test_higher_price_shows_only_in_rate() -> None:
    parts = parts_of(energy_bill("a", 500), energy_bill("b", 500, supply="12"))
    assert parts == {"usage": 0, "rate": 500, "period_length": 0, "fixed_and_taxes": 0}


def test_longer_period_shows_only_in_period_length() -> None:
    # 20 kWh a day both times; the newer bill runs 31 days instead of 30.
    older = energy_bill("a", 600, supply="10", delivery="10")
    newer = energy_bill("b", 620, supply="10", delivery="10", start=JUL, end=AUG)
    parts = parts_of(older, newer)
    assert parts == {"usage": 0, "rate": 0, "period_length": 400, "fixed_and_taxes": 0}
    assert "31 days against 30 days" in compare_bills(older, newer).say


def test_fixed_charges_and_taxes_show_only_there() -> None:
    parts = parts_of(energy_bill("a", 500), energy_bill("b", 500, fixed=1_400, tax=650))
    assert parts == {"usage": 0, "rate": 0, "period_length": 0, "fixed_and_taxes": 150}


def test_mixed_change_has_the_right_signs() -> None:
    older = energy_bill("a", 600)
    newer = energy_bill("b", 500, supply="12", start=JUL, end=AUG, fixed=1_300)
    parts = parts_of(older, newer)
    assert parts["usage"] < 0 < parts["rate"]
    assert parts["period_length"] > 0 and parts["fixed_and_taxes"] == 100


def test_zero_kwh_edges_do_not_divide_by_zero() -> None:
    empty = bill("z", line("customer_charge", 1_200))
    used = energy_bill("u", 500)
    assert parts_of(empty, used) == {
        "usage": 10_250,
        "rate": 0,
        "period_length": 0,
        "fixed_and_taxes": 700,
    }
    back = parts_of(used, empty)
    assert back["usage"] == -10_250 and back["rate"] == 0
    assert parts_of(empty, empty) == dict.fromkeys(
        ("usage", "rate", "period_length", "fixed_and_taxes"), 0
    )
    zero_days = energy_bill("d", 500, end=JUN)
    assert parts_of(zero_days, energy_bill("e", 600))["period_length"] == 0


def test_extra_premise_counts_as_more_usage() -> None:
    one = energy_bill("a", 500)
    two = bill(
        "b",
        *energy_bill("x", 500).lines,
        line("supply", 3_300, 300, "11", meter="M-2"),
        line("delivery", 2_850, 300, "9.5", meter="M-2"),
    )
    assert parts_of(one, two) == {
        "usage": 6_150,
        "rate": 0,
        "period_length": 0,
        "fixed_and_taxes": 0,
    }


def test_allocate_cents_by_largest_remainder() -> None:
    thirds = [Fraction(100, 3)] * 3
    assert allocate_cents(thirds, 100) == [34, 33, 33]
    # Ties go to the earlier part: -2.5 and 2.5 become -2 and 2.
    assert allocate_cents([Fraction(-5, 2), Fraction(5, 2)], 0) == [-2, 2]
    with pytest.raises(ValueError, match="sum"):
        allocate_cents([Fraction(1, 2)], 1)


@st.composite
def random_bills(draw: st.DrawFn) -> BillFacts:
    start = date(2026, 1, 1) + timedelta(days=draw(st.integers(0, 200)))
    end = start + timedelta(days=draw(st.integers(0, 40)))
    lines: list[BillLineFacts] = []
    for meter in range(draw(st.integers(0, 3))):
        kwh = draw(st.integers(0, 2_000))
        for charge_type in ("supply", "delivery"):
            rate = Decimal(draw(st.integers(0, 2_000))) / 100
            amount = int(kwh * rate) + draw(st.integers(-2, 2))
            lines.append(
                line(charge_type, amount, kwh, str(rate), start=start, end=end, meter=f"M{meter}")
            )
    for charge_type in draw(st.lists(st.sampled_from(["customer_charge", "tax"]), max_size=3)):
        lines.append(line(charge_type, draw(st.integers(-500, 3_000)), start=start, end=end))
    drift = draw(st.sampled_from([0, 0, 0, 7, -13]))
    return bill("in_r", *lines, total=sum(li.amount_cents for li in lines) + drift)


@settings(max_examples=300, deadline=None)
@given(random_bills(), random_bills())
def test_variance_parts_always_sum_to_the_difference(older: BillFacts, newer: BillFacts) -> None:
    variance = compare_bills(older, newer)
    parts = {p.component: p.cents for p in variance.parts}
    assert sum(parts.values()) == newer.total_cents - older.total_cents
    # In the ordinary case the rate part is K1 * (R1 - R0), within the one cent of rounding.
    o, n = variance.older, variance.newer
    if o.kwh and n.kwh and o.days and n.days:
        r0, r1 = Fraction(o.energy_cents, o.kwh), Fraction(n.energy_cents, n.kwh)
        assert abs(parts["rate"] - n.kwh * (r1 - r0)) < 1
        usage = (Fraction(n.kwh, n.days) - Fraction(o.kwh, o.days)) * n.days * r0
        assert abs(parts["usage"] - usage) < 1
    assert parts["fixed_and_taxes"] == n.other_cents - o.other_cents


# --- building facts from service data ---------------------------------------------------------


def test_facts_from_customer_metadata() -> None:
    built = AccountFacts.from_customer_metadata(
        {
            "account_number": "4417-90781",
            "income_fpl_pct": "180",
            "medical_certificate_until": "2026-10-01",
            "prior_arrangement_default_on": "",
            "last_extension_on": "2026-01-05",
        },
        past_due_cents=12_000,
        days_past_due=40,
        open_balance_cents=20_000,
        arrangement_active=False,
    )
    assert built.income_fpl_pct == 180
    assert built.medical_certificate_until == date(2026, 10, 1)
    assert built.prior_arrangement_default_on is None
    assert built.last_extension_on == date(2026, 1, 5)
    assert built.household_size is None


def test_facts_reject_unknown_and_inconsistent_fields() -> None:
    with pytest.raises(ValidationError):
        AccountFacts(
            past_due_cents=1,
            days_past_due=1,
            open_balance_cents=1,
            arrangement_active=False,
            surprise=True,
        )
    with pytest.raises(ValidationError, match="cannot exceed"):
        facts(10_000, balance=5_000)
    with pytest.raises(ValidationError, match="before"):
        line("supply", 1, 1, "1", start=JUL, end=JUN)


def test_bill_from_stripe_invoice() -> None:
    period = {"start": unix(JUN), "end": unix(JUL)}
    meta = {
        "kwh": "512",
        "rate_cents_per_kwh": "10.4",
        "read_start": "2026-06-01",
        "read_end": "2026-07-01",
    }
    invoice = {
        "id": "in_123",
        "total": 11_173,
        "amount_remaining": 11_173,
        "status": "open",
        "created": unix(date(2026, 7, 3)),
        "due_date": unix(date(2026, 7, 24)),
        "lines": {
            "data": [
                {
                    "amount": 5_325,
                    "description": "Supply",
                    "period": period,
                    "metadata": {**meta, "charge_type": "supply", "meter_number": "M-9"},
                },
                {
                    "amount": 4_864,
                    "description": "Delivery",
                    "period": period,
                    "metadata": {
                        **meta,
                        "rate_cents_per_kwh": "9.5",
                        "charge_type": "delivery",
                        "meter_number": "M-9",
                    },
                },
                {
                    "amount": 984,
                    "description": "Customer charge",
                    "period": period,
                    "metadata": {"charge_type": "customer_charge", "kwh": ""},
                },
            ]
        },
    }
    parsed = BillFacts.from_stripe_invoice(invoice)
    assert (parsed.bill_date, parsed.due_date) == (date(2026, 7, 3), date(2026, 7, 24))
    assert parsed.lines[0].rate_cents_per_kwh == Decimal("10.4")
    assert parsed.lines[0].period_end == JUL and parsed.lines[2].kwh is None
    explained = explain_bill(parsed)
    assert explained.total_kwh == 512 and explained.lines_match_total
