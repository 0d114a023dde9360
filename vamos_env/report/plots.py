"""The report's figures, drawn with matplotlib's Agg backend and embedded as base64 PNG.

Each figure shows rates with their Wilson 95% intervals as error bars, so two stacks
whose intervals overlap are not read as different. Nothing here needs a display.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

from vamos_env.report.metrics import Rate, RunMetrics

_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
)  # fmt: skip


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display; must precede the pyplot import
    import matplotlib.pyplot as plt

    return plt


def png_base64(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    _pyplot().close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _errors(rates: Sequence[Rate]) -> tuple[list[float], list[list[float]]]:
    values = [r.value or 0.0 for r in rates]
    lows = [max(0.0, v - r.interval[0]) if r.n else 0.0 for v, r in zip(values, rates, strict=True)]
    highs = [
        max(0.0, r.interval[1] - v) if r.n else 0.0 for v, r in zip(values, rates, strict=True)
    ]
    return values, [lows, highs]


def _percent_axis(ax: Any, label: str) -> None:
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(label)
    ax.yaxis.set_major_formatter(_pyplot().FuncFormatter(lambda v, _: f"{v:.0%}"))
    ax.grid(axis="y", alpha=0.3)


def rate_bars(title: str, labels: Sequence[str], rates: Sequence[Rate], ylabel: str) -> str:
    """One bar per label with its interval (completion per stack, satisfied-but-failed)."""
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(labels) + 2), 3.6))
    values, errors = _errors(rates)
    colours = [_COLOURS[i % len(_COLOURS)] for i in range(len(labels))]
    ax.bar(labels, values, yerr=errors, capsize=4, color=colours)
    for index, rate in enumerate(rates):
        top = rate.interval[1] if rate.n else 0.0
        ax.text(index, min(1.0, top) + 0.01, f"n={rate.n}", ha="center", va="bottom", fontsize=8)
    _percent_axis(ax, ylabel)
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=20)
    return png_base64(figure)


def grouped_bars(
    title: str, groups: Sequence[str], series: Mapping[str, Mapping[str, Rate]], ylabel: str
) -> str:
    """Bars per group (background, request count, persona), one colour per stack."""
    plt = _pyplot()
    count = max(1, len(series))
    width = 0.8 / count
    figure, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(groups) + 3), 3.8))
    for index, (name, rates) in enumerate(series.items()):
        row = [rates.get(g, Rate(0, 0)) for g in groups]
        values, errors = _errors(row)
        positions = [g + (index - (count - 1) / 2) * width for g in range(len(groups))]
        ax.bar(
            positions,
            values,
            width=width,
            yerr=errors,
            capsize=2,
            label=name,
            color=_COLOURS[index % len(_COLOURS)],
        )
    ax.set_xticks(range(len(groups)), list(groups))
    _percent_axis(ax, ylabel)
    ax.set_title(title)
    ax.legend(
        fontsize=8,
        ncol=min(count, 6),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1),
        frameon=False,
    )
    return png_base64(figure)


def run_figures(metrics: RunMetrics) -> dict[str, tuple[str, str]]:
    """Every figure of the report: name -> (caption, base64 PNG)."""
    names = [s.stack for s in metrics.stacks]
    backgrounds = list(metrics.by_background)
    counts = sorted(metrics.by_request_count)
    personas = list(metrics.by_persona)
    return {
        "completion": (
            "Completion per stack (counted calls), Wilson 95% intervals",
            rate_bars(
                "Completion per stack",
                names,
                [s.completion for s in metrics.stacks],
                "calls passed",
            ),
        ),
        "background": (
            "Completion by background",
            grouped_bars(
                "Completion by background",
                backgrounds,
                {s.stack: s.by_background for s in metrics.stacks},
                "calls passed",
            ),
        ),
        "requests": (
            "Completion by number of requests in the call",
            grouped_bars(
                "Completion by request count",
                [str(c) for c in counts],
                {
                    s.stack: {str(k): v for k, v in s.by_request_count.items()}
                    for s in metrics.stacks
                },
                "calls passed",
            ),
        ),
        "persona": (
            "Completion by caller persona",
            grouped_bars(
                "Completion by persona",
                personas,
                {s.stack: s.by_persona for s in metrics.stacks},
                "calls passed",
            ),
        ),
        "satisfied": (
            "Calls whose caller was satisfied but which failed (share of satisfied calls)",
            rate_bars(
                "Caller satisfied, call failed",
                names,
                [s.satisfied_but_failed for s in metrics.stacks],
                "of satisfied calls",
            ),
        ),
    }
