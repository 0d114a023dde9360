"""Tariff arithmetic on hand-computed examples: half-up cents, the grossed-up tax, the rates."""

from __future__ import annotations

from datetime import date

import pytest
from pydantic import ValidationError

from vamos_env.envs.energy.world.tariff import (
    DEFAULT_TARIFF,
    PriceStep,
    Tariff,
    energy_cents,
    gross_receipts_tax_cents,
    round_half_up,
)


def test_energy_line_rounds_half_up_once() -> None:
    # 912 kWh x 10.87 = 9913.44 cents; x 9.52 = 8682.24 cents.
    assert energy_cents(912, "10.87") == 9913
    assert energy_cents(912, "9.52") == 8682
    # Exact half cents go up (banker's rounding would give 1630 and 3048 -> 3048).
    assert energy_cents(150, "10.87") == 1631  # 1630.5
    assert energy_cents(250, "12.19") == 3048  # 3047.5
    assert energy_cents(0, "12.19") == 0


def test_gross_receipts_tax_is_grossed_up() -> None:
    # pre-tax 19770 cents: 19770 x 0.059 / 0.941 = 1239.564... -> 1240
    assert gross_receipts_tax_cents(19_770) == 1240
    # 941 cents of pre-tax gives exactly 59 cents: 5.9% of the 1000-cent total.
    assert gross_receipts_tax_cents(941) == 59
    assert gross_receipts_tax_cents(0) == 0
    # The tax is 5.9% of the tax-inclusive total, to within a cent.
    for pretax in (1_175, 4_692, 19_770, 23_517):
        tax = gross_receipts_tax_cents(pretax)
        assert abs(tax - 0.059 * (pretax + tax)) <= 0.5


def test_a_whole_premise_bill_by_hand() -> None:
    t = DEFAULT_TARIFF
    supply = energy_cents(912, t.price_to_compare(date(2026, 8, 8)))
    delivery = energy_cents(912, t.distribution_cents_per_kwh)
    pretax = supply + delivery + t.customer_charge_cents
    assert (supply, delivery, t.customer_charge_cents) == (9913, 8682, 1175)
    assert pretax + t.tax_cents(pretax) == 21_010


def test_round_half_up_refuses_negative_amounts() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        round_half_up(-1)
    with pytest.raises(ValueError, match="kWh >= 0"):
        energy_cents(-5, "10.87")


def test_default_service_price_changes_between_cycles() -> None:
    t = DEFAULT_TARIFF
    assert t.price_to_compare(date(2026, 8, 31)) == "10.87"
    assert t.price_to_compare(date(2026, 9, 1)) == "12.19"
    with pytest.raises(ValueError, match="no default-service price before"):
        t.price_to_compare(date(2026, 2, 28))


def test_supply_rate_by_supplier() -> None:
    t = DEFAULT_TARIFF
    assert t.supply_rate(t.default_service_supplier, date(2026, 9, 8)) == "12.19"
    # A retail supplier's fixed rate ignores the default-service change.
    assert t.supply_rate("Quillstone Energy", date(2026, 7, 1)) == "9.89"
    assert t.supply_rate("Quillstone Energy", date(2026, 9, 8)) == "9.89"
    with pytest.raises(ValueError, match="unknown supplier 'Nobody Power'"):
        t.supply_rate("Nobody Power", date(2026, 9, 8))


def test_benchmark_ranges_hold() -> None:
    t = DEFAULT_TARIFF
    assert 1000 <= t.customer_charge_cents <= 1400
    for step in t.default_service_prices:
        assert 10.4 <= float(step.cents_per_kwh) <= 12.5
    assert float(t.distribution_cents_per_kwh) == pytest.approx(9.5, abs=0.1)


def test_tariff_is_strict() -> None:
    with pytest.raises(ValidationError, match="increasing dates"):
        Tariff(
            default_service_prices=(
                PriceStep(effective_on=date(2026, 9, 1), cents_per_kwh="12.19"),
                PriceStep(effective_on=date(2026, 3, 1), cents_per_kwh="10.87"),
            )
        )
    with pytest.raises(ValidationError):
        PriceStep(effective_on=date(2026, 9, 1), cents_per_kwh="12,19")
    with pytest.raises(ValidationError):
        Tariff(surprise=1)
