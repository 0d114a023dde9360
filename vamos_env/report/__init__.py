"""What a run found: metrics with Wilson intervals, a Markdown summary, an HTML report.

- ``compute_metrics(records)`` -> ``RunMetrics`` (per stack and pooled);
- ``wilson_interval(successes, n)``, ``Rate``, ``pass_hat_k``;
- ``write_report(run_folder)`` writes ``summary.md``, ``report.html`` (plots embedded) and
  one readable page per call under ``calls/``.
"""

from __future__ import annotations

from vamos_env.report.metrics import (
    Rate,
    RunMetrics,
    StackMetrics,
    compute_metrics,
    pass_hat_k,
    wilson_interval,
)
from vamos_env.report.writer import ReportFiles, write_report

__all__ = [
    "Rate",
    "ReportFiles",
    "RunMetrics",
    "StackMetrics",
    "compute_metrics",
    "pass_hat_k",
    "wilson_interval",
    "write_report",
]
