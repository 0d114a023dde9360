"""The verdict of one call and its parts: evidence, per-check results, assertions.

A ``Verdict`` is what the grader returns for one call: three assertions (gate, actions,
requirements), each a list of ``CheckResult`` with the evidence that decided it (turn
indices, quoted text, tool call ids). A check the verifier could not judge has
``passed=None`` and is listed in ``Verdict.undecided``; it is never silently passed.
A disagreement between the tool trace and the services' ledgers is a
``grading_fault``: the call is then neither a pass nor a fail (``outcome == "fault"``)
and the runner excludes it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

CheckKind = Literal[
    "gate_tools",
    "gate_disclosure",
    "change",
    "no_extra_changes",
    "say",
    "confirm",
    "not_called",
    "called",
    "not_said",
]
Outcome = Literal["pass", "fail", "fault"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        # A dumped verdict carries its computed fields; reading it back must accept them.
        if isinstance(data, dict) and cls.model_computed_fields:
            return {k: v for k, v in data.items() if k not in cls.model_computed_fields}
        return data


class Evidence(_Model):
    """Where a check's decision comes from: a turn, the words quoted from it, a tool call."""

    turn: int | None = None
    quote: str = ""
    call_id: str | None = None


class CheckResult(_Model):
    id: str
    kind: CheckKind
    # True / False, or None when the verifier could not judge the check (never a silent pass).
    passed: bool | None
    evidence: list[Evidence] = Field(default_factory=list)
    reason: str = ""


class Assertion(_Model):
    name: Literal["gate", "actions", "requirements"]
    checks: list[CheckResult] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool | None:
        """False if any check failed, None if none failed but one is undecided, else True."""
        results = [c.passed for c in self.checks]
        if any(r is False for r in results):
            return False
        if any(r is None for r in results):
            return None
        return True

    def check(self, check_id: str) -> CheckResult:
        for item in self.checks:
            if item.id == check_id:
                return item
        raise KeyError(f"no check {check_id!r} in assertion {self.name!r}")


class Verdict(_Model):
    """The grade of one call. ``reward`` is 1.0 only when all three assertions pass."""

    task_id: str
    gate: Assertion
    actions: Assertion
    requirements: Assertion
    grading_fault: str | None = None
    verifier: str = "code"
    # Filled by the runner from the caller's own report; grading never reads it.
    caller_satisfied: bool | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """All three assertions passed and the trace agrees with the ledgers."""
        if self.grading_fault is not None:
            return False
        return all(a.passed is True for a in (self.gate, self.actions, self.requirements))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def reward(self) -> float:
        return 1.0 if self.passed else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Outcome:
        """``fault`` (excluded from results), else ``pass`` or ``fail``."""
        if self.grading_fault is not None:
            return "fault"
        return "pass" if self.passed else "fail"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def undecided(self) -> list[str]:
        """Ids of the checks no verifier could judge (the call cannot pass while any remain)."""
        return [c.id for c in self.all_checks() if c.passed is None]

    def all_checks(self) -> list[CheckResult]:
        return [*self.gate.checks, *self.actions.checks, *self.requirements.checks]

    def check(self, check_id: str) -> CheckResult:
        for item in self.all_checks():
            if item.id == check_id:
                return item
        raise KeyError(f"no check {check_id!r} in the verdict of {self.task_id!r}")


class GradingFault(RuntimeError):
    """The grader cannot give a trustworthy verdict (a malformed model reply, a bad ledger)."""
