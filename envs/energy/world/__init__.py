"""The energy world: 24 accounts, their usage, the tariff and the bills, as one manifest.

``default_manifest()`` is the canonical exam world; ``build_manifest(seed, usage)`` builds
another one (synthetic usage by default, or real NREL ResStock files via ``ResStockUsage``).
The seeding turns the manifest into Stripe and Fineract API calls.
"""

from __future__ import annotations

from vamos_env.envs.energy.world.accounts import (
    DEFAULT_MANIFEST_SEED,
    SLOTS,
    TEST_CARDS,
    accounts_table_markdown,
    build_manifest,
    default_manifest,
)
from vamos_env.envs.energy.world.bills import DUE_DAYS, Settlement, build_bills, read_dates
from vamos_env.envs.energy.world.models import (
    Account,
    Address,
    Bill,
    BillLine,
    Card,
    ExistingArrangement,
    Installment,
    Manifest,
    Premise,
    Repayment,
)
from vamos_env.envs.energy.world.situations import SITUATIONS, derive_situations
from vamos_env.envs.energy.world.tariff import (
    DEFAULT_TARIFF,
    Tariff,
    energy_cents,
    gross_receipts_tax_cents,
)
from vamos_env.envs.energy.world.usage import (
    ResStockFormatError,
    ResStockUsage,
    SyntheticUsage,
    UsageSource,
)

__all__ = [
    "DEFAULT_MANIFEST_SEED",
    "DEFAULT_TARIFF",
    "DUE_DAYS",
    "SITUATIONS",
    "SLOTS",
    "TEST_CARDS",
    "Account",
    "Address",
    "Bill",
    "BillLine",
    "Card",
    "ExistingArrangement",
    "Installment",
    "Manifest",
    "Premise",
    "Repayment",
    "ResStockFormatError",
    "ResStockUsage",
    "Settlement",
    "SyntheticUsage",
    "Tariff",
    "UsageSource",
    "accounts_table_markdown",
    "build_bills",
    "build_manifest",
    "default_manifest",
    "derive_situations",
    "energy_cents",
    "gross_receipts_tax_cents",
    "read_dates",
]
