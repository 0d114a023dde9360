"""Bills from meter readings: one bill per read cycle, priced line by line with the tariff.

A cycle runs from one meter read to the next (29-33 days, varying, so that comparing two
bills shows a period-length effect). The bill is dated on the read-end day and falls due
21 days later. Each premise contributes four lines: generation supply and distribution (two
lines against the same reading: same kWh, same read dates), the fixed customer charge, and
the grossed-up gross receipts tax on that premise's pre-tax charges. A bill's total is the
exact sum of its lines. The bill for the k-th cycle carries month k's kWh of the premise's
usage profile (June..September), so bills are dated in June, July, August and September.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from vamos_env.envs.energy.world.models import Bill, BillLine, ChargeType, Premise, ReadType
from vamos_env.envs.energy.world.tariff import Tariff, energy_cents

DUE_DAYS = 21
MIN_CYCLE_DAYS = 29
MAX_CYCLE_DAYS = 33


@dataclass(frozen=True, slots=True)
class Settlement:
    """How a bill stands on the frozen date: open (the default) or paid on a day with a card."""

    paid_on: date | None = None
    paid_with: str | None = None  # a good card's Stripe test token; None: paid out of band


OPEN = Settlement()


def read_dates(last_read: date, cycle_days: Sequence[int]) -> tuple[date, ...]:
    """Meter read dates, oldest first, ending on ``last_read``; cycle k lasts cycle_days[k]."""
    for days in cycle_days:
        if not MIN_CYCLE_DAYS <= days <= MAX_CYCLE_DAYS:
            raise ValueError(f"cycle of {days} days; expected {MIN_CYCLE_DAYS}-{MAX_CYCLE_DAYS}")
    dates = [last_read]
    for days in reversed(cycle_days):
        dates.append(dates[-1] - timedelta(days=days))
    return tuple(reversed(dates))


def premise_lines(
    premise: Premise,
    *,
    read_start: date,
    read_end: date,
    kwh: int,
    read_type: ReadType,
    tariff: Tariff,
    supplier: str,
) -> tuple[BillLine, ...]:
    """The four lines one premise adds to a bill for one reading."""
    supply_rate = tariff.supply_rate(supplier, read_end)
    delivery_rate = tariff.distribution_cents_per_kwh
    supply = energy_cents(kwh, supply_rate)
    delivery = energy_cents(kwh, delivery_rate)
    fixed = tariff.customer_charge_cents
    tax = tariff.tax_cents(supply + delivery + fixed)
    meter = premise.meter_number
    estimated = " (estimated read)" if read_type == "estimated" else ""

    def line(amount: int, description: str, charge_type: ChargeType, rate: str | None) -> BillLine:
        metered = rate is not None
        return BillLine(
            amount_cents=amount,
            description=description,
            charge_type=charge_type,
            premise_id=premise.premise_id,
            meter_number=meter,
            kwh=kwh if metered else None,
            rate_cents_per_kwh=rate,
            period_start=read_start,
            period_end=read_end,
            read_start=read_start if metered else None,
            read_end=read_end if metered else None,
            read_type=read_type if metered else None,
        )

    tax_label = f"Pennsylvania gross receipts tax ({tariff.gross_receipts_tax_pct}%)"
    return (
        line(
            supply,
            f"Generation supply, {supplier} - meter {meter}{estimated}",
            "supply",
            supply_rate,
        ),
        line(
            delivery,
            f"Distribution (delivery) - meter {meter}{estimated}",
            "delivery",
            delivery_rate,
        ),
        line(fixed, f"Customer charge - meter {meter}", "customer_charge", None),
        line(tax, f"{tax_label} - meter {meter}", "tax", None),
    )


def build_bills(
    premises: Sequence[Premise],
    reads: Sequence[date],
    *,
    tariff: Tariff,
    supplier: str,
    settlements: Sequence[Settlement],
    estimated_cycles: Collection[int] = (),
) -> tuple[Bill, ...]:
    """One bill per cycle between consecutive ``reads``, oldest first, numbered from 1.

    ``settlements[k]`` says whether bill k is paid (and when, with which card) or open;
    ``estimated_cycles`` holds the cycle indexes whose reading was estimated.
    """
    cycles = len(reads) - 1
    if len(settlements) != cycles:
        raise ValueError(f"expected {cycles} settlements (one per cycle), got {len(settlements)}")
    bills = []
    for k in range(cycles):
        start, end = reads[k], reads[k + 1]
        read_type: ReadType = "estimated" if k in estimated_cycles else "actual"
        lines = tuple(
            line
            for premise in premises
            for line in premise_lines(
                premise,
                read_start=start,
                read_end=end,
                kwh=premise.usage_kwh[k],
                read_type=read_type,
                tariff=tariff,
                supplier=supplier,
            )
        )
        settled = settlements[k]
        bills.append(
            Bill(
                number_suffix=k + 1,
                bill_date=end,
                due_date=end + timedelta(days=DUE_DAYS),
                period_start=start,
                period_end=end,
                lines=lines,
                total_cents=sum(line.amount_cents for line in lines),
                status="open" if settled.paid_on is None else "paid",
                paid_on=settled.paid_on,
                paid_with=settled.paid_with,
            )
        )
    return tuple(bills)
