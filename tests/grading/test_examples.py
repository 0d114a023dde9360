"""The graded example set: the code verifier must get every check of every example right."""

from __future__ import annotations

from typing import Any

from vamos_env.grading import grade

_WORDS = {True: "pass", False: "fail", None: "undecided"}
# Checks the grader adds to every task: an example that does not name one expects a pass.
_GRADER_CHECKS = {"no_recitation": "pass"}


def test_the_set_is_large_and_covers_every_task(world: Any, examples: list[Any]) -> None:
    assert len(examples) >= 60
    assert {e.task for e in examples} == set(world.tasks)
    assert {e.expect.outcome for e in examples} == {"pass", "fail", "fault"}


def test_example(world: Any, example: Any) -> None:
    built = world.build(example)
    verdict = grade(built.task, built.transcript, built.ledger)
    got = {c.id: _WORDS[c.passed] for c in verdict.all_checks()}
    reasons = {c.id: c.reason for c in verdict.all_checks()}
    expected = {**_GRADER_CHECKS, **example.expect.checks}
    wrong = {
        k: (expected.get(k), got.get(k), reasons.get(k))
        for k in set(got) | set(expected)
        if expected.get(k) != got.get(k)
    }
    assert not wrong, f"{example.note}\nexpected, got, reason: {wrong}"
    assert verdict.outcome == example.expect.outcome, verdict.grading_fault
    assert (verdict.grading_fault is not None) == (example.expect.outcome == "fault")
