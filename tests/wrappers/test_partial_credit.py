"""PartialCredit: passed / total over every check of the verdict, at the end of the call only."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from vamos_env.wrappers import PartialCredit, partial_credit

END = {"type": "end_call"}


def test_a_hand_checked_call_scores_five_of_seven(call: ModuleType) -> None:
    # Verified, then paperless switched on without reading the email back or asking:
    # gate 2/2 (tools, disclosure), actions 2/2 (the change, no extra change),
    # requirements 1/3 (the email read back, the caller's agreement after it, and the
    # grader's own no_recitation, which a call that recites nothing passes).
    env = PartialCredit(call.make_env())
    actions = [call.PASSING[0], call.PASSING[1], call.PASSING[4], END]
    steps = call.run(env, actions, seed=0, options=call.CALM_CLEAN)
    assert [s[1] for s in steps[:-1]] == [0.0, 0.0, 0.0]
    _, reward, terminated, _, info = steps[-1]
    assert terminated and reward == pytest.approx(5 / 7)
    credit = info["partial_credit"]
    assert credit["by_assertion"] == {"gate": [2, 2], "actions": [2, 2], "requirements": [1, 3]}
    assert (credit["passed"], credit["total"], credit["base_reward"]) == (5, 7, 0.0)
    failed = [c["id"] for c in info["verdict"]["requirements"]["checks"] if not c["passed"]]
    assert failed == ["r0_email", "r0_confirm"]


def test_a_passing_call_keeps_its_one(call: ModuleType) -> None:
    env = PartialCredit(call.make_env())
    steps = call.run(env, [*call.PASSING, END], seed=0, options=call.CALM_CLEAN)
    assert steps[-1][1] == 1.0 and steps[-1][4]["partial_credit"]["base_reward"] == 1.0


def verdict(*gate: Any, fault: str | None = None, passed: bool = False) -> dict[str, Any]:
    checks = [{"id": f"c{i}", "passed": p} for i, p in enumerate(gate)]
    return {
        "gate": {"checks": checks},
        "actions": {"checks": []},
        "requirements": {"checks": []},
        "grading_fault": fault,
        "passed": passed,
    }


def test_the_rules_for_undecided_faults_and_empty_verdicts() -> None:
    assert partial_credit(verdict(True, None, False, True)).reward == 0.5  # undecided: not passed
    assert partial_credit(verdict(True, True, fault="ledger disagrees")).reward == 0.0
    assert partial_credit(verdict(passed=True)).reward == 1.0
    assert partial_credit(verdict(passed=False)).reward == 0.0
