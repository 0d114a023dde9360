"""Repayment schedules and repayment allocation for zero-interest Fineract loans.

Schedule rounding, as Fineract's cumulative schedule generators do it (read in
``LoanApplicationTerms.paymentPerPeriod`` / ``calculateTotalPrincipalPerPeriodWithoutGrace``,
``adjustPrincipalIfLastRepaymentPeriod``, ``Money`` and ``MoneyHelper``):

1. The instalment (EMI) is ``principal / numberOfRepayments`` (the PMT of a 0% rate).
2. If the product sets ``installmentAmountInMultiplesOf`` (m), the EMI is rounded to a
   multiple of m (``divide(m, scale 0, HALF_EVEN) * m``).
3. It is then scaled to the currency's ``digitsAfterDecimal`` with the tenant's rounding
   mode, HALF_EVEN by default; for a currency with 0 digits and ``inMultiplesOf`` k the
   amount is rounded to a multiple of k as well.
4. Every instalment carries that EMI, except that the running total may never pass the
   principal (an instalment is cut to what remains, possibly to 0), and **the last
   instalment absorbs the remainder** (principal minus the sum of the others).

So 100.00 over 3 is 33.33, 33.33, 33.34; 658.41 over 6 is 5 x 109.74 (109.735 rounds
half-even up) and a last 109.71; 1000.00 over 60 is 59 x 16.67 and a last 16.47.

Due dates step by ``repaymentEvery`` days, weeks, months or years from the first due
date (``repaymentsStartingFromDate``, else one step after disbursement); monthly dates
keep the seed's day of month where the month allows it (Jan 31 -> Feb 28 -> Mar 31),
as ``CalendarUtils.adjustDate`` does.

Repayments are allocated oldest unpaid instalment first (``mifos-standard-strategy``:
penalties, fees, interest, principal - only principal exists here); what exceeds the
outstanding principal is the loan's overpayment. Money is integer minor units (cents).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta

DAYS, WEEKS, MONTHS, YEARS = 0, 1, 2, 3


def round_half_even(numerator: int, denominator: int) -> int:
    """``numerator / denominator`` rounded to an integer, ties to even (exact)."""
    quotient, remainder = divmod(numerator, denominator)
    twice = 2 * remainder
    if twice > denominator or (twice == denominator and quotient % 2 == 1):
        quotient += 1
    return quotient


def instalment_amount(
    principal_cents: int,
    count: int,
    *,
    digits_after_decimal: int = 2,
    currency_multiple: int = 0,
    instalment_multiple: int = 0,
) -> int:
    """The EMI in cents for a zero-interest loan (steps 1-3 of the module docstring)."""
    if instalment_multiple > 0:
        step = 100 * instalment_multiple
        emi = round_half_even(principal_cents, count * step) * step
    else:
        # Sub-cent currencies are held at cents in the twin (a documented limit).
        step = 10 ** max(0, 2 - digits_after_decimal)
        emi = round_half_even(principal_cents, count * step) * step
    if digits_after_decimal < 2:
        step = 10 ** (2 - digits_after_decimal)
        emi = round_half_even(emi, step) * step
    if digits_after_decimal == 0 and currency_multiple > 0 and emi > 0:
        step = 100 * currency_multiple
        emi = round_half_even(emi, step) * step
    return emi


def split_principal(principal_cents: int, emi_cents: int, count: int) -> list[int]:
    """Principal per instalment: EMI each, capped at what remains, remainder on the last."""
    out: list[int] = []
    cumulative = 0
    for number in range(1, count + 1):
        portion = emi_cents
        cumulative += portion
        if cumulative > principal_cents:
            portion -= cumulative - principal_cents
            cumulative = principal_cents
        elif number == count:
            portion += principal_cents - cumulative
            cumulative = principal_cents
        out.append(portion)
    return out


def _add_months(d: date, months: int) -> date:
    index = d.month - 1 + months
    year, month = d.year + index // 12, index % 12 + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def step_date(d: date, every: int, frequency: int) -> date:
    if frequency == DAYS:
        return d + timedelta(days=every)
    if frequency == WEEKS:
        return d + timedelta(weeks=every)
    if frequency == MONTHS:
        return _add_months(d, every)
    return _add_months(d, 12 * every)


def due_dates(
    start: date, first_due: date | None, count: int, every: int, frequency: int
) -> list[date]:
    """Fineract's ``DefaultScheduledDateGenerator`` for a loan without a meeting calendar."""
    seed = first_due or start
    out: list[date] = []
    previous = start
    for number in range(count):
        if number == 0 and first_due is not None:
            due = first_due
        else:
            due = step_date(previous, every, frequency)
            if frequency == MONTHS and seed.day > 28 and due.day >= 28:
                last = calendar.monthrange(due.year, due.month)[1]
                due = due.replace(day=min(last, seed.day))
        out.append(due)
        previous = due
    return out


@dataclass(frozen=True, slots=True)
class Installment:
    """One scheduled instalment; the paid figures are derived from the loan's repayments."""

    number: int
    from_date: date
    due_date: date
    principal_cents: int
    paid_cents: int = 0
    paid_in_advance_cents: int = 0
    paid_late_cents: int = 0
    obligations_met_on: date | None = None

    @property
    def outstanding_cents(self) -> int:
        return self.principal_cents - self.paid_cents

    @property
    def complete(self) -> bool:
        return self.paid_cents >= self.principal_cents


def build_schedule(
    principal_cents: int,
    count: int,
    start: date,
    first_due: date | None,
    every: int,
    frequency: int,
    *,
    digits_after_decimal: int = 2,
    currency_multiple: int = 0,
    instalment_multiple: int = 0,
) -> tuple[Installment, ...]:
    emi = instalment_amount(
        principal_cents,
        count,
        digits_after_decimal=digits_after_decimal,
        currency_multiple=currency_multiple,
        instalment_multiple=instalment_multiple,
    )
    portions = split_principal(principal_cents, emi, count)
    dues = due_dates(start, first_due, count, every, frequency)
    froms = [start, *dues[:-1]]
    return tuple(Installment(n + 1, froms[n], dues[n], portions[n]) for n in range(count))


@dataclass(frozen=True, slots=True)
class Allocation:
    """How one repayment was spent."""

    principal_cents: int
    overpayment_cents: int
    outstanding_after_cents: int


@dataclass(frozen=True, slots=True)
class Repayment:
    """What allocation needs to know about one repayment transaction."""

    transaction_id: int
    on: date
    amount_cents: int


def allocate(
    schedule: Sequence[Installment], repayments: Iterable[Repayment]
) -> tuple[tuple[Installment, ...], dict[int, Allocation], int]:
    """Replay repayments in date order over a fresh schedule.

    Returns the schedule with paid figures, each repayment's allocation, and the total
    overpaid. Replaying everything (rather than applying the newest repayment alone)
    makes a back-dated repayment land where Fineract's reprocessing puts it.
    """
    rows = [
        replace(
            i, paid_cents=0, paid_in_advance_cents=0, paid_late_cents=0, obligations_met_on=None
        )
        for i in schedule
    ]
    outstanding = sum(i.principal_cents for i in rows)
    overpaid = 0
    allocations: dict[int, Allocation] = {}
    for repayment in sorted(repayments, key=lambda r: (r.on, r.transaction_id)):
        left = repayment.amount_cents
        principal = 0
        for index, row in enumerate(rows):
            if left == 0:
                break
            due = row.outstanding_cents
            if due <= 0:
                continue
            portion = min(due, left)
            left -= portion
            principal += portion
            advance = portion if repayment.on < row.due_date else 0
            late = portion if repayment.on > row.due_date else 0
            paid = row.paid_cents + portion
            rows[index] = replace(
                row,
                paid_cents=paid,
                paid_in_advance_cents=row.paid_in_advance_cents + advance,
                paid_late_cents=row.paid_late_cents + late,
                obligations_met_on=repayment.on if paid >= row.principal_cents else None,
            )
        outstanding -= principal
        overpaid += left
        allocations[repayment.transaction_id] = Allocation(principal, left, outstanding)
    return tuple(rows), allocations, overpaid
