"""The run's HTML page and Markdown summary, from its metrics and records.

``report.html`` is self-contained: styles inline, figures embedded as base64 PNG, no
script and nothing fetched. It links to one page per call (``calls/``), written beside
it. ``summary.md`` carries the same headline numbers as text.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from vamos_env.report.metrics import Rate, RunMetrics, StackMetrics
from vamos_env.report.transcript import PAGE_STYLE, page_name
from vamos_env.runner.records import CallRecord

_MARK = {"pass": "&#10003;", "fail": "&#10007;", "excluded": "&#8856;"}
REPORT_STYLE = (
    PAGE_STYLE
    + """
body{max-width:1280px} img{max-width:100%;border:1px solid #e3e6ea;margin:6px 0}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.calls a{text-decoration:none;margin-right:3px} a.pass{color:#137333} a.fail{color:#b3261e}
a.excluded{color:#8a6d00} .small{font-size:12px;color:#5b6675}
"""
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 0.001:
        return f"{value * 1e6:.0f} us"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _pass_k(stack: StackMetrics) -> str:
    return " / ".join(_pct(v) for v in stack.pass_hat_k.values()) or "-"


def headline_rows(metrics: RunMetrics) -> list[list[str]]:
    """One row per stack: the numbers the summary and the page both show."""
    rows = []
    for s in metrics.stacks:
        rows.append(
            [
                s.stack,
                f"{s.counted}/{s.calls}",
                s.completion.text(),
                _pct(s.gate.value),
                _pct(s.actions.value),
                _pct(s.requirements.value),
                _pct(s.gate_passed_actions_failed.value),
                _pct(s.transfer.value),
                s.satisfied_but_failed.text(),
                "-" if s.repeat_std is None else f"{s.repeat_std:.1%}",
                f"{s.mixed_tasks}/{s.tasks}",
                _pass_k(s),
                _seconds(s.median_latency_s),
                _money(s.mean_cost_usd),
            ]
        )
    return rows


HEADLINE = [
    "stack", "counted/calls", "completion [95% CI]", "gate", "actions", "requirements",
    "gate ok, actions failed", "transfer", "satisfied but failed", "std over repeats",
    "tasks mixed", "pass^k (k=1..)", "median latency", "cost/call",
]  # fmt: skip


def _breakdown(title: str, groups: Sequence[Any], metrics: RunMetrics, attribute: str) -> str:
    pooled: Mapping[Any, Rate] = getattr(metrics, attribute)
    head = "".join(f"<th>{escape(str(g))}</th>" for g in groups)
    rows = []
    for s in metrics.stacks:
        rates: Mapping[Any, Rate] = getattr(s, attribute)
        cells = "".join(
            f"<td class='num'>{escape(rates.get(g, Rate(0, 0)).text())}</td>" for g in groups
        )
        rows.append(f"<tr><td>{escape(s.stack)}</td>{cells}</tr>")
    cells = "".join(
        f"<td class='num'><b>{escape(pooled.get(g, Rate(0, 0)).text())}</b></td>" for g in groups
    )
    rows.append(f"<tr><td><b>pooled</b></td>{cells}</tr>")
    return f"<h2>{escape(title)}</h2><table><tr><th>stack</th>{head}</tr>{''.join(rows)}</table>"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    top = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{top}</tr>{body}</table>"


def _task_table(records: Sequence[CallRecord], stacks: Sequence[str]) -> str:
    cells: dict[tuple[str, str], list[CallRecord]] = defaultdict(list)
    facts: dict[str, CallRecord] = {}
    for record in sorted(records, key=lambda r: r.repeat):
        cells[(record.task_id, record.stack)].append(record)
        facts.setdefault(record.task_id, record)
    head = "".join(f"<th>{escape(s)}</th>" for s in stacks)
    rows = []
    for task_id in sorted(facts):
        first = facts[task_id]
        row = [
            f"<td>{escape(task_id)}</td><td class='num'>{first.request_count}</td>"
            f"<td>{escape(first.persona)}</td>"
        ]
        for stack in stacks:
            links = "".join(
                f"<a class='{r.status}' href='calls/{escape(page_name(r.key))}' "
                f"title='repeat {r.repeat}, {escape(r.background)}: {r.status}'>"
                f"{_MARK[r.status]}</a>"
                for r in cells.get((task_id, stack), [])
            )
            row.append(f"<td class='calls'>{links}</td>")
        rows.append("<tr>" + "".join(row) + "</tr>")
    return (
        "<h2>Per task</h2><p class='small'>Each mark is one repeat (&#10003; pass, &#10007; fail, "
        "&#8856; excluded) and links to that call's transcript.</p>"
        f"<table><tr><th>task</th><th>requests</th><th>persona</th>{head}</tr>"
        + "".join(rows)
        + "</table>"
    )


def _exclusions(metrics: RunMetrics) -> str:
    pooled, raw = metrics.pooled, metrics.pooled_if_excluded_counted
    text = (
        f"<p>{len(metrics.excluded)} call(s) excluded as benchmark faults "
        f"({escape(', '.join(f'{k}: {v}' for k, v in metrics.exclusion_kinds.items()) or 'none')})."
        f" Pooled completion over counted calls: {escape(pooled.text())}; counting the excluded "
        f"calls as graded: {escape(raw.text())}.</p>"
    )
    if not metrics.excluded:
        return "<h2>Exclusions</h2>" + text
    rows = "".join(
        f"<tr><td><a href='calls/{escape(page_name(e.key))}'>{escape(e.key)}</a></td>"
        f"<td>{escape(e.graded)}</td><td>{escape('; '.join(e.reasons))}</td></tr>"
        for e in metrics.excluded
    )
    return (
        "<h2>Exclusions</h2>" + text + "<table><tr><th>call</th><th>graded as</th>"
        f"<th>reasons</th></tr>{rows}</table>"
    )


def render_report(
    metrics: RunMetrics,
    records: Sequence[CallRecord],
    manifest: Mapping[str, Any],
    figures: Mapping[str, tuple[str, str]],
    *,
    title: str,
) -> str:
    """The self-contained HTML page of a run."""
    figs = "".join(
        f"<figure><img alt='{escape(caption)}' data-figure='{escape(name)}' "
        f"src='data:image/png;base64,{data}'><figcaption class='small'>{escape(caption)}"
        "</figcaption></figure>"
        for name, (caption, data) in figures.items()
    )
    about = (
        f"{metrics.calls} calls, {metrics.tasks} tasks, {len(metrics.stacks)} stacks; trial "
        f"{manifest.get('trial_id', '?')}, caller {manifest.get('caller', '?')}, tasks from "
        f"{manifest.get('task_set', '?')}"
    )
    pooled = (
        f"<p>Pooled completion: <b>{escape(metrics.pooled.text())}</b>. Gate "
        f"{_pct(metrics.gate.value)}, actions {_pct(metrics.actions.value)}, requirements "
        f"{_pct(metrics.requirements.value)}. Caller satisfied but the call failed: "
        f"{escape(metrics.satisfied_but_failed.text())} of satisfied calls.</p>"
    )
    unsolved = (
        f"<p>Tasks no stack solved in any repeat: {len(metrics.unsolved_tasks)} of "
        f"{metrics.tasks}.</p>"
    )
    transfer = _breakdown(
        "Transfer rate by persona",
        list(metrics.transfer_by_persona),
        metrics,
        "transfer_by_persona",
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>{REPORT_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p class='small'>{escape(about)}</p>{pooled}"
        f"<h2>Stacks</h2>{_table(HEADLINE, headline_rows(metrics))}"
        f"<div class='figs'>{figs}</div>"
        + _breakdown(
            "Completion by background", list(metrics.by_background), metrics, "by_background"
        )
        + _breakdown(
            "Completion by request count",
            sorted(metrics.by_request_count),
            metrics,
            "by_request_count",
        )
        + _breakdown("Completion by persona", list(metrics.by_persona), metrics, "by_persona")
        + transfer
        + _exclusions(metrics)
        + unsolved
        + _task_table(records, [s.stack for s in metrics.stacks])
        + "</body></html>"
    )


def render_summary(metrics: RunMetrics, manifest: Mapping[str, Any], *, title: str) -> str:
    """The Markdown summary of a run."""

    def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
        return out

    lines = [
        f"# {title}",
        "",
        f"{metrics.calls} calls over {metrics.tasks} tasks and {len(metrics.stacks)} stacks "
        f"(trial `{manifest.get('trial_id', '?')}`, caller `{manifest.get('caller', '?')}`). "
        "Rates are over counted calls with Wilson 95% intervals.",
        "",
        f"**Pooled completion: {metrics.pooled.text()}**; with the excluded calls counted as "
        f"graded: {metrics.pooled_if_excluded_counted.text()}.",
        "",
        *table(HEADLINE, headline_rows(metrics)),
        "",
    ]
    for title_, attribute in (
        ("Completion by background", "by_background"),
        ("Completion by request count", "by_request_count"),
        ("Completion by persona", "by_persona"),
        ("Transfer rate by persona", "transfer_by_persona"),
    ):
        pooled: Mapping[Any, Rate] = getattr(metrics, attribute)
        groups = list(pooled)
        rows = [
            [s.stack] + [getattr(s, attribute).get(g, Rate(0, 0)).text() for g in groups]
            for s in metrics.stacks
        ]
        rows.append(["**pooled**"] + [pooled[g].text() for g in groups])
        lines += [f"## {title_}", "", *table(["stack", *map(str, groups)], rows), ""]
    lines += ["## Exclusions", ""]
    if metrics.excluded:
        kinds = ", ".join(f"{k}: {v}" for k, v in metrics.exclusion_kinds.items())
        lines.append(f"{len(metrics.excluded)} call(s) excluded ({kinds}):")
        lines.append("")
        lines += [
            f"- `{e.key}` (graded {e.graded}): {'; '.join(e.reasons)}" for e in metrics.excluded
        ]
    else:
        lines.append("No call was excluded.")
    lines += [
        "",
        f"Tasks no stack solved in any repeat: {len(metrics.unsolved_tasks)} of {metrics.tasks}.",
        "",
    ]
    return "\n".join(lines)
