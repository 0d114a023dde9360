"""``write_report``: a run folder's ``summary.md``, ``report.html`` and one page per call."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from vamos_env.report.duplex import with_duplex
from vamos_env.report.metrics import RunMetrics, compute_metrics
from vamos_env.report.page import render_report, render_summary
from vamos_env.report.plots import run_figures
from vamos_env.report.transcript import page_name, render_call
from vamos_env.runner.evaluate import RESULTS_FILE, read_manifest
from vamos_env.runner.preflight import read_prices
from vamos_env.runner.store import read_store


@dataclass(frozen=True)
class ReportFiles:
    summary: Path
    html: Path
    calls: Path  # the folder of per-call pages
    metrics: RunMetrics


def _write(path: Path, text: str) -> None:
    # Whole or not at all: a report opened while it is rewritten is never half a page.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_report(
    run: str | Path, *, prices: str | Path | None = None, title: str | None = None
) -> ReportFiles:
    """Read ``run/results.jsonl`` and write the report files into ``run``.

    ``run`` is the run folder; its ``results.jsonl`` named directly is taken to mean the
    folder that holds it."""
    run = Path(run)
    if run.is_file() and run.name == RESULTS_FILE:
        run = run.parent
    elif run.is_file():
        raise ValueError(
            f"{run}: expected a run folder (runs/NAME, holding {RESULTS_FILE}), got a file"
        )
    elif not run.exists():
        raise ValueError(f"{run}: expected a run folder (runs/NAME), got no such folder")
    elif not (run / RESULTS_FILE).exists():
        raise ValueError(
            f"{run}: expected a run folder holding {RESULTS_FILE}, got a folder without one"
        )
    records = read_store(run)
    if not records:
        raise ValueError(f"{run}: the results store holds no calls yet")
    manifest = read_manifest(run)
    metrics = compute_metrics(records, prices=read_prices(prices) if prices else None)
    heading = title or f"vamos-env evaluation: {run.name}"
    calls = run / "calls"
    calls.mkdir(exist_ok=True)
    for record in records:
        _write(calls / page_name(record.key), render_call(record))
    html = run / "report.html"
    page = render_report(metrics, records, manifest, run_figures(metrics), title=heading)
    _write(html, with_duplex(page, records, html=True))
    summary = run / "summary.md"
    _write(
        summary, with_duplex(render_summary(metrics, manifest, title=heading), records, html=False)
    )
    return ReportFiles(summary=summary, html=html, calls=calls, metrics=metrics)
