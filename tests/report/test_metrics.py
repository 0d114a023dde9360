"""Metrics against hand-computed values: Wilson intervals, breakdowns, pass^k, exclusions."""

from __future__ import annotations

import math
from typing import Any

import pytest

from vamos_env.grading.llm import Price
from vamos_env.grading.models import Assertion, CheckResult, Verdict
from vamos_env.report.metrics import Rate, compute_metrics, pass_hat_k, wilson_interval
from vamos_env.runner.records import CallRecord, CallUsage, Exclusion

Z2 = 1.959963984540054**2


def test_wilson_at_zero_and_n_has_exact_ends() -> None:
    assert wilson_interval(0, 10) == (0.0, pytest.approx(Z2 / (10 + Z2)))
    assert wilson_interval(10, 10) == (pytest.approx(10 / (10 + Z2)), 1.0)
    assert wilson_interval(0, 10)[1] == pytest.approx(0.277533, abs=1e-6)
    assert wilson_interval(10, 10)[0] == pytest.approx(0.722467, abs=1e-6)


def test_wilson_in_the_middle_and_with_nothing_counted() -> None:
    low, high = wilson_interval(5, 10)
    assert (low, high) == (pytest.approx(0.236593, abs=1e-6), pytest.approx(0.763407, abs=1e-6))
    # (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n) with p = 29/75: 0.284552, 0.499825.
    low, high = wilson_interval(29, 75)
    assert (low, high) == (pytest.approx(0.284552, abs=1e-6), pytest.approx(0.499825, abs=1e-6))
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    assert Rate(0, 0).value is None and Rate(0, 0).text() == "- (0/0)"
    assert Rate(1, 4).text() == "25.0% [4.6%, 69.9%] (1/4)"


def test_pass_hat_k_by_hand() -> None:
    tasks = {"t1": (2, 3), "t2": (0, 2), "t3": (3, 3)}
    assert pass_hat_k(tasks, 1) == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert pass_hat_k(tasks, 2) == pytest.approx((1 / 3 + 0 + 1) / 3)
    assert pass_hat_k(tasks, 3) == pytest.approx((0 + 1) / 2)  # t2 has only two repeats
    assert pass_hat_k(tasks, 4) is None


def verdict(task: str, gate: bool, actions: bool, requirements: bool) -> Verdict:
    def assertion(name: Any, passed: bool) -> Assertion:
        return Assertion(name=name, checks=[CheckResult(id=f"{name}_1", kind="say", passed=passed)])

    return Verdict(
        task_id=task,
        gate=assertion("gate", gate),
        actions=assertion("actions", actions),
        requirements=assertion("requirements", requirements),
    )


def record(stack: str, task: str, repeat: int, status: str, **fields: Any) -> CallRecord:
    gar = fields.pop("gar", (status == "pass",) * 3)
    values: dict[str, Any] = {
        "key": f"{stack}/{task}/{repeat}",
        "task_id": task,
        "stack": stack,
        "repeat": repeat,
        "trial_id": "t",
        "seed": 1,
        "persona": {"t1": "calm", "t2": "angry"}[task],
        "background": ("clean", "street", "cafe")[repeat],
        "request_count": {"t1": 2, "t2": 4}[task],
        "status": status,
        "verdict": verdict(task, *gar),
    }
    values.update(fields)
    return CallRecord(**values)


RECORDS = [
    record("A", "t1", 0, "pass", caller_satisfied=True, response_latencies_s=[0.1, 0.3],
           usage=CallUsage(model="gpt-4o-mini", prompt_tokens=1_000_000), cost_usd=0.15),
    record("A", "t1", 1, "pass", response_latencies_s=[0.2]),
    record("A", "t1", 2, "fail", gar=(True, False, False), caller_satisfied=False),
    record("A", "t2", 0, "fail", gar=(False, False, False), caller_satisfied=True),
    record("A", "t2", 1, "excluded", gar=(True, True, True), response_latencies_s=[0.9],
           exclusions=[Exclusion(kind="caller_deviation", detail="skipped_request: 2")],
           usage=CallUsage(model="mystery-model", prompt_tokens=10), cost_usd=None),
    record("A", "t2", 2, "fail", gar=(True, True, False), transferred=True),
    record("B", "t1", 0, "pass"),
    record("B", "t1", 1, "pass"),
]  # fmt: skip


def test_per_stack_metrics_by_hand() -> None:
    a = compute_metrics(RECORDS).stack("A")
    assert (a.calls, a.counted, a.excluded) == (6, 5, 1)
    assert a.completion == Rate(2, 5)
    assert a.by_request_count == {2: Rate(2, 3), 4: Rate(0, 2)}
    assert a.by_background == {"clean": Rate(1, 2), "street": Rate(1, 1), "cafe": Rate(0, 2)}
    assert list(a.by_background) == ["clean", "street", "cafe"]  # the benchmark's order
    assert a.by_persona == {"angry": Rate(0, 2), "calm": Rate(2, 3)}
    assert (a.gate, a.actions, a.requirements) == (Rate(4, 5), Rate(3, 5), Rate(2, 5))
    assert a.gate_passed_actions_failed == Rate(1, 5)
    assert a.transfer == Rate(1, 5) and a.transfer_by_persona == {
        "angry": Rate(1, 2),
        "calm": Rate(0, 3),
    }
    assert a.satisfied_but_failed == Rate(1, 2)
    # Per repeat 1/2, 1/1, 0/2: sample standard deviation 0.5.
    assert a.by_repeat == {0: Rate(1, 2), 1: Rate(1, 1), 2: Rate(0, 2)}
    assert a.repeat_std == pytest.approx(0.5)
    assert (a.mixed_tasks, a.tasks) == (1, 2)
    assert a.pass_hat_k == {1: pytest.approx(1 / 3), 2: pytest.approx(1 / 6), 3: 0.0}
    assert a.median_latency_s == pytest.approx(0.25)  # 0.1, 0.2, 0.3, 0.9
    assert a.mean_cost_usd == pytest.approx(0.15 / 5) and a.unpriced_calls == 1


def test_pooled_exclusions_and_their_effect() -> None:
    run = compute_metrics(RECORDS)
    assert run.pooled == Rate(4, 7) and run.pooled_if_excluded_counted == Rate(5, 8)
    assert run.exclusion_kinds == {"caller_deviation": 1}
    [excluded] = run.excluded
    assert excluded.key == "A/t2/1" and excluded.graded == "pass"
    assert excluded.reasons == ["caller_deviation: skipped_request: 2"]
    assert run.unsolved_tasks == ["t2"] and (run.tasks, run.calls) == (2, 8)
    assert [s.stack for s in run.stacks] == ["A", "B"]
    assert run.stack("B").completion == Rate(2, 2) and run.stack("B").repeat_std == 0.0


def test_a_price_table_reprices_the_tokens() -> None:
    prices = {"gpt-4o-mini": Price(1.0, 2.0), "mystery-model": Price(1_000_000.0, 0.0)}
    a = compute_metrics(RECORDS, prices=prices).stack("A")
    assert a.unpriced_calls == 0
    assert a.mean_cost_usd == pytest.approx((1.0 + 10.0) / 6)
    assert math.isclose(compute_metrics(RECORDS).stack("B").mean_cost_usd or 0.0, 0.0)
