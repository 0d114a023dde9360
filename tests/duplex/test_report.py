"""The report's duplex section from constructed records."""

from __future__ import annotations

from typing import Any

from vamos_env.duplex.metrics import call_metrics
from vamos_env.report.duplex import HEAD, duplex_markdown, duplex_rows, with_duplex
from vamos_env.runner.records import CallRecord


def _record(key: str, background: str, status: str, latency: float, wall_s: float) -> CallRecord:
    metrics = call_metrics(
        caller=[(1.0, 3.0), (8.0, 9.0)],
        agent=[(3.0 + latency, 6.0), (9.0 + latency, 12.0)],
        background=[],
        duration_s=20.0,
    )
    duplex: dict[str, Any] = {"metrics": metrics.as_dict(), "wall_s": wall_s, "line": "g711"}
    return CallRecord(
        key=key,
        task_id=key,
        stack="cascade",
        repeat=0,
        trial_id="default",
        seed=0,
        persona="calm",
        background=background,
        request_count=1,
        status=status,  # type: ignore[arg-type]
        duplex=duplex,
    )


def test_rows_pool_latencies_and_sum_wall_time_against_audio() -> None:
    records = [
        _record("a", "clean", "pass", 1.0, 5.0),
        _record("b", "clean", "fail", 2.0, 5.0),
        _record("c", "cafe", "pass", 0.5, 10.0),
    ]
    rows = {row[0]: dict(zip(HEAD, row, strict=True)) for row in duplex_rows(records)}
    everything, clean = rows["cascade"], rows["cascade / clean"]
    assert (everything["calls"], everything["passed"]) == ("3", "2")
    assert clean["latency median s"] == "1.50"  # 1, 1, 2, 2
    assert everything["latency p90 s"] == "2.00"
    assert everything["wall / audio"] == "0.33"  # 20 s of wall over 60 s of calls
    assert rows["cascade / cafe"]["dead air/call"] == "1.0"  # 12 s to 20 s
    assert "Turn-taking and latency" in duplex_markdown(records)


def test_a_run_without_duplex_calls_keeps_its_pages() -> None:
    record = _record("a", "clean", "pass", 1.0, 5.0).model_copy(update={"duplex": None})
    assert with_duplex("<body></body>", [record], html=True) == "<body></body>"
    assert with_duplex("# run\n", [record], html=False) == "# run\n"
