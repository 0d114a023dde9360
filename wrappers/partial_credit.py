"""``PartialCredit``: a shaped reward for training, the fraction of the verdict's checks passed.

The base reward is 1.0 only when all three assertions pass, which is sparse for a
learner. At the end of a call this wrapper replaces it with

    reward = passed / total

where the checks are every check of the verdict, each counted once and weighted
equally: the gate's (no account tool before verification, no disclosure before
verification), the actions' (one per expected account change, plus "no extra
changes"), and the requirements' (the task's say / confirm / called / not-called /
not-said checks). A check the verifier could not judge (``passed`` null) counts as not
passed. Exactly:

- a call whose verdict has a grading fault gets 0.0 (the verdict cannot be trusted;
  the runner excludes such calls);
- a verdict with no checks at all gets the base reward;
- otherwise the fraction above, so 1.0 if and only if every check passed, which is
  the base reward's 1.0 for any verdict without a fault.

Steps before the end keep the base reward (0.0). ``info["partial_credit"]`` carries
``passed``, ``total``, the per-assertion counts and the base reward, so the sparse
score is never lost. Mind the floor: a call in which the agent verifies and does
nothing still passes the gate's checks, "no extra changes" and "no_recitation".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, SupportsFloat

import gymnasium as gym

ASSERTIONS = ("gate", "actions", "requirements")


@dataclass(frozen=True, slots=True)
class PartialScore:
    passed: int
    total: int
    reward: float
    by_assertion: dict[str, tuple[int, int]] = field(default_factory=dict)
    grading_fault: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "total": self.total,
            "reward": self.reward,
            "by_assertion": {k: list(v) for k, v in self.by_assertion.items()},
            "grading_fault": self.grading_fault,
        }


def partial_credit(verdict: Mapping[str, Any]) -> PartialScore:
    """The shaped score of a dumped verdict (``info["verdict"]``), as the module describes."""
    by_assertion: dict[str, tuple[int, int]] = {}
    for name in ASSERTIONS:
        checks = (verdict.get(name) or {}).get("checks") or []
        by_assertion[name] = (sum(1 for c in checks if c.get("passed") is True), len(checks))
    passed = sum(p for p, _ in by_assertion.values())
    total = sum(t for _, t in by_assertion.values())
    fault = verdict.get("grading_fault") is not None
    if fault:
        reward = 0.0
    elif total == 0:
        reward = 1.0 if verdict.get("passed") else 0.0
    else:
        reward = passed / total
    return PartialScore(passed, total, reward, by_assertion, fault)


class PartialCredit(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Replace the end-of-call reward with the fraction of checks passed."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        verdict = info.get("verdict")
        if (terminated or truncated) and isinstance(verdict, Mapping):
            score = partial_credit(verdict)
            info = {**info, "partial_credit": {**score.as_dict(), "base_reward": float(reward)}}
            reward = score.reward
        return observation, reward, terminated, truncated, info
