"""The frozen clock is the only source of business dates."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from vamos_env import clock

ROOT = Path(__file__).resolve().parents[1]
# Reading the wall clock for a date; perf_counter/monotonic (latency) are fine.
WALL_CLOCK = re.compile(
    r"datetime\.(now|utcnow|today)\(|date\.today\(|time\.time\(\)|time\.gmtime\(|time\.localtime\("
)


def test_frozen_instant() -> None:
    assert datetime(2026, 9, 10, 0, 59, 9, tzinfo=UTC) == clock.NOW
    assert clock.FROZEN_ISO == "2026-09-10T00:59:09Z"
    assert clock.TODAY.isoformat() == "2026-09-10"
    assert clock.from_unix(clock.NOW_UNIX) == clock.NOW
    assert clock.unix(clock.TODAY) == clock.NOW_UNIX - (59 * 60 + 9)


def test_no_module_reads_the_wall_clock_for_dates() -> None:
    offenders = []
    for folder in ("vamos_env", "envs", "agents", "wrappers"):
        for path in (ROOT / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if WALL_CLOCK.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
