"""Household electricity use, June to September: where each account's kWh come from.

Each account has one usage profile: four monthly totals (June, July, August, September),
integers between 150 and 1,000 kWh. Two sources produce it:

- ``SyntheticUsage`` (the default): a SYNTHETIC, seeded generator calibrated to the
  benchmark's Pennsylvania figures (mean about 885 kWh per account-month, a summer peak in
  July/August, and a few low-use households whose bills come in under $50). It is not
  NREL data and every label it writes says so.
- ``ResStockUsage``: the same profiles built from real NREL ResStock 2022.1 per-building
  parquet files (AMY 2018, Pennsylvania; CC BY 4.0) that a user has downloaded. The column
  ``out.electricity.total.energy_consumption`` holds kWh per 15-minute interval, and each
  ``timestamp`` marks the END of its interval in Eastern Standard Time (no daylight saving),
  as the ResStock FAQ states; so "2018-07-01 00:00" is June's last interval. pyarrow is
  needed only here and is imported lazily (install the ``vamos-env[resstock]`` extra).

The profile is the account's household use. A two-premise account splits it across its
meters (accounts.py); the bill for month m carries month m's kWh as its meter reading.
"""

from __future__ import annotations

import calendar
import math
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from vamos_env.envs.energy.world.models import (
    MAX_MONTHLY_KWH,
    MIN_MONTHLY_KWH,
    USAGE_MONTHS,
    MonthlyKwh,
)

Archetype = Literal["low", "typical"]
OutOfRange = Literal["error", "clip"]

RESSTOCK_TIMESTAMP_COLUMN = "timestamp"
RESSTOCK_ENERGY_COLUMN = "out.electricity.total.energy_consumption"
RESSTOCK_YEAR = 2018
RESSTOCK_INTERVAL = timedelta(minutes=15)
SYNTHETIC_LABEL = (
    "SYNTHETIC: seeded generator calibrated to Pennsylvania (vamos synthetic-pa-v1); "
    "not NREL ResStock data"
)


class UsageSource(Protocol):
    """Anything that gives an account its four monthly kWh totals (June..September)."""

    @property
    def label(self) -> str: ...

    def profile(self, slot: str, account_number: str, archetype: Archetype) -> MonthlyKwh: ...


class SyntheticUsage:
    """SYNTHETIC monthly use, seeded; calibrated to the benchmark's Pennsylvania figures.

    Typical households peak near the 1,000 kWh ceiling (a peak month level drawn from
    970-1,000 kWh, then June 92-98%, July 98-100%, August 97-100%, September 90-96% of it),
    which is what a mean of about 885 kWh within a 150-1,000 kWh range requires. Low-use
    households (a small apartment, a single occupant) stay within 150-162 kWh every month,
    low enough that a bill stays under $50 even at the higher September price. Each account
    draws from its own child generator of (seed, slot), so adding an account never
    changes another account's use.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    @property
    def label(self) -> str:
        return f"{SYNTHETIC_LABEL}; seed={self.seed}"

    def profile(self, slot: str, account_number: str, archetype: Archetype) -> MonthlyKwh:
        rng = np.random.default_rng([self.seed, _slot_entropy(slot)])
        if archetype == "low":
            low = rng.integers(MIN_MONTHLY_KWH, 163, size=4)
            return (int(low[0]), int(low[1]), int(low[2]), int(low[3]))
        peak = 1000.0 - rng.uniform(0.0, 30.0)
        shares = (
            rng.uniform(0.92, 0.98),
            rng.uniform(0.98, 1.0),
            rng.uniform(0.97, 1.0),
            rng.uniform(0.90, 0.96),
        )
        june, july, august, september = (_clamp(round(peak * s)) for s in shares)
        return (june, july, august, september)


def _slot_entropy(slot: str) -> int:
    # "A07" -> 7; any other key falls back to its bytes, still deterministic.
    digits = slot[1:]
    return int(digits) if digits.isdigit() else int.from_bytes(slot.encode(), "big")


def _clamp(kwh: int) -> int:
    return max(MIN_MONTHLY_KWH, min(MAX_MONTHLY_KWH, kwh))


class ResStockFormatError(ValueError):
    """A ResStock file that does not look like a ResStock per-building timeseries."""


def _parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            "Reading NREL ResStock parquet files needs pyarrow, an optional dependency: "
            "pip install 'vamos-env[resstock]'"
        ) from exc
    return pq


def resstock_monthly_totals(
    path: str | os.PathLike[str], *, year: int = RESSTOCK_YEAR
) -> tuple[float, float, float, float]:
    """Exact monthly kWh sums (June..September of ``year``) of one ResStock building file.

    Checks the columns, the timestamp type, the 15-minute spacing and that every interval of
    the four months is present, and says what it expected and what it found otherwise.
    """
    pq = _parquet()
    import pyarrow as pa  # present, since _parquet() succeeded

    where = os.fspath(path)
    names = list(pq.read_schema(where).names)
    wanted = [RESSTOCK_TIMESTAMP_COLUMN, RESSTOCK_ENERGY_COLUMN]
    missing = [c for c in wanted if c not in names]
    if missing:
        raise ResStockFormatError(
            f"{where}: expected columns {wanted}; missing {missing}; the file has {names}"
        )
    table = pq.read_table(where, columns=wanted)
    ts_type = table.schema.field(RESSTOCK_TIMESTAMP_COLUMN).type
    if not pa.types.is_timestamp(ts_type):
        raise ResStockFormatError(
            f"{where}: expected column {RESSTOCK_TIMESTAMP_COLUMN!r} to be a timestamp, "
            f"found {ts_type}"
        )
    energy_column = table.column(RESSTOCK_ENERGY_COLUMN)
    if energy_column.null_count:
        raise ResStockFormatError(
            f"{where}: expected no missing kWh values, found {energy_column.null_count}"
        )
    stamps = table.column(RESSTOCK_TIMESTAMP_COLUMN).to_numpy().astype("datetime64[s]")
    if ts_type.tz is not None:
        # Arrow keeps zoned timestamps as UTC instants; ResStock's clock is EST (UTC-5).
        stamps = stamps - np.timedelta64(5, "h")
    kwh = np.asarray(energy_column.to_numpy(), dtype=np.float64)
    if not np.all(np.isfinite(kwh)) or np.any(kwh < 0):
        raise ResStockFormatError(f"{where}: expected finite kWh >= 0 in every interval")
    if len(stamps) > 1:
        step = np.median(np.diff(np.sort(stamps))).astype("timedelta64[s]").astype(int)
        if step != RESSTOCK_INTERVAL.total_seconds():
            raise ResStockFormatError(
                f"{where}: expected 15-minute intervals (900 s), found a typical step of {step} s"
            )
    # Interval-ending stamps: the energy belongs to the quarter hour before the stamp.
    starts = stamps - np.timedelta64(int(RESSTOCK_INTERVAL.total_seconds()), "s")
    months = starts.astype("datetime64[M]")
    totals = []
    for month in USAGE_MONTHS:
        mask = months == np.datetime64(f"{year}-{month:02d}", "M")
        expected = calendar.monthrange(year, month)[1] * 96
        found = int(mask.sum())
        if found != expected:
            raise ResStockFormatError(
                f"{where}: expected {expected} 15-minute intervals in "
                f"{calendar.month_name[month]} {year}, found {found}"
            )
        totals.append(float(kwh[mask].sum()))
    return (totals[0], totals[1], totals[2], totals[3])


def profile_from_totals(
    totals: tuple[float, float, float, float], *, source: str, out_of_range: OutOfRange = "error"
) -> MonthlyKwh:
    """Round monthly sums half-up to whole kWh and hold them to 150-1,000 kWh.

    ``out_of_range="error"`` (the default) refuses a month outside the range and names it;
    ``"clip"`` pulls it to the nearest bound instead.
    """
    out = []
    for month, total in zip(USAGE_MONTHS, totals, strict=True):
        kwh = math.floor(total + 0.5)
        if not MIN_MONTHLY_KWH <= kwh <= MAX_MONTHLY_KWH:
            if out_of_range == "clip":
                kwh = _clamp(kwh)
            else:
                raise ValueError(
                    f"{source}: {calendar.month_name[month]} use is {total:,.1f} kWh; expected "
                    f"{MIN_MONTHLY_KWH}-{MAX_MONTHLY_KWH:,} kWh per month. Map another "
                    "building to this account, or pass out_of_range='clip'"
                )
        out.append(kwh)
    return (out[0], out[1], out[2], out[3])


class ResStockUsage:
    """Monthly use from real NREL ResStock per-building parquet files, one file per account.

    ``files`` maps an account number ("4417-90781") or a slot ("A07") to a building's
    parquet file. All files are read at construction, so a bad file fails early.
    """

    def __init__(
        self,
        files: Mapping[str, str | os.PathLike[str]],
        *,
        year: int = RESSTOCK_YEAR,
        out_of_range: OutOfRange = "error",
    ) -> None:
        if not files:
            raise ValueError("expected at least one account -> parquet file mapping, got none")
        self.year = year
        self.files = {key: Path(p) for key, p in files.items()}
        self.profiles: dict[str, MonthlyKwh] = {
            key: profile_from_totals(
                resstock_monthly_totals(path, year=year),
                source=str(path),
                out_of_range=out_of_range,
            )
            for key, path in self.files.items()
        }

    @property
    def label(self) -> str:
        return (
            f"NREL ResStock 2022.1 per-building files (AMY {self.year}, Pennsylvania), "
            f"{len(self.files)} buildings, monthly sums of {RESSTOCK_ENERGY_COLUMN}; CC BY 4.0"
        )

    def profile(self, slot: str, account_number: str, archetype: Archetype) -> MonthlyKwh:
        for key in (account_number, slot):
            if key in self.profiles:
                return self.profiles[key]
        raise KeyError(
            f"no ResStock file is mapped to account {account_number} (slot {slot}); map one "
            f"file per account by account number or slot; mapped keys: {sorted(self.profiles)}"
        )
