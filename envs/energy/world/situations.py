"""Situation labels: what kind of call each account makes possible, derived from its facts.

Labels are computed, never typed by hand, so they cannot drift from the data: an account is
labelled ``shutoff_process`` exactly when it is at least $500 and 60 days past due on the
frozen date. The task builder and the docs table select accounts by label; the coverage
test checks that every label the exam needs is carried by at least one account.

"Within 12 months" means on or after today minus 365 days (the world keeps its dates far
from that boundary, so the policy model's own boundary choice cannot change a label).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from vamos_env.clock import TODAY
from vamos_env.envs.energy.world.models import Account

ARRANGEMENT_MIN_PAST_DUE_CENTS = 5_000
NEW_CUSTOMER_DAYS = 183
TWELVE_MONTHS_DAYS = 365


def _within_12_months(d: date | None, today: date) -> bool:
    return d is not None and today - timedelta(days=TWELVE_MONTHS_DAYS) <= d <= today


def _before_12_months(d: date | None, today: date) -> bool:
    return d is not None and d < today - timedelta(days=TWELVE_MONTHS_DAYS)


def _income(lo: int, hi: int) -> Callable[[Account, date], bool]:
    return lambda a, _t: a.income_fpl_pct is not None and lo <= a.income_fpl_pct <= hi


def _declines_with(code: str) -> Callable[[Account, date], bool]:
    return lambda a, _t: any(c.decline_code == code for c in a.cards)


def _arrangement_eligible(a: Account, t: date) -> bool:
    return (
        a.past_due_cents(t) >= ARRANGEMENT_MIN_PAST_DUE_CENTS
        and a.existing_arrangement is None
        and not a.in_shutoff_process(t)
    )


def _arrangement_overdue(a: Account, t: date) -> bool:
    return a.existing_arrangement is not None and bool(
        a.existing_arrangement.overdue_installments(t)
    )


# label -> (meaning, predicate over (account, today)); order is the order labels are listed in.
SITUATIONS: dict[str, tuple[str, Callable[[Account, date], bool]]] = {
    "fully_current": (
        "every bill paid, nothing open",
        lambda a, t: all(b.status == "paid" for b in a.bills),
    ),
    "current_with_open_bill": (
        "nothing past due; the latest bill is open and not yet due",
        lambda a, t: a.past_due_cents(t) == 0 and a.last_bill.status == "open",
    ),
    "past_due_under_50": (
        "past due more than $0 and under $50.00",
        lambda a, t: 0 < a.past_due_cents(t) < 5_000,
    ),
    "past_due_50_to_499": (
        "past due $50.00 to $499.99",
        lambda a, t: 5_000 <= a.past_due_cents(t) < 50_000,
    ),
    "past_due_500_plus": ("past due $500.00 or more", lambda a, t: a.past_due_cents(t) >= 50_000),
    "past_due_60_plus_days": (
        "the oldest past-due bill is 60 or more days past due",
        lambda a, t: a.days_past_due(t) >= 60,
    ),
    "shutoff_process": (
        "in the shutoff process: at least $500 and at least 60 days past due",
        lambda a, t: a.in_shutoff_process(t),
    ),
    "arrangement_eligible": (
        "a new arrangement is possible: >= $50 past due, none active, not in shutoff",
        _arrangement_eligible,
    ),
    "arrangement_active": (
        "an arrangement (Fineract loan) is active",
        lambda a, t: a.existing_arrangement is not None,
    ),
    "arrangement_current_installments": (
        "active arrangement with no overdue instalment",
        lambda a, t: a.existing_arrangement is not None and not _arrangement_overdue(a, t),
    ),
    "arrangement_overdue_installment": (
        "active arrangement with an overdue instalment",
        _arrangement_overdue,
    ),
    "arrangement_overdue_bills_paid": (
        "overdue arrangement instalment while every bill is paid (bill balance current)",
        lambda a, t: _arrangement_overdue(a, t) and all(b.status == "paid" for b in a.bills),
    ),
    "arrangement_with_past_due_bills": (
        "active arrangement and new past-due bills besides",
        lambda a, t: a.existing_arrangement is not None and a.past_due_cents(t) > 0,
    ),
    "one_premise": ("one premise (meter)", lambda a, t: len(a.premises) == 1),
    "two_premises": ("two premises on one account", lambda a, t: len(a.premises) == 2),
    "two_cards": ("two or more cards on file", lambda a, t: len(a.cards) >= 2),
    "card_generic_decline": (
        "a card on file declines (generic_decline)",
        _declines_with("generic_decline"),
    ),
    "card_insufficient_funds": (
        "a card on file declines (insufficient_funds)",
        _declines_with("insufficient_funds"),
    ),
    "card_expired": ("a card on file declines (expired_card)", _declines_with("expired_card")),
    "only_declining_cards": ("every card on file declines", lambda a, t: not a.good_cards),
    "income_150_or_less": ("income at most 150% FPL (60-month term)", _income(0, 150)),
    "income_151_to_250": ("income 151-250% FPL (36-month term)", _income(151, 250)),
    "income_251_to_300": ("income 251-300% FPL (12-month term)", _income(251, 300)),
    "income_over_300": ("income above 300% FPL (6-month term)", _income(301, 10**6)),
    "income_unknown": ("income unknown (6-month term)", lambda a, t: a.income_fpl_pct is None),
    "prior_default_within_12_months": (
        "an arrangement default within 12 months (25% down required)",
        lambda a, t: _within_12_months(a.prior_arrangement_default_on, t),
    ),
    "prior_default_over_12_months": (
        "an arrangement default more than 12 months ago (no down payment)",
        lambda a, t: _before_12_months(a.prior_arrangement_default_on, t),
    ),
    "extension_within_12_months": (
        "a due-date extension within 12 months (no new one)",
        lambda a, t: _within_12_months(a.last_extension_on, t),
    ),
    "extension_over_12_months": (
        "the last due-date extension more than 12 months ago",
        lambda a, t: _before_12_months(a.last_extension_on, t),
    ),
    "medical_certificate_active": (
        "a medical certificate holds termination until a date on or after today",
        lambda a, t: a.medical_certificate_until is not None and a.medical_certificate_until >= t,
    ),
    "medical_certificate_expired": (
        "a medical certificate that has expired",
        lambda a, t: a.medical_certificate_until is not None and a.medical_certificate_until < t,
    ),
    "default_service": (
        "generation from default service",
        lambda a, t: a.supplier_type == "default",
    ),
    "retail_choice": (
        "generation from a third-party retail supplier",
        lambda a, t: a.supplier_type == "retail_choice",
    ),
    "paperless_on": ("paperless billing on", lambda a, t: a.paperless),
    "paperless_off": ("paperless billing off", lambda a, t: not a.paperless),
    "estimated_read": (
        "a bill with an estimated meter read",
        lambda a, t: any(line.read_type == "estimated" for b in a.bills for line in b.lines),
    ),
    "bill_under_50": (
        "a bill under $50.00",
        lambda a, t: any(b.total_cents < 5_000 for b in a.bills),
    ),
    "new_customer": (
        "service started within the last six months",
        lambda a, t: a.client_activation_date >= t - timedelta(days=NEW_CUSTOMER_DAYS),
    ),
    "mailing_postal_code_differs": (
        "the mailing postal code is not any service address's postal code",
        lambda a, t: (
            not any(p.service_address.endswith(a.mailing_address.postal_code) for p in a.premises)
        ),
    ),
    "middle_name": ("the name has a middle name", lambda a, t: a.middle_name is not None),
    "hyphenated_surname": ("a hyphenated surname", lambda a, t: "-" in a.last_name),
    "multi_word_surname": ("a surname of several words", lambda a, t: " " in a.last_name),
    "apostrophe_in_name": ("an apostrophe in the name", lambda a, t: "'" in a.full_name),
}


def derive_situations(account: Account, today: date = TODAY) -> tuple[str, ...]:
    """Every label whose predicate holds for ``account`` on ``today``, in SITUATIONS order."""
    return tuple(label for label, (_, holds) in SITUATIONS.items() if holds(account, today))


def describe(label: str) -> str:
    return SITUATIONS[label][0]
