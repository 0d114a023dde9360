"""Usage sources: the seeded synthetic generator and the ResStock parquet loader."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from vamos_env.envs.energy.world.accounts import SLOTS, build_manifest
from vamos_env.envs.energy.world.usage import (
    RESSTOCK_ENERGY_COLUMN,
    ResStockFormatError,
    ResStockUsage,
    SyntheticUsage,
    profile_from_totals,
    resstock_monthly_totals,
)

MONTH_DAYS = {6: 30, 7: 31, 8: 31, 9: 30}


def _write_building(
    path: Path,
    monthly_kwh: dict[int, float],
    *,
    energy_column: str = RESSTOCK_ENERGY_COLUMN,
    tz: str | None = None,
    drop: int = 0,
    step_minutes: int = 15,
) -> Path:
    """A small ResStock-like file: interval-ENDING stamps in EST, June..September 2018.

    It also holds the interval ending 2018-06-01 00:00 (May's last quarter hour) with a huge
    value, which a loader that ignored the interval-ending convention would count in June.
    """
    stamps = [datetime(2018, 6, 1)]
    values = [500.0]
    for month, kwh in monthly_kwh.items():
        count = MONTH_DAYS[month] * 24 * 60 // step_minutes
        start = datetime(2018, month, 1)
        for i in range(1, count + 1):
            stamps.append(start + timedelta(minutes=step_minutes * i))
            values.append(kwh / count)
    if drop:
        del stamps[100 : 100 + drop], values[100 : 100 + drop]
    ts = pa.array(stamps, type=pa.timestamp("ns"))
    if tz is not None:
        # The same EST wall clock as UTC instants (EST = UTC-5), stored zoned.
        ts = pa.array([s + timedelta(hours=5) for s in stamps], type=pa.timestamp("ns", tz=tz))
    table = pa.table(
        {"bldg_id": pa.array([7] * len(stamps)), "timestamp": ts, energy_column: values}
    )
    pq.write_table(table, path)
    return path


TYPICAL = {6: 880.0, 7: 961.2, 8: 948.0, 9: 842.4}
LOW = {6: 155.0, 7: 158.0, 8: 160.0, 9: 152.0}


def test_synthetic_is_seeded_and_in_range() -> None:
    a, b, c = SyntheticUsage(0), SyntheticUsage(0), SyntheticUsage(1)
    for slot in SLOTS:
        p = a.profile(slot.slot, "1234-56789", slot.archetype)
        assert p == b.profile(slot.slot, "9999-99999", slot.archetype)
        assert all(150 <= k <= 1000 for k in p)
        if slot.archetype == "low":
            assert all(k <= 162 for k in p)
    assert [a.profile(s.slot, "x", s.archetype) for s in SLOTS] != [
        c.profile(s.slot, "x", s.archetype) for s in SLOTS
    ]
    assert "SYNTHETIC" in a.label and "not NREL ResStock data" in a.label


def test_synthetic_calibration_mean_and_summer_peak() -> None:
    for seed in range(5):
        usage = np.array([SyntheticUsage(seed).profile(s.slot, "", s.archetype) for s in SLOTS])
        assert 865 <= usage.mean() <= 905, usage.mean()
        june, july, august, september = usage.mean(axis=0)
        assert min(july, august) > max(june, september)
        assert (usage < 170).any()  # a few low-use households


def test_resstock_totals_use_interval_ending_stamps(tmp_path: Path) -> None:
    path = _write_building(tmp_path / "bldg.parquet", TYPICAL)
    totals = resstock_monthly_totals(path)
    assert totals == pytest.approx((880.0, 961.2, 948.0, 842.4))
    assert profile_from_totals(totals, source="x") == (880, 961, 948, 842)


def test_resstock_zoned_timestamps_are_read_as_est(tmp_path: Path) -> None:
    path = _write_building(tmp_path / "bldg.parquet", TYPICAL, tz="UTC")
    assert resstock_monthly_totals(path) == pytest.approx((880.0, 961.2, 948.0, 842.4))


def test_resstock_wrong_column_says_expected_and_actual(tmp_path: Path) -> None:
    path = _write_building(tmp_path / "bad.parquet", TYPICAL, energy_column="out.kwh")
    with pytest.raises(ResStockFormatError) as info:
        resstock_monthly_totals(path)
    message = str(info.value)
    assert f"expected columns ['timestamp', '{RESSTOCK_ENERGY_COLUMN}']" in message
    assert f"missing ['{RESSTOCK_ENERGY_COLUMN}']" in message
    assert "the file has ['bldg_id', 'timestamp', 'out.kwh']" in message


def test_resstock_refuses_gaps_wrong_steps_and_types(tmp_path: Path) -> None:
    gap = _write_building(tmp_path / "gap.parquet", TYPICAL, drop=1)
    with pytest.raises(
        ResStockFormatError, match="expected 2880 15-minute intervals in June 2018, found 2879"
    ):
        resstock_monthly_totals(gap)
    hourly = _write_building(tmp_path / "hourly.parquet", TYPICAL, step_minutes=60)
    with pytest.raises(
        ResStockFormatError,
        match=r"expected 15-minute intervals \(900 s\), found a typical step of 3600 s",
    ):
        resstock_monthly_totals(hourly)
    text = tmp_path / "text.parquet"
    pq.write_table(
        pa.table({"timestamp": ["2018-06-01 00:15:00"], RESSTOCK_ENERGY_COLUMN: [0.1]}), text
    )
    with pytest.raises(ResStockFormatError, match="to be a timestamp, found string"):
        resstock_monthly_totals(text)
    nulls = tmp_path / "nulls.parquet"
    pq.write_table(
        pa.table(
            {
                "timestamp": pa.array([datetime(2018, 6, 1, 0, 15)], type=pa.timestamp("ns")),
                RESSTOCK_ENERGY_COLUMN: pa.array([None], type=pa.float64()),
            }
        ),
        nulls,
    )
    with pytest.raises(ResStockFormatError, match="no missing kWh values, found 1"):
        resstock_monthly_totals(nulls)


def test_resstock_out_of_range_errors_or_clips(tmp_path: Path) -> None:
    path = _write_building(tmp_path / "big.parquet", {**TYPICAL, 7: 1234.0})
    with pytest.raises(ValueError, match=r"July use is 1,234\.0 kWh; expected 150-1,000 kWh"):
        ResStockUsage({"A01": path})
    clipped = ResStockUsage({"A01": path}, out_of_range="clip")
    assert clipped.profile("A01", "1234-56789", "typical") == (880, 1000, 948, 842)


def test_resstock_without_pyarrow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write_building(tmp_path / "bldg.parquet", TYPICAL)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"vamos-env\[resstock\]"):
        resstock_monthly_totals(path)


def test_manifest_from_resstock_files(tmp_path: Path) -> None:
    typical = _write_building(tmp_path / "typical.parquet", TYPICAL)
    low = _write_building(tmp_path / "low.parquet", LOW)
    files = {s.slot: (low if s.archetype == "low" else typical) for s in SLOTS}
    # Keys may be account numbers too.
    a01 = build_manifest(0).by_slot("A01").account_number
    files[a01] = files.pop("A01")
    usage = ResStockUsage(files)
    manifest = build_manifest(0, usage)
    assert manifest.usage_source.startswith("NREL ResStock 2022.1")
    assert manifest.by_slot("A03").usage_kwh == (155, 158, 160, 152)
    assert manifest.by_slot("A01").usage_kwh == (880, 961, 948, 842)
    # Identities come from the seed, not the usage source.
    assert [a.account_number for a in manifest.accounts] == [
        a.account_number for a in build_manifest(0).accounts
    ]


def test_resstock_mapping_that_breaks_a_situation_is_refused(tmp_path: Path) -> None:
    typical = _write_building(tmp_path / "typical.parquet", TYPICAL)
    usage = ResStockUsage({s.slot: typical for s in SLOTS})
    with pytest.raises(ValueError, match=r"A03 \(.*'past_due_under_50'"):
        build_manifest(0, usage)
    loose = build_manifest(0, usage, require_situations=False)
    assert "past_due_50_to_499" in loose.by_slot("A03").situations


def test_resstock_unmapped_account_is_named(tmp_path: Path) -> None:
    usage = ResStockUsage({"A01": _write_building(tmp_path / "b.parquet", TYPICAL)})
    with pytest.raises(
        KeyError, match=r"no ResStock file is mapped to account \d{4}-\d{5} \(slot A02\)"
    ):
        build_manifest(0, usage)
    with pytest.raises(ValueError, match="at least one"):
        ResStockUsage({})


def test_resstock_key_matching_no_account_is_refused(tmp_path: Path) -> None:
    typical = _write_building(tmp_path / "typical.parquet", TYPICAL)
    low = _write_building(tmp_path / "low.parquet", LOW)
    files = {s.slot: (low if s.archetype == "low" else typical) for s in SLOTS}
    files["0000-00000"] = typical
    with pytest.raises(ValueError, match=r"match no account: \['0000-00000'\]"):
        build_manifest(0, ResStockUsage(files))
