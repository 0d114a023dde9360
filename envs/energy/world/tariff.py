"""The benchmark tariff: how one meter reading becomes priced bill lines, in integer cents.

These are BENCHMARK ASSUMPTIONS in the spirit of a Pennsylvania residential electric
tariff, not any real utility's filed rates:

- a fixed customer charge per premise per bill ($11.75), whatever the cycle length;
- generation supply at the default-service "price to compare" (10.87 cents/kWh, rising to
  12.19 cents/kWh for meter-read cycles that end on or after 2026-09-01, a quarterly
  default-service price change), or at a retail-choice supplier's own fixed rate;
- distribution (all-in delivery) at 9.52 cents/kWh;
- the state gross receipts tax, 5.9% grossed up: tax = pre-tax x 0.059 / (1 - 0.059).

A whole cycle is priced at the rate in effect on its read-end date (no proration across a
price change), which keeps every rate effect between two bills visible and explainable.

Rates are decimal strings ("10.87") so that no binary float ever touches money. Every line
amount is rounded to integer cents exactly once, half-up (0.5 cent rounds away from zero),
computed exactly with ``Decimal``/``Fraction``.
"""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints, model_validator

# A rate in cents per kWh, as a plain decimal string: "9.52", "10.875".
RateString = Annotated[str, StringConstraints(pattern=r"^\d{1,3}\.\d{1,4}$")]

DEFAULT_SERVICE_SUPPLIER = "Acme Energy default service"
GROSS_RECEIPTS_TAX_PCT = "5.9"


def round_half_up(value: Decimal | Fraction) -> int:
    """Round a non-negative exact amount of cents to an integer, half-up."""
    if value < 0:
        raise ValueError(f"expected a non-negative amount of cents, got {value}")
    if isinstance(value, Fraction):
        # floor(x + 1/2) for x = n/d, in integers: no float, no Decimal context limits.
        return (2 * value.numerator + value.denominator) // (2 * value.denominator)
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def energy_cents(kwh: int, cents_per_kwh: str) -> int:
    """kWh x rate, rounded half-up to integer cents once (e.g. 150 kWh x 10.87 = 1630.5 -> 1631)."""
    if kwh < 0:
        raise ValueError(f"expected kWh >= 0, got {kwh}")
    return round_half_up(Fraction(kwh) * Fraction(Decimal(cents_per_kwh)))


def gross_receipts_tax_cents(pretax_cents: int, tax_pct: str = GROSS_RECEIPTS_TAX_PCT) -> int:
    """The grossed-up tax on a pre-tax amount: pre-tax x r / (1 - r), rounded half-up.

    Grossing up means the tax is 5.9% of the tax-inclusive total, as a gross receipts tax
    is levied on the utility's receipts (which include the tax it recovers).
    """
    if pretax_cents < 0:
        raise ValueError(f"expected pre-tax cents >= 0, got {pretax_cents}")
    rate = Fraction(Decimal(tax_pct)) / 100
    return round_half_up(pretax_cents * rate / (1 - rate))


class PriceStep(BaseModel):
    """A default-service price that applies to cycles ending on or after ``effective_on``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    effective_on: date
    cents_per_kwh: RateString


class RetailSupplier(BaseModel):
    """A third-party (retail choice) generation supplier with its own fixed rate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    cents_per_kwh: RateString


class Tariff(BaseModel):
    """The residential rate schedule every bill in the world is priced with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    utility_name: str = "Acme Energy"
    rate_plan: str = "RS - Residential Service"
    customer_charge_cents: int = 1175
    distribution_cents_per_kwh: RateString = "9.52"
    default_service_supplier: str = DEFAULT_SERVICE_SUPPLIER
    default_service_prices: tuple[PriceStep, ...] = (
        PriceStep(effective_on=date(2026, 3, 1), cents_per_kwh="10.87"),
        PriceStep(effective_on=date(2026, 9, 1), cents_per_kwh="12.19"),
    )
    retail_suppliers: tuple[RetailSupplier, ...] = (
        RetailSupplier(name="Quillstone Energy", cents_per_kwh="9.89"),
        RetailSupplier(name="Harrow Valley Power", cents_per_kwh="11.49"),
    )
    gross_receipts_tax_pct: str = GROSS_RECEIPTS_TAX_PCT

    @model_validator(mode="after")
    def _check(self) -> Tariff:
        steps = [s.effective_on for s in self.default_service_prices]
        if not steps or steps != sorted(steps) or len(set(steps)) != len(steps):
            raise ValueError(
                f"default_service_prices must be non-empty with increasing dates, got {steps}"
            )
        names = [s.name for s in self.retail_suppliers]
        if len(set(names)) != len(names) or self.default_service_supplier in names:
            raise ValueError(f"supplier names must be unique, got {names}")
        return self

    def price_to_compare(self, read_end: date) -> str:
        """The default-service generation rate for a cycle ending on ``read_end``."""
        rate: str | None = None
        for step in self.default_service_prices:
            if step.effective_on <= read_end:
                rate = step.cents_per_kwh
        if rate is None:
            first = self.default_service_prices[0].effective_on
            raise ValueError(f"no default-service price before {first}; cycle ends {read_end}")
        return rate

    def supply_rate(self, supplier: str, read_end: date) -> str:
        """The generation rate for ``supplier`` (default service or a retail supplier)."""
        if supplier == self.default_service_supplier:
            return self.price_to_compare(read_end)
        for retail in self.retail_suppliers:
            if retail.name == supplier:
                return retail.cents_per_kwh
        known = [self.default_service_supplier, *(r.name for r in self.retail_suppliers)]
        raise ValueError(f"unknown supplier {supplier!r}; expected one of {known}")

    def tax_cents(self, pretax_cents: int) -> int:
        return gross_receipts_tax_cents(pretax_cents, self.gross_receipts_tax_pct)


DEFAULT_TARIFF = Tariff()
