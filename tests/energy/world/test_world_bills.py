"""Bills from readings: lines per premise, one reading behind supply and delivery, exact totals."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env.envs.energy.world.bills import OPEN, Settlement, build_bills, read_dates
from vamos_env.envs.energy.world.models import Premise
from vamos_env.envs.energy.world.tariff import DEFAULT_TARIFF


def _premise(n: int, usage: tuple[int, int, int, int]) -> Premise:
    return Premise(
        premise_id=f"1234-56789-P{n}",
        service_address=f"{n} Maple Ave, York, PA 17403",
        meter_number=f"E1000000{n}",
        service_start_date=date(2015, 4, 1),
        usage_kwh=usage,
    )


def test_read_dates_count_back_from_the_last_read() -> None:
    reads = read_dates(date(2026, 9, 8), (32, 31, 29, 31))
    assert reads == (
        date(2026, 5, 8),
        date(2026, 6, 9),
        date(2026, 7, 10),
        date(2026, 8, 8),
        date(2026, 9, 8),
    )
    with pytest.raises(ValueError, match="cycle of 40 days"):
        read_dates(date(2026, 9, 8), (40, 31, 29, 31))


def test_two_premises_one_bill_each_cycle() -> None:
    reads = read_dates(date(2026, 9, 8), (32, 31, 29, 31))
    premises = (_premise(1, (700, 760, 750, 690)), _premise(2, (200, 210, 205, 190)))
    paid = Settlement(paid_on=date(2026, 6, 25), paid_with="pm_card_visa")
    bills = build_bills(
        premises,
        reads,
        tariff=DEFAULT_TARIFF,
        supplier=DEFAULT_TARIFF.default_service_supplier,
        settlements=(paid, OPEN, OPEN, OPEN),
        estimated_cycles=(1,),
    )
    assert [b.bill_date for b in bills] == list(reads[1:])
    assert [(b.due_date - b.bill_date).days for b in bills] == [21, 21, 21, 21]
    assert [b.number_suffix for b in bills] == [1, 2, 3, 4]
    assert bills[0].status == "paid" and bills[0].paid_with == "pm_card_visa"
    assert all(b.status == "open" and b.paid_on is None for b in bills[1:])
    for k, bill in enumerate(bills):
        assert len(bill.lines) == 8
        assert bill.total_cents == sum(line.amount_cents for line in bill.lines)
        # One reading per meter: supply and delivery share kWh and read dates.
        assert bill.kwh_by_reading == {
            ("E10000001", reads[k], reads[k + 1]): premises[0].usage_kwh[k],
            ("E10000002", reads[k], reads[k + 1]): premises[1].usage_kwh[k],
        }
        assert bill.total_kwh == premises[0].usage_kwh[k] + premises[1].usage_kwh[k]
        for premise in premises:
            lines = [line for line in bill.lines if line.premise_id == premise.premise_id]
            assert [line.charge_type for line in lines] == [
                "supply",
                "delivery",
                "customer_charge",
                "tax",
            ]
            supply, delivery, fixed, tax = lines
            assert (supply.read_start, supply.read_end) == (delivery.read_start, delivery.read_end)
            assert supply.kwh == delivery.kwh == premise.usage_kwh[k]
            assert fixed.kwh is None and fixed.read_start is None and tax.rate_cents_per_kwh is None
            assert tax.amount_cents == DEFAULT_TARIFF.tax_cents(
                supply.amount_cents + delivery.amount_cents + fixed.amount_cents
            )
            expected_read = "estimated" if k == 1 else "actual"
            assert supply.read_type == delivery.read_type == expected_read
    # The default-service price rises for the cycle ending in September only.
    assert [b.lines[0].rate_cents_per_kwh for b in bills] == ["10.87", "10.87", "10.87", "12.19"]


def test_settlements_must_match_cycles() -> None:
    reads = read_dates(date(2026, 9, 8), (32, 31, 29, 31))
    with pytest.raises(ValueError, match="expected 4 settlements"):
        build_bills(
            (_premise(1, (700, 760, 750, 690)),),
            reads,
            tariff=DEFAULT_TARIFF,
            supplier=DEFAULT_TARIFF.default_service_supplier,
            settlements=(OPEN,),
        )
