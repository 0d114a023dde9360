"""The report's duplex section: turn-taking and latency per stack and per background.

Only calls with a ``duplex`` record (``vamos eval --mode duplex``) count here. Latency
percentiles pool every response of every counted call of the group (a call's own median
and p90 are in its record); overlap, barge-ins, replies to background speech and dead
air are per call on average; wall time is given beside the call's audio duration, as
the ratio of their sums.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from html import escape

from vamos_env.duplex.metrics import percentile
from vamos_env.runner.records import CallRecord

HEAD = (
    "group",
    "calls",
    "passed",
    "latency median s",
    "latency p90 s",
    "missed replies/call",
    "overlap s/call",
    "overlaps/call",
    "barge-ins",
    "barge-in tail median s",
    "background replies/call",
    "dead air/call",
    "call s (mean)",
    "audio in/out s (mean)",
    "wall / audio",
)


def duplex_records(records: Sequence[CallRecord]) -> list[CallRecord]:
    return [r for r in records if r.duplex is not None and r.counted]


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _row(label: str, group: Sequence[CallRecord]) -> list[str]:
    metrics = [r.duplex["metrics"] for r in group if r.duplex is not None]
    n = len(metrics)
    latencies = [x for m in metrics for x in m["latencies_s"]]
    tails = [
        m["barge_in_tail_median_s"] for m in metrics if m["barge_in_tail_median_s"] is not None
    ]
    duration = sum(m["duration_s"] for m in metrics)
    wall = sum(float(r.duplex.get("wall_s") or r.wall_s) for r in group if r.duplex is not None)

    def mean(key: str) -> float:
        return sum(float(m[key]) for m in metrics) / n if n else 0.0

    return [
        label,
        str(n),
        str(sum(r.passed for r in group)),
        _fmt(percentile(latencies, 50)),
        _fmt(percentile(latencies, 90)),
        _fmt(mean("missed_replies"), 1),
        _fmt(mean("overlap_s")),
        _fmt(mean("overlap_count"), 1),
        str(sum(int(m["barge_ins"]) for m in metrics)),
        _fmt(percentile(tails, 50)),
        _fmt(mean("background_replies"), 1),
        _fmt(mean("dead_air_count"), 1),
        _fmt(mean("duration_s"), 1),
        f"{mean('audio_in_s'):.1f} / {mean('audio_out_s'):.1f}",
        _fmt(wall / duration if duration else None),
    ]


def duplex_rows(records: Sequence[CallRecord]) -> list[list[str]]:
    """One row per stack, then one per stack and background."""
    calls = duplex_records(records)
    by_stack: dict[str, list[CallRecord]] = defaultdict(list)
    by_room: dict[tuple[str, str], list[CallRecord]] = defaultdict(list)
    for r in calls:
        by_stack[r.stack].append(r)
        by_room[(r.stack, r.background)].append(r)
    rows = [_row(stack, group) for stack, group in by_stack.items()]
    rows += [_row(f"{stack} / {room}", group) for (stack, room), group in by_room.items()]
    return rows


def duplex_markdown(records: Sequence[CallRecord]) -> str:
    """The section for ``summary.md`` (empty when the run has no duplex calls)."""
    rows = duplex_rows(records)
    if not rows:
        return ""
    lines = ["## Turn-taking and latency (duplex calls)", ""]
    lines.append("| " + " | ".join(HEAD) + " |")
    lines.append("|" + "---|" * len(HEAD))
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _latency_figure(records: Sequence[CallRecord]) -> str | None:
    from vamos_env.report.plots import _pyplot, png_base64

    groups: dict[str, list[float]] = defaultdict(list)
    for r in duplex_records(records):
        groups[f"{r.stack}\n{r.background}"] += list(r.duplex["metrics"]["latencies_s"])  # type: ignore[index]
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return None
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(7.5, 3.4))
    ax.boxplot(list(groups.values()), showfliers=True)
    ax.set_xticks(range(1, len(groups) + 1), list(groups), fontsize=8)
    ax.set_ylabel("response latency (s)")
    ax.set_title("Caller end of speech to the agent's first audio")
    ax.grid(axis="y", alpha=0.3)
    return png_base64(figure)


def duplex_html(records: Sequence[CallRecord]) -> str:
    """The section for ``report.html`` (empty when the run has no duplex calls)."""
    rows = duplex_rows(records)
    if not rows:
        return ""
    top = "".join(f"<th>{escape(h)}</th>" for h in HEAD)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    figure = _latency_figure(records)
    image = (
        f"<figure><img alt='response latency' data-figure='duplex_latency' "
        f"src='data:image/png;base64,{figure}'></figure>"
        if figure
        else ""
    )
    return (
        f"<h2>Turn-taking and latency (duplex calls)</h2><table><tr>{top}</tr>{body}</table>{image}"
    )


def with_duplex(page: str, records: Sequence[CallRecord], *, html: bool) -> str:
    """``page`` with the duplex section added (before ``</body>`` in HTML, at the end in
    Markdown); unchanged for a run without duplex calls."""
    section = duplex_html(records) if html else duplex_markdown(records)
    if not section:
        return page
    if html:
        return page.replace("</body>", section + "</body>", 1)
    return page.rstrip("\n") + "\n\n" + section


__all__ = ["duplex_html", "duplex_markdown", "duplex_rows", "with_duplex"]
