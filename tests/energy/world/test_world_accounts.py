"""The 24 accounts: determinism, invariants on every account, and coverage of every situation."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from vamos_env.clock import TODAY
from vamos_env.envs.energy.world.accounts import (
    DEFAULT_MANIFEST_SEED,
    ROUTES,
    SLOTS,
    TEST_CARDS,
    accounts_table_markdown,
    build_manifest,
    default_manifest,
)
from vamos_env.envs.energy.world.models import Manifest
from vamos_env.envs.energy.world.situations import SITUATIONS, derive_situations

DOCS = Path(__file__).resolve().parents[3] / "docs" / "world.md"
SEEDS = (0, 1, 2, 3, 7)


@pytest.fixture(scope="module", params=SEEDS)
def manifest(request: pytest.FixtureRequest) -> Manifest:
    assert isinstance(request.param, int)
    return build_manifest(request.param)


def test_same_seed_same_world_other_seed_other_usage() -> None:
    first, again = build_manifest(0), build_manifest(0)
    assert first.model_dump_json() == again.model_dump_json()
    other = build_manifest(1)
    assert [a.usage_kwh for a in first.accounts] != [a.usage_kwh for a in other.accounts]
    assert [s.slot for s in SLOTS] == [a.slot for a in other.accounts]


def test_default_manifest_is_cached_and_canonical() -> None:
    assert default_manifest() is default_manifest()
    assert default_manifest() == build_manifest(DEFAULT_MANIFEST_SEED)
    assert "SYNTHETIC" in default_manifest().usage_source


def test_manifest_json_round_trips() -> None:
    m = default_manifest()
    assert Manifest.model_validate_json(m.model_dump_json()) == m


def test_identities_are_well_formed_and_unique(manifest: Manifest) -> None:
    accounts = manifest.accounts
    assert len(accounts) == 24
    assert [a.slot for a in accounts] == [f"A{n:02d}" for n in range(1, 25)]
    for field in ("account_number", "email", "phone", "invoice_prefix", "full_name"):
        values = [getattr(a, field) for a in accounts]
        assert len(set(values)) == 24, field
    meters = [p.meter_number for a in accounts for p in a.premises]
    premise_ids = [p.premise_id for a in accounts for p in a.premises]
    assert len(set(meters)) == len(meters) and len(set(premise_ids)) == len(premise_ids)
    for a in accounts:
        assert re.fullmatch(r"\d{4}-\d{5}", a.account_number)
        assert re.fullmatch(r"\+1[2-9]\d{2}5550[1]\d{2}", a.phone)  # fictional 555-01xx
        assert re.fullmatch(r"\d{5}", a.mailing_address.postal_code)
        assert a.mailing_address.state == "PA"
        assert a.email.endswith((".com", ".net", ".org")) and "example." in a.email
        assert len(a.full_name.split()) >= 2


def test_usage_and_bills_invariants(manifest: Manifest) -> None:
    for a in manifest.accounts:
        assert all(150 <= k <= 1000 for k in a.usage_kwh)
        assert len(a.bills) == 4
        assert [b.bill_date.month for b in a.bills] == [6, 7, 8, 9]
        assert a.bills[-1].bill_date <= TODAY - timedelta(days=1)
        lengths = {(b.period_end - b.period_start).days for b in a.bills}
        assert lengths <= set(range(29, 34)) and len(lengths) >= 2
        for older, newer in zip(a.bills, a.bills[1:], strict=False):
            assert newer.period_start == older.period_end
        good = {c.stripe_test_token for c in a.good_cards}
        for k, bill in enumerate(a.bills):
            assert bill.total_cents == sum(line.amount_cents for line in bill.lines)
            assert bill.due_date >= bill.bill_date + timedelta(days=20)
            assert bill.bill_date <= TODAY
            if bill.status == "paid":
                assert bill.paid_on is not None and bill.bill_date <= bill.paid_on <= TODAY
                assert bill.paid_with in good or (bill.paid_with is None and not good)
            assert bill.kwh_by_reading == {
                (p.meter_number, bill.period_start, bill.period_end): p.usage_kwh[k]
                for p in a.premises
            }
            assert bill.total_kwh == a.usage_kwh[k]
            supply = [line for line in bill.lines if line.charge_type == "supply"]
            delivery = [line for line in bill.lines if line.charge_type == "delivery"]
            assert [(s.meter_number, s.kwh, s.read_start, s.read_end) for s in supply] == [
                (d.meter_number, d.kwh, d.read_start, d.read_end) for d in delivery
            ]


def test_dates_are_in_the_past(manifest: Manifest) -> None:
    for a in manifest.accounts:
        history = [a.client_activation_date, *(p.service_start_date for p in a.premises)]
        history += [d for d in (a.prior_arrangement_default_on, a.last_extension_on) if d]
        arr = a.existing_arrangement
        if arr is not None:
            history += [arr.submitted_on, arr.approved_on, arr.disbursed_on]
            history += [r.on for r in arr.repayments]
            assert a.client_activation_date <= arr.submitted_on
            assert arr.principal_cents % arr.installments == 0
        assert all(d <= TODAY for d in history), a.slot
        assert a.client_activation_date == min(p.service_start_date for p in a.premises)


def test_cards_follow_the_stripe_catalogue(manifest: Manifest) -> None:
    for a in manifest.accounts:
        assert len({c.last4 for c in a.cards}) == len(a.cards)
        for card in a.cards:
            assert TEST_CARDS[card.stripe_test_token] == card
    # Last fours differ across accounts as far as Stripe's test tokens allow: every token used.
    used = {c.last4 for a in manifest.accounts for c in a.cards}
    assert used == {c.last4 for c in TEST_CARDS.values()}


def test_situation_labels_are_derived(manifest: Manifest) -> None:
    for a in manifest.accounts:
        assert a.situations == derive_situations(a)
        assert set(a.situations) <= set(SITUATIONS)
        slot = SLOTS[int(a.slot[1:]) - 1]
        assert set(slot.intent) <= set(a.situations), a.slot


def test_past_due_comes_from_unpaid_bills(manifest: Manifest) -> None:
    for a in manifest.accounts:
        unpaid = [b for b in a.bills if b.status == "open" and b.due_date < TODAY]
        assert a.past_due_cents() == sum(b.total_cents for b in unpaid)
    for a in manifest.with_situation("shutoff_process"):
        assert [b.status for b in a.bills[:3]] == ["open", "open", "open"]


# Every situation the exam needs, each named, with how many accounts must carry it.
REQUIRED = {
    "two_cards": 2,
    "card_generic_decline": 1,
    "card_insufficient_funds": 1,
    "card_expired": 1,
    "income_150_or_less": 1,
    "income_151_to_250": 1,
    "income_251_to_300": 1,
    "income_over_300": 1,
    "income_unknown": 1,
    "prior_default_within_12_months": 1,
    "prior_default_over_12_months": 1,
    "extension_within_12_months": 1,
    "extension_over_12_months": 1,
    "medical_certificate_active": 1,
    "medical_certificate_expired": 1,
    "retail_choice": 1,
    "default_service": 1,
    "one_premise": 1,
    "two_premises": 1,
    "fully_current": 1,
    "past_due_under_50": 1,
    "past_due_50_to_499": 1,
    "shutoff_process": 1,
    "arrangement_active": 3,
    "arrangement_overdue_bills_paid": 1,
    "arrangement_eligible": 1,
    "paperless_on": 1,
    "paperless_off": 1,
    "bill_under_50": 1,
    "estimated_read": 1,
    "middle_name": 1,
    "hyphenated_surname": 1,
    "multi_word_surname": 1,
}


@pytest.mark.parametrize(("label", "at_least"), REQUIRED.items())
def test_every_needed_situation_is_present(manifest: Manifest, label: str, at_least: int) -> None:
    assert len(manifest.with_situation(label)) >= at_least, label


@pytest.mark.parametrize("code", ["generic_decline", "insufficient_funds", "expired_card"])
def test_declining_cards_sit_beside_good_cards(manifest: Manifest, code: str) -> None:
    assert any(
        any(c.decline_code == code for c in a.cards) and a.good_cards for a in manifest.accounts
    )


def test_every_second_factor_is_usable(manifest: Manifest) -> None:
    for a in manifest.accounts:
        assert a.mailing_address.postal_code and a.cards and a.last_bill_amount_cents > 0


def test_routes_date_bills_in_their_months() -> None:
    for name, route in ROUTES.items():
        reads = route.reads()
        assert [d.month for d in reads[1:]] == [6, 7, 8, 9], name
        assert reads[-1] <= TODAY - timedelta(days=1)


def test_docs_table_matches_the_default_world() -> None:
    table = accounts_table_markdown(default_manifest())
    assert table in DOCS.read_text(encoding="utf-8"), (
        "docs/world.md is out of date; paste accounts_table_markdown(default_manifest())"
    )
