"""The 24 accounts: hand-designed situations, seeded identities, bills from usage and tariff.

Each slot (A01..A24) is a situation the exam needs: who pays, what is past due and how long,
which cards decline, the income tier, protections, arrangements, extensions, premises. The
slots are fixed. The seed draws the people (names, addresses, account numbers, phones,
meters, service start dates, payment days, from small local lists of our own making) and,
with the default synthetic source, their electricity use. ``DEFAULT_MANIFEST_SEED`` is the
canonical exam world that docs/world.md tabulates.

Every slot states the labels it exists for (``intent``); ``build_manifest`` checks them
against the labels derived from the built account and refuses a world that misses one (with
real ResStock usage, a building can make a low-use slot's bill too large, for instance).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from typing import Literal

import numpy as np

from vamos_env.clock import TODAY
from vamos_env.envs.energy.world.bills import OPEN, Settlement, build_bills, read_dates
from vamos_env.envs.energy.world.models import (
    Account,
    Address,
    Card,
    ExistingArrangement,
    Manifest,
    MonthlyKwh,
    Premise,
    Repayment,
)
from vamos_env.envs.energy.world.situations import derive_situations
from vamos_env.envs.energy.world.tariff import DEFAULT_TARIFF, Tariff
from vamos_env.envs.energy.world.usage import Archetype, ResStockUsage, SyntheticUsage, UsageSource

DEFAULT_MANIFEST_SEED = 0

# Stripe test PaymentMethod tokens: brand and last four as Stripe reports them, and the
# decline each one produces when charged. pm_card_amex is left out on purpose: sources
# disagree on its last four (0005 or 8431), and a second factor must be exact.
TEST_CARDS: dict[str, Card] = {
    c.stripe_test_token: c
    for c in (
        Card(stripe_test_token="pm_card_visa", brand="visa", last4="4242"),
        Card(stripe_test_token="pm_card_visa_debit", brand="visa", last4="5556"),
        Card(stripe_test_token="pm_card_mastercard", brand="mastercard", last4="4444"),
        Card(stripe_test_token="pm_card_mastercard_debit", brand="mastercard", last4="8210"),
        Card(stripe_test_token="pm_card_mastercard_prepaid", brand="mastercard", last4="5100"),
        Card(stripe_test_token="pm_card_discover", brand="discover", last4="1117"),
        Card(stripe_test_token="pm_card_diners", brand="diners", last4="0004"),
        Card(stripe_test_token="pm_card_jcb", brand="jcb", last4="0505"),
        Card(stripe_test_token="pm_card_unionpay", brand="unionpay", last4="0005"),
        Card(
            stripe_test_token="pm_card_chargeDeclined",
            brand="visa",
            last4="0002",
            declines=True,
            decline_code="generic_decline",
        ),
        Card(
            stripe_test_token="pm_card_chargeDeclinedInsufficientFunds",
            brand="visa",
            last4="9995",
            declines=True,
            decline_code="insufficient_funds",
        ),
        Card(
            stripe_test_token="pm_card_chargeDeclinedExpiredCard",
            brand="visa",
            last4="0069",
            declines=True,
            decline_code="expired_card",
        ),
    )
}

NameShape = Literal["plain", "middle", "hyphenated", "multi_word", "apostrophe"]


@dataclass(frozen=True, slots=True)
class Route:
    """A meter-read route: the last read day and the four cycle lengths before it."""

    last_read: date
    cycles: tuple[int, int, int, int]

    def reads(self) -> tuple[date, ...]:
        return read_dates(self.last_read, self.cycles)


# Reads fall so that the four bills are dated in June, July, August and September.
ROUTES = {
    "R1": Route(date(2026, 9, 8), (32, 31, 29, 31)),  # bills Jun 9, Jul 10, Aug 8, Sep 8
    "R2": Route(date(2026, 9, 3), (30, 33, 31, 29)),  # Jun 2, Jul 5, Aug 5, Sep 3
    "R3": Route(date(2026, 9, 9), (29, 32, 30, 33)),  # Jun 6, Jul 8, Aug 7, Sep 9
    "R4": Route(date(2026, 9, 4), (33, 29, 32, 30)),  # Jun 5, Jul 4, Aug 5, Sep 4
    "R5": Route(date(2026, 9, 1), (31, 30, 33, 29)),  # Jun 1, Jul 1, Aug 3, Sep 1
    "R6": Route(date(2026, 9, 7), (31, 32, 29, 30)),  # Jun 8, Jul 10, Aug 8, Sep 7
}

QUILLSTONE, HARROW = "Quillstone Energy", "Harrow Valley Power"


@dataclass(frozen=True, slots=True)
class SecondPremise:
    kind: Literal["rear_workshop", "rental_unit", "cabin"]
    share: float  # this meter's share of the household's monthly use


@dataclass(frozen=True, slots=True)
class Slot:
    """One hand-designed account situation (everything but the seeded identity and usage)."""

    slot: str
    note: str
    intent: tuple[str, ...]
    name_shape: NameShape
    cards: tuple[str, ...]
    pattern: str  # June..September bills: P paid, O open (e.g. "PPOO")
    route: str
    income_fpl_pct: int | None
    household_size: int
    supplier: str | None = None  # None: default service
    paperless: bool = False
    archetype: Archetype = "typical"
    second_premise: SecondPremise | None = None
    estimated_cycles: tuple[int, ...] = ()
    medical_certificate_until: date | None = None
    prior_arrangement_default_on: date | None = None
    last_extension_on: date | None = None
    arrangement: ExistingArrangement | None = None
    new_customer: bool = False
    mailing_elsewhere: bool = False


def _arrangement(
    principal_cents: int, installments: int, opened: date, first_due: date, paid: Sequence[date]
) -> ExistingArrangement:
    each = principal_cents // installments
    return ExistingArrangement(
        principal_cents=principal_cents,
        installments=installments,
        submitted_on=opened,
        approved_on=opened,
        disbursed_on=opened,
        first_due_on=first_due,
        repayments=tuple(Repayment(on=d, amount_cents=each) for d in paid),
    )


SLOTS: tuple[Slot, ...] = (
    Slot(
        slot="A01",
        note="Fully current, paperless; the simplest verified caller.",
        intent=("fully_current", "paperless_on", "income_over_300"),
        name_shape="plain",
        cards=("pm_card_visa",),
        pattern="PPPP",
        route="R5",
        income_fpl_pct=425,
        household_size=2,
        paperless=True,
    ),
    Slot(
        slot="A02",
        note="Current with an open September bill; two good cards; retail supplier.",
        intent=("current_with_open_bill", "two_cards", "retail_choice", "income_unknown"),
        name_shape="middle",
        cards=("pm_card_mastercard", "pm_card_visa_debit"),
        pattern="PPPO",
        route="R1",
        income_fpl_pct=None,
        household_size=3,
        supplier=QUILLSTONE,
    ),
    Slot(
        slot="A03",
        note="Low-use household; August unpaid, under $50 past due (too little to arrange).",
        intent=("past_due_under_50", "bill_under_50", "income_150_or_less"),
        name_shape="apostrophe",
        cards=("pm_card_discover",),
        pattern="PPOO",
        route="R3",
        income_fpl_pct=140,
        household_size=1,
        archetype="low",
    ),
    Slot(
        slot="A04",
        note="August past due; the first card on file declines (generic), the second pays.",
        intent=("past_due_50_to_499", "card_generic_decline", "two_cards", "arrangement_eligible"),
        name_shape="hyphenated",
        cards=("pm_card_chargeDeclined", "pm_card_mastercard_debit"),
        pattern="PPOO",
        route="R1",
        income_fpl_pct=220,
        household_size=4,
        paperless=True,
    ),
    Slot(
        slot="A05",
        note="July and August past due; the only card declines for insufficient funds.",
        intent=(
            "only_declining_cards",
            "card_insufficient_funds",
            "past_due_50_to_499",
            "arrangement_eligible",
            "income_251_to_300",
        ),
        name_shape="plain",
        cards=("pm_card_chargeDeclinedInsufficientFunds",),
        pattern="POOO",
        route="R6",
        income_fpl_pct=280,
        household_size=3,
        paperless=True,
    ),
    Slot(
        slot="A06",
        note="August past due; an expired card beside a good one; retail supplier.",
        intent=("card_expired", "retail_choice", "past_due_50_to_499", "income_over_300"),
        name_shape="plain",
        cards=("pm_card_chargeDeclinedExpiredCard", "pm_card_jcb"),
        pattern="PPOO",
        route="R3",
        income_fpl_pct=310,
        household_size=2,
        supplier=HARROW,
    ),
    Slot(
        slot="A07",
        note="Shutoff process: June-August unpaid over two premises (house and workshop).",
        intent=("shutoff_process", "two_premises", "past_due_500_plus", "multi_word_surname"),
        name_shape="multi_word",
        cards=("pm_card_visa",),
        pattern="OOOO",
        route="R5",
        income_fpl_pct=130,
        household_size=5,
        second_premise=SecondPremise("rear_workshop", 0.22),
    ),
    Slot(
        slot="A08",
        note="Shutoff process with an active medical certificate (goes to a human).",
        intent=("shutoff_process", "medical_certificate_active"),
        name_shape="plain",
        cards=("pm_card_mastercard_prepaid",),
        pattern="OOOO",
        route="R3",
        income_fpl_pct=175,
        household_size=4,
        paperless=True,
        medical_certificate_until=date(2026, 10, 9),
    ),
    Slot(
        slot="A09",
        note="Disputes an estimated June bill left unpaid: over 60 days but under $500.",
        intent=(
            "past_due_60_plus_days",
            "past_due_50_to_499",
            "arrangement_eligible",
            "estimated_read",
        ),
        name_shape="middle",
        cards=("pm_card_diners",),
        pattern="OPPO",
        route="R1",
        income_fpl_pct=240,
        household_size=2,
        estimated_cycles=(0,),
    ),
    Slot(
        slot="A10",
        note="Two premises (home and a rental unit); July and August past due.",
        intent=("two_premises", "past_due_50_to_499", "income_unknown", "arrangement_eligible"),
        name_shape="plain",
        cards=("pm_card_unionpay", "pm_card_visa"),
        pattern="POOO",
        route="R4",
        income_fpl_pct=None,
        household_size=4,
        paperless=True,
        second_premise=SecondPremise("rental_unit", 0.4),
    ),
    Slot(
        slot="A11",
        note="Arrangement default in February 2026: a quote needs 25% down, then a human.",
        intent=("prior_default_within_12_months", "arrangement_eligible", "income_151_to_250"),
        name_shape="plain",
        cards=("pm_card_visa_debit",),
        pattern="PPOO",
        route="R6",
        income_fpl_pct=190,
        household_size=3,
        prior_arrangement_default_on=date(2026, 2, 17),
    ),
    Slot(
        slot="A12",
        note="Arrangement default in June 2025 (over 12 months): no down payment.",
        intent=(
            "prior_default_over_12_months",
            "card_insufficient_funds",
            "arrangement_eligible",
            "income_251_to_300",
        ),
        name_shape="hyphenated",
        cards=("pm_card_mastercard", "pm_card_chargeDeclinedInsufficientFunds"),
        pattern="POOO",
        route="R2",
        income_fpl_pct=260,
        household_size=2,
        supplier=QUILLSTONE,
        paperless=True,
        prior_arrangement_default_on=date(2025, 6, 24),
    ),
    Slot(
        slot="A13",
        note="Had a due-date extension in April 2026: no new one this year.",
        intent=("extension_within_12_months", "past_due_50_to_499", "income_over_300"),
        name_shape="middle",
        cards=("pm_card_discover",),
        pattern="PPOO",
        route="R4",
        income_fpl_pct=350,
        household_size=1,
        paperless=True,
        last_extension_on=date(2026, 4, 21),
    ),
    Slot(
        slot="A14",
        note="Last extension in May 2025; the open September bill cannot be moved.",
        intent=("extension_over_12_months", "current_with_open_bill", "retail_choice"),
        name_shape="plain",
        cards=("pm_card_jcb",),
        pattern="PPPO",
        route="R1",
        income_fpl_pct=None,
        household_size=2,
        supplier=QUILLSTONE,
        last_extension_on=date(2025, 5, 13),
    ),
    Slot(
        slot="A15",
        note="Medical certificate expired in August; July and August past due.",
        intent=(
            "medical_certificate_expired",
            "card_generic_decline",
            "arrangement_eligible",
            "income_150_or_less",
        ),
        name_shape="multi_word",
        cards=("pm_card_chargeDeclined", "pm_card_visa"),
        pattern="POOO",
        route="R6",
        income_fpl_pct=145,
        household_size=6,
        medical_certificate_until=date(2026, 8, 21),
    ),
    Slot(
        slot="A16",
        note="Every bill paid, but the August arrangement instalment is overdue.",
        intent=("arrangement_overdue_bills_paid", "fully_current", "arrangement_active"),
        name_shape="plain",
        cards=("pm_card_mastercard_debit",),
        pattern="PPPP",
        route="R2",
        income_fpl_pct=380,
        household_size=3,
        paperless=True,
        arrangement=_arrangement(
            48000,
            6,
            date(2026, 3, 16),
            date(2026, 4, 16),
            (date(2026, 4, 14), date(2026, 5, 15), date(2026, 6, 16), date(2026, 7, 13)),
        ),
    ),
    Slot(
        slot="A17",
        note="Arrangement in good standing; September bill open, not yet due.",
        intent=("arrangement_current_installments", "current_with_open_bill", "arrangement_active"),
        name_shape="plain",
        cards=("pm_card_unionpay",),
        pattern="PPPO",
        route="R3",
        income_fpl_pct=205,
        household_size=4,
        arrangement=_arrangement(
            90000,
            12,
            date(2026, 5, 4),
            date(2026, 6, 4),
            (date(2026, 6, 3), date(2026, 7, 2), date(2026, 8, 4), date(2026, 9, 3)),
        ),
    ),
    Slot(
        slot="A18",
        note="Active arrangement plus a new past-due August bill (no second arrangement).",
        intent=(
            "arrangement_with_past_due_bills",
            "card_expired",
            "arrangement_active",
            "retail_choice",
        ),
        name_shape="plain",
        cards=("pm_card_visa", "pm_card_chargeDeclinedExpiredCard"),
        pattern="PPOO",
        route="R4",
        income_fpl_pct=120,
        household_size=5,
        supplier=HARROW,
        arrangement=_arrangement(
            36000, 9, date(2026, 6, 22), date(2026, 7, 22), (date(2026, 7, 20), date(2026, 8, 21))
        ),
    ),
    Slot(
        slot="A19",
        note="Home and cabin; mail to a PO box in another town (postal code differs).",
        intent=(
            "two_premises",
            "current_with_open_bill",
            "mailing_postal_code_differs",
            "retail_choice",
            "two_cards",
        ),
        name_shape="middle",
        cards=("pm_card_diners", "pm_card_mastercard"),
        pattern="PPPO",
        route="R6",
        income_fpl_pct=530,
        household_size=4,
        supplier=HARROW,
        paperless=True,
        second_premise=SecondPremise("cabin", 0.25),
        mailing_elsewhere=True,
    ),
    Slot(
        slot="A20",
        note="Retail supplier; estimated August read left unpaid; income exactly 300% FPL.",
        intent=("retail_choice", "estimated_read", "past_due_50_to_499", "income_251_to_300"),
        name_shape="multi_word",
        cards=("pm_card_mastercard_prepaid",),
        pattern="PPOO",
        route="R2",
        income_fpl_pct=300,
        household_size=2,
        supplier=QUILLSTONE,
        estimated_cycles=(2,),
    ),
    Slot(
        slot="A21",
        note="Low-use single occupant, fully paid; every bill under $50.",
        intent=("fully_current", "bill_under_50", "income_unknown"),
        name_shape="apostrophe",
        cards=("pm_card_visa_debit",),
        pattern="PPPP",
        route="R4",
        income_fpl_pct=None,
        household_size=1,
        paperless=True,
        archetype="low",
    ),
    Slot(
        slot="A22",
        note="Estimated July read, then actual; good for comparing bills.",
        intent=("estimated_read", "current_with_open_bill", "two_cards", "income_over_300"),
        name_shape="plain",
        cards=("pm_card_discover", "pm_card_mastercard"),
        pattern="PPPO",
        route="R1",
        income_fpl_pct=450,
        household_size=5,
        estimated_cycles=(1,),
    ),
    Slot(
        slot="A23",
        note="New customer since May 2026; income exactly 150% FPL; July-August unpaid.",
        intent=("new_customer", "income_150_or_less", "past_due_50_to_499", "arrangement_eligible"),
        name_shape="hyphenated",
        cards=("pm_card_diners",),
        pattern="POOO",
        route="R3",
        income_fpl_pct=150,
        household_size=5,
        new_customer=True,
    ),
    Slot(
        slot="A24",
        note="Income exactly 250% FPL; paper bills; August past due; two cards.",
        intent=(
            "income_151_to_250",
            "past_due_50_to_499",
            "two_cards",
            "paperless_off",
            "arrangement_eligible",
        ),
        name_shape="plain",
        cards=("pm_card_jcb", "pm_card_mastercard_debit"),
        pattern="PPOO",
        route="R5",
        income_fpl_pct=250,
        household_size=3,
    ),
)

# fmt: off
# Small local lists of our own making; every person in the world is fictional.
FIRST_NAMES = (
    "Maria", "James", "Aisha", "Daniel", "Priya", "Thomas", "Keisha", "Robert", "Elena",
    "Marcus", "Linh", "Patrick", "Fatima", "Gregory", "Rosa", "Samuel", "Naomi", "Walter",
    "Colleen", "Andre", "Mei", "Victor", "Hannah", "Jerome", "Teresa", "Kwame", "Brianna",
    "Dmitri", "Sofia", "Raymond", "Yolanda", "Ethan",
)
MIDDLE_NAMES = ("Ann", "Lee", "Marie", "Joseph", "Renee", "Paul", "Grace", "Alan", "Louise")
SURNAMES: dict[NameShape, tuple[str, ...]] = {
    "plain": (
        "Kowalski", "Nguyen", "Brennan", "Okafor", "Schaefer", "Patel", "Delgado", "Yoder",
        "Stoltzfus", "Hartman", "Romano", "Mahoney", "Brubaker", "Novak", "Castillo",
        "Fitzgerald", "Zimmerman", "Haddad", "Lindqvist", "Petrakis", "Abernathy", "Moreau",
    ),
    "hyphenated": (
        "Garcia-Lopez", "Miller-Reyes", "Hughes-Baptiste", "Park-Sullivan", "Ortiz-Mendel",
        "Walsh-Obi", "Brooks-Yamada", "Rossi-Kane",
    ),
    "multi_word": ("De La Cruz", "Van Horn", "Di Salvo", "Da Silva", "Van der Berg", "Le Blanc"),
    "apostrophe": ("O'Brien", "O'Malley", "D'Angelo", "O'Connell", "D'Souza"),
}
SURNAMES["middle"] = SURNAMES["plain"]
# (city, postal code, telephone area code)
PLACES = (
    ("Harrisburg", "17104", "717"), ("Lancaster", "17603", "717"), ("York", "17403", "717"),
    ("Reading", "19604", "610"), ("Allentown", "18104", "610"), ("Bethlehem", "18017", "610"),
    ("Scranton", "18505", "570"), ("Wilkes-Barre", "18702", "570"),
    ("Williamsport", "17701", "570"), ("State College", "16801", "814"),
    ("Altoona", "16602", "814"), ("Erie", "16505", "814"), ("Johnstown", "15905", "814"),
    ("Pittsburgh", "15217", "412"), ("Butler", "16001", "724"), ("Greensburg", "15601", "724"),
    ("Chambersburg", "17201", "717"), ("Carlisle", "17013", "717"), ("Lebanon", "17042", "717"),
    ("Pottsville", "17901", "570"), ("Stroudsburg", "18360", "570"),
    ("West Chester", "19382", "484"), ("Norristown", "19401", "484"),
    ("Doylestown", "18901", "267"), ("Media", "19063", "484"), ("Hazleton", "18201", "570"),
    ("Lewisburg", "17837", "570"), ("Indiana", "15701", "724"),
)
STREETS = (
    "Maple Ave", "Ridge Rd", "Orchard Ln", "Church St", "Market St", "Walnut St",
    "Spring Garden St", "Hillcrest Dr", "Mill Rd", "Chestnut St", "Locust Ln",
    "Valley View Rd", "Penn Ave", "Sycamore Ct", "Elm St", "Quarry Rd", "Laurel Dr",
    "Cedar St", "Meadow Ln", "Creek Rd",
)
# fmt: on
EMAIL_DOMAINS = ("example.com", "example.net", "example.org")


@dataclass(frozen=True, slots=True)
class _Identity:
    first: str
    middle: str | None
    last: str
    number: str
    phone: str
    mailing: Address
    home_line1: str
    home_city: str
    home_postal: str
    cabin_place: tuple[str, str]  # another town (city, postal code) for a cabin
    other_line1: str
    meters: tuple[str, str]
    service_start: date
    second_start: date
    pay_lags: tuple[int, int, int, int]


def _draw_identities(seed: int) -> list[_Identity]:
    # Its own stream, apart from usage (SyntheticUsage keys its streams by slot).
    rng = np.random.default_rng([seed, 2026_0910])
    firsts = [FIRST_NAMES[i] for i in rng.permutation(len(FIRST_NAMES))]
    middles = [MIDDLE_NAMES[i] for i in rng.permutation(len(MIDDLE_NAMES))]
    surnames = {
        shape: [names[i] for i in rng.permutation(len(names))]
        for shape, names in SURNAMES.items()
        if shape != "middle"
    }
    places = [PLACES[i] for i in rng.permutation(len(PLACES))]
    numbers: set[str] = set()
    meters: set[str] = set()
    phones = rng.permutation(100)
    out = []
    for index, slot in enumerate(SLOTS):
        shape = "plain" if slot.name_shape == "middle" else slot.name_shape
        last = surnames[shape].pop()
        middle = middles.pop() if slot.name_shape == "middle" else None
        while True:
            number = f"{rng.integers(1000, 10000)}-{rng.integers(10000, 100000)}"
            if number not in numbers:
                numbers.add(number)
                break
        pair: list[str] = []
        while len(pair) < 2:
            meter = f"E{rng.integers(10_000_000, 100_000_000)}"
            if meter not in meters:
                meters.add(meter)
                pair.append(meter)
        city, postal, area = places[index]
        # The four places no slot lives in: two for cabins, two for PO boxes.
        cabin_city, cabin_postal, _ = places[len(SLOTS) + index % 2]
        po_city, po_postal, _ = places[len(SLOTS) + 2 + index % 2]
        home_line1 = f"{rng.integers(10, 2000)} {STREETS[rng.integers(len(STREETS))]}"
        other_line1 = f"{rng.integers(10, 2000)} {STREETS[rng.integers(len(STREETS))]}"
        mailing = (
            Address(line1=f"PO Box {rng.integers(100, 1000)}", city=po_city, postal_code=po_postal)
            if slot.mailing_elsewhere
            else Address(line1=home_line1, city=city, postal_code=postal)
        )
        start = date(2008, 1, 1) + timedelta(days=int(rng.integers(0, 6200)))
        out.append(
            _Identity(
                first=firsts[index],
                middle=middle,
                last=last,
                number=number,
                phone=f"+1{area}55501{phones[index]:02d}",
                mailing=mailing,
                home_line1=home_line1,
                home_city=city,
                home_postal=postal,
                cabin_place=(cabin_city, cabin_postal),
                other_line1=other_line1,
                meters=(pair[0], pair[1]),
                service_start=start,
                second_start=start + timedelta(days=int(rng.integers(200, 1500))),
                pay_lags=(
                    int(rng.integers(0, 12)),
                    int(rng.integers(0, 12)),
                    int(rng.integers(0, 12)),
                    int(rng.integers(0, 12)),
                ),
            )
        )
    return out


def _email(first: str, last: str, index: int) -> str:
    local = f"{first}.{last}".lower().replace(" ", "").replace("'", "")
    return f"{local}@{EMAIL_DOMAINS[index % len(EMAIL_DOMAINS)]}"


def _split_usage(total: MonthlyKwh, share: float) -> tuple[MonthlyKwh, MonthlyKwh]:
    """Split monthly use between two meters; the main meter takes the rounding remainder."""
    second = tuple(round(k * share) for k in total)
    first = tuple(k - s for k, s in zip(total, second, strict=True))
    return (first[0], first[1], first[2], first[3]), (second[0], second[1], second[2], second[3])


def _premises(
    slot: Slot, who: _Identity, usage: MonthlyKwh, reads: Sequence[date]
) -> tuple[Premise, ...]:
    start = reads[0] if slot.new_customer else who.service_start
    home = f"{who.home_line1}, {who.home_city}, PA {who.home_postal}"
    if slot.second_premise is None:
        return (
            Premise(
                premise_id=f"{who.number}-P1",
                service_address=home,
                meter_number=who.meters[0],
                service_start_date=start,
                usage_kwh=usage,
            ),
        )
    main, extra = _split_usage(usage, slot.second_premise.share)
    kind = slot.second_premise.kind
    if kind == "rear_workshop":
        second_address = f"{who.home_line1} Rear Workshop, {who.home_city}, PA {who.home_postal}"
    elif kind == "rental_unit":
        second_address = f"{who.other_line1} Apt 2, {who.home_city}, PA {who.home_postal}"
    else:
        city, postal = who.cabin_place
        second_address = f"{who.other_line1} (cabin), {city}, PA {postal}"
    second_start = min(who.second_start, reads[0])
    return (
        Premise(
            premise_id=f"{who.number}-P1",
            service_address=home,
            meter_number=who.meters[0],
            service_start_date=start,
            usage_kwh=main,
        ),
        Premise(
            premise_id=f"{who.number}-P2",
            service_address=second_address,
            meter_number=who.meters[1],
            service_start_date=max(start, second_start),
            usage_kwh=extra,
        ),
    )


def _settlements(slot: Slot, who: _Identity, reads: Sequence[date]) -> list[Settlement]:
    payer = next((t for t in slot.cards if not TEST_CARDS[t].declines), None)
    out = []
    for k, state in enumerate(slot.pattern):
        if state == "O":
            out.append(OPEN)
            continue
        if state != "P":
            raise ValueError(
                f"{slot.slot}: pattern {slot.pattern!r}; expected P (paid) or O (open)"
            )
        # With no good card on file, a paid bill was paid by check (out of band).
        bill_date = reads[k + 1]
        due = bill_date + timedelta(days=21)
        paid_on = max(bill_date + timedelta(days=2), due - timedelta(days=who.pay_lags[k]))
        out.append(Settlement(paid_on=min(paid_on, TODAY - timedelta(days=1)), paid_with=payer))
    return out


def _build_account(slot: Slot, who: _Identity, usage: MonthlyKwh, tariff: Tariff) -> Account:
    reads = ROUTES[slot.route].reads()
    premises = _premises(slot, who, usage, reads)
    supplier = slot.supplier or tariff.default_service_supplier
    bills = build_bills(
        premises,
        reads,
        tariff=tariff,
        supplier=supplier,
        settlements=_settlements(slot, who, reads),
        estimated_cycles=slot.estimated_cycles,
    )
    account = Account(
        slot=slot.slot,
        account_number=who.number,
        first_name=who.first,
        middle_name=who.middle,
        last_name=who.last,
        email=_email(who.first, who.last, int(slot.slot[1:])),
        phone=who.phone,
        mailing_address=who.mailing,
        premises=premises,
        cards=tuple(TEST_CARDS[t] for t in slot.cards),
        income_fpl_pct=slot.income_fpl_pct,
        household_size=slot.household_size,
        supplier=supplier,
        supplier_type="default" if slot.supplier is None else "retail_choice",
        paperless=slot.paperless,
        medical_certificate_until=slot.medical_certificate_until,
        prior_arrangement_default_on=slot.prior_arrangement_default_on,
        last_extension_on=slot.last_extension_on,
        usage_kwh=usage,
        bills=bills,
        existing_arrangement=slot.arrangement,
        client_activation_date=min(p.service_start_date for p in premises),
        invoice_prefix="AE" + who.number.replace("-", ""),
        note=slot.note,
    )
    return account.model_copy(update={"situations": derive_situations(account)})


def build_manifest(
    seed: int = DEFAULT_MANIFEST_SEED,
    usage: UsageSource | None = None,
    *,
    tariff: Tariff = DEFAULT_TARIFF,
    require_situations: bool = True,
) -> Manifest:
    """The whole world, deterministic in ``seed`` (and the usage source).

    With ``usage=None`` the SYNTHETIC generator seeded with ``seed`` supplies the kWh. With
    ``require_situations`` (the default) a world where some slot misses a label it exists
    for is refused with a message naming each miss.
    """
    source = usage if usage is not None else SyntheticUsage(seed)
    accounts = []
    misses = []
    for slot, who in zip(SLOTS, _draw_identities(seed), strict=True):
        kwh = source.profile(slot.slot, who.number, slot.archetype)
        account = _build_account(slot, who, kwh, tariff)
        missing = [label for label in slot.intent if label not in account.situations]
        if missing:
            misses.append(f"{slot.slot} ({account.account_number}, use {kwh} kWh): {missing}")
        accounts.append(account)
    if isinstance(source, ResStockUsage):
        known = {a.slot for a in accounts} | {a.account_number for a in accounts}
        stray = sorted(set(source.profiles) - known)
        if stray:
            raise ValueError(
                f"ResStock files are mapped to keys that match no account: {stray}; expected "
                "account numbers or slots A01-A24"
            )
    if require_situations and misses:
        raise ValueError(
            "the world misses situations its slots exist for; expected every intent label, "
            "missing: " + "; ".join(misses)
        )
    return Manifest(seed=seed, usage_source=source.label, tariff=tariff, accounts=tuple(accounts))


@cache
def default_manifest() -> Manifest:
    """The canonical exam world (seed ``DEFAULT_MANIFEST_SEED``, synthetic usage), built once."""
    return build_manifest(DEFAULT_MANIFEST_SEED)


def _money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def accounts_table_markdown(manifest: Manifest) -> str:
    """A Markdown table of every account and its situation (docs/world.md embeds it)."""
    rows = [
        "| Slot | Account | Name | Mail ZIP | Cards (last 4) | Income % FPL | Supplier | "
        "Bills Jun-Sep | Last bill | Past due (days) | Arrangement | Situation |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for a in manifest.accounts:
        cards = ", ".join(
            c.last4 + (f" ({c.decline_code})" if c.decline_code else "") for c in a.cards
        )
        bills = " ".join("paid" if b.status == "paid" else "OPEN" for b in a.bills)
        if a.existing_arrangement is None:
            plan = "-"
        else:
            arr = a.existing_arrangement
            overdue = len(arr.overdue_installments())
            plan = (
                f"{_money(arr.principal_cents)}/{arr.installments}, "
                f"{_money(arr.outstanding_cents())} left, {overdue} overdue"
            )
        past_due = (
            f"{_money(a.past_due_cents())} ({a.days_past_due()})" if a.past_due_cents() else "-"
        )
        income = "unknown" if a.income_fpl_pct is None else str(a.income_fpl_pct)
        supplier = "default" if a.supplier_type == "default" else a.supplier
        premises = "" if len(a.premises) == 1 else f" {len(a.premises)} premises."
        rows.append(
            f"| {a.slot} | {a.account_number} | {a.full_name} | {a.mailing_address.postal_code} "
            f"| {cards} | {income} | {supplier} | {bills} | {_money(a.last_bill_amount_cents)} "
            f"| {past_due} | {plan} | {a.note}{premises} |"
        )
    return "\n".join(rows)
