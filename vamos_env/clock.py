"""The frozen instant every call lives in.

The benchmark freezes time at 2026-09-10T00:59:09Z. The services, the tools, the
policy and the prompt all read "today" from here; no module reads the wall clock
for a business date (the wall clock is only for measuring latency).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

FROZEN_ISO = "2026-09-10T00:59:09Z"
NOW: datetime = datetime(2026, 9, 10, 0, 59, 9, tzinfo=UTC)
TODAY: date = NOW.date()
NOW_UNIX: int = int(NOW.timestamp())


# English month names, independent of the machine's locale (calendar.month_name is not).
MONTH_NAMES: tuple[str, ...] = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def now() -> datetime:
    """The frozen instant (timezone-aware, UTC)."""
    return NOW


def today() -> date:
    """The frozen business date."""
    return TODAY


def unix(d: date | datetime) -> int:
    """Seconds since the epoch for a date (midnight UTC) or an aware datetime."""
    if isinstance(d, datetime):
        return int(d.timestamp())
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp())


def from_unix(ts: int) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def days_ago(n: int) -> date:
    return TODAY - timedelta(days=n)
