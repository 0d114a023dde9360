"""The numbers of an evaluation run, from its call records (DOMAIN.md section 9).

Counted calls are those not excluded (benchmark faults are excluded whether they passed
or failed; agent faults are counted as misses). Every rate is a ``Rate`` with its Wilson
95% score interval, which stays inside [0, 1] and is honest at 0 and n successes, where
the normal approximation collapses to a zero-width interval.

Per stack: completion; completion by request count, background and persona; the three
assertion pass rates; "gate passed, actions failed" (share of counted calls); the
transfer rate overall and by persona; caller-satisfied-but-failed (share of the calls
whose caller said its goal was met that failed); completion per repeat and its sample
standard deviation; the number of tasks with both passing and failing repeats; pass^k
(the chance that k repeats of a task all pass, estimated per task as C(c, k) / C(n, k)
from c passes in n counted repeats, averaged over tasks with n >= k); median response
latency; mean cost per call. Pooled over stacks: the same breakdowns, the exclusions with
their reasons, and pooled completion with the excluded calls counted as graded (a fault
as a miss), which shows what the exclusions changed.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from vamos_env.grading.llm import Price, price_of
from vamos_env.runner.records import CallRecord

Z95 = 1.959963984540054  # the two-sided 95% normal quantile
BACKGROUND_ORDER = ("clean", "street", "cafe", "television")
K = TypeVar("K", bound=Hashable)


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``n``; (0, 1) when ``n`` is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"expected 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # Exact at the ends: the arithmetic above leaves a 1e-17 residue at 0 and n.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Rate:
    """``successes`` of ``n``, with the Wilson 95% interval."""

    successes: int
    n: int

    @property
    def value(self) -> float | None:
        return self.successes / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.successes, self.n)

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "successes": self.successes,
            "n": self.n,
            "rate": self.value,
            "low": low,
            "high": high,
        }

    def text(self) -> str:
        """``38.7% [31.2, 46.8] (29/75)``; ``-`` when nothing was counted."""
        if not self.n:
            return "- (0/0)"
        low, high = self.interval
        value = self.value or 0.0
        return f"{value:.1%} [{low:.1%}, {high:.1%}] ({self.successes}/{self.n})"


def rate_of(items: Iterable[Any], success: Callable[[Any], bool]) -> Rate:
    values = [bool(success(item)) for item in items]
    return Rate(sum(values), len(values))


def _order(key: Any) -> tuple[int, str]:
    # Backgrounds in the benchmark's order (quiet to hard), everything else sorted.
    if key in BACKGROUND_ORDER:
        return BACKGROUND_ORDER.index(key), ""
    return len(BACKGROUND_ORDER), f"{key:>8}" if isinstance(key, int) else str(key)


def rate_by(
    items: Sequence[Any], group: Callable[[Any], K], success: Callable[[Any], bool]
) -> dict[K, Rate]:
    groups: dict[K, list[Any]] = defaultdict(list)
    for item in items:
        groups[group(item)].append(item)
    return {key: rate_of(groups[key], success) for key in sorted(groups, key=_order)}


def pass_hat_k(passes_per_task: Mapping[str, tuple[int, int]], k: int) -> float | None:
    """pass^k: mean over tasks (with n >= k) of C(c, k) / C(n, k); None if no task has k."""
    shares = [math.comb(c, k) / math.comb(n, k) for c, n in passes_per_task.values() if n >= k]
    return sum(shares) / len(shares) if shares else None


def _assertion_passed(record: CallRecord, name: str) -> bool:
    if record.verdict is None:
        return False
    return getattr(record.verdict, name).passed is True


def _gate_passed_actions_failed(record: CallRecord) -> bool:
    return _assertion_passed(record, "gate") and not _assertion_passed(record, "actions")


def _cost(record: CallRecord, prices: Mapping[str, Price] | None) -> float | None:
    if prices is None:
        return record.cost_usd
    usage = record.usage
    if usage.prompt_tokens == 0 and usage.completion_tokens == 0:
        return 0.0
    price = price_of(usage.model, dict(prices)) if usage.model else None
    return None if price is None else price.usage_cost(usage)


@dataclass
class StackMetrics:
    stack: str
    calls: int
    counted: int
    excluded: int
    agent_faults: int
    completion: Rate
    by_request_count: dict[int, Rate]
    by_background: dict[str, Rate]
    by_persona: dict[str, Rate]
    gate: Rate
    actions: Rate
    requirements: Rate
    gate_passed_actions_failed: Rate
    transfer: Rate
    transfer_by_persona: dict[str, Rate]
    satisfied_but_failed: Rate
    by_repeat: dict[int, Rate]
    repeat_std: float | None  # sample standard deviation of the per-repeat completion
    mixed_tasks: int  # tasks with both passing and failing counted repeats
    tasks: int
    pass_hat_k: dict[int, float | None]
    median_latency_s: float | None
    mean_cost_usd: float | None
    unpriced_calls: int


@dataclass(frozen=True)
class ExcludedCall:
    key: str
    stack: str
    reasons: list[str]
    graded: str  # what the verdict said: pass, fail, fault, or none (no verdict)


@dataclass
class RunMetrics:
    stacks: list[StackMetrics]
    pooled: Rate
    by_request_count: dict[int, Rate]
    by_background: dict[str, Rate]
    by_persona: dict[str, Rate]
    gate: Rate
    actions: Rate
    requirements: Rate
    transfer_by_persona: dict[str, Rate]
    satisfied_but_failed: Rate
    excluded: list[ExcludedCall]
    exclusion_kinds: dict[str, int]
    pooled_if_excluded_counted: Rate
    unsolved_tasks: list[str]  # tasks no stack passed in any counted repeat
    tasks: int
    calls: int
    extra: dict[str, Any] = field(default_factory=dict)

    def stack(self, name: str) -> StackMetrics:
        for item in self.stacks:
            if item.stack == name:
                return item
        raise KeyError(f"no stack {name!r} in this run; have {[s.stack for s in self.stacks]}")


def stack_metrics(
    stack: str, records: Sequence[CallRecord], prices: Mapping[str, Price] | None = None
) -> StackMetrics:
    counted = [r for r in records if r.counted]
    per_task: dict[str, list[bool]] = defaultdict(list)
    for record in counted:
        per_task[record.task_id].append(record.passed)
    passes = {task: (sum(v), len(v)) for task, v in per_task.items()}
    by_repeat = rate_by(counted, lambda r: r.repeat, lambda r: r.passed)
    repeat_values = [rate.value for rate in by_repeat.values() if rate.value is not None]
    latencies = [x for r in records for x in r.response_latencies_s]
    costs = [_cost(r, prices) for r in records]
    priced = [c for c in costs if c is not None]
    max_k = max((n for _, n in passes.values()), default=0)
    satisfied = [r for r in counted if r.caller_satisfied]
    return StackMetrics(
        stack=stack,
        calls=len(records),
        counted=len(counted),
        excluded=len(records) - len(counted),
        agent_faults=sum(r.agent_fault is not None for r in counted),
        completion=rate_of(counted, lambda r: r.passed),
        by_request_count=rate_by(counted, lambda r: r.request_count, lambda r: r.passed),
        by_background=rate_by(counted, lambda r: r.background, lambda r: r.passed),
        by_persona=rate_by(counted, lambda r: r.persona, lambda r: r.passed),
        gate=rate_of(counted, lambda r: _assertion_passed(r, "gate")),
        actions=rate_of(counted, lambda r: _assertion_passed(r, "actions")),
        requirements=rate_of(counted, lambda r: _assertion_passed(r, "requirements")),
        gate_passed_actions_failed=rate_of(counted, _gate_passed_actions_failed),
        transfer=rate_of(counted, lambda r: r.transferred),
        transfer_by_persona=rate_by(counted, lambda r: r.persona, lambda r: r.transferred),
        satisfied_but_failed=rate_of(satisfied, lambda r: not r.passed),
        by_repeat=by_repeat,
        repeat_std=statistics.stdev(repeat_values) if len(repeat_values) >= 2 else None,
        mixed_tasks=sum(1 for c, n in passes.values() if 0 < c < n),
        tasks=len(passes),
        pass_hat_k={k: pass_hat_k(passes, k) for k in range(1, max_k + 1)},
        median_latency_s=statistics.median(latencies) if latencies else None,
        mean_cost_usd=sum(priced) / len(priced) if priced else None,
        unpriced_calls=len(costs) - len(priced),
    )


def _graded(record: CallRecord) -> str:
    return record.verdict.outcome if record.verdict is not None else "none"


def compute_metrics(
    records: Iterable[CallRecord], *, prices: Mapping[str, Price] | None = None
) -> RunMetrics:
    """Every metric of a run. ``prices`` re-prices the tokens (default: the stored costs)."""
    rows = list(records)
    by_stack: dict[str, list[CallRecord]] = defaultdict(list)
    for record in rows:
        by_stack[record.stack].append(record)
    counted = [r for r in rows if r.counted]
    excluded = [r for r in rows if not r.counted]
    kinds: Counter[str] = Counter(e.kind for r in excluded for e in r.exclusions)
    solved = {r.task_id for r in counted if r.passed}
    tasks = {r.task_id for r in rows}
    satisfied = [r for r in counted if r.caller_satisfied]
    return RunMetrics(
        # Stacks in the order they first appear in the store (the run's --stacks order).
        stacks=[stack_metrics(name, recs, prices) for name, recs in by_stack.items()],
        pooled=rate_of(counted, lambda r: r.passed),
        by_request_count=rate_by(counted, lambda r: r.request_count, lambda r: r.passed),
        by_background=rate_by(counted, lambda r: r.background, lambda r: r.passed),
        by_persona=rate_by(counted, lambda r: r.persona, lambda r: r.passed),
        gate=rate_of(counted, lambda r: _assertion_passed(r, "gate")),
        actions=rate_of(counted, lambda r: _assertion_passed(r, "actions")),
        requirements=rate_of(counted, lambda r: _assertion_passed(r, "requirements")),
        transfer_by_persona=rate_by(counted, lambda r: r.persona, lambda r: r.transferred),
        satisfied_but_failed=rate_of(satisfied, lambda r: not r.passed),
        excluded=[
            ExcludedCall(
                key=r.key,
                stack=r.stack,
                reasons=[f"{e.kind}: {e.detail}" for e in r.exclusions],
                graded=_graded(r),
            )
            for r in excluded
        ],
        exclusion_kinds=dict(sorted(kinds.items())),
        pooled_if_excluded_counted=rate_of(
            rows, lambda r: r.passed if r.counted else _graded(r) == "pass"
        ),
        unsolved_tasks=sorted(tasks - solved),
        tasks=len(tasks),
        calls=len(rows),
    )
