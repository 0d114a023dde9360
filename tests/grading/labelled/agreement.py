"""Regrade the labelled calls with the code verifier and compare with the human labels.

A labelled call (``calls.jsonl``) holds its full transcript; its task is the copy in
``tasks.json`` (so a rebuilt exam does not invalidate it). Regrading replays the call's
tool calls, in order and with their recorded arguments, through a ``CallSession`` on a
fresh clone of the seeded world: that gives the ledger diff the grader cross-checks, with
today's code. A replayed result that differs from the recorded one means the world or a
tool changed under the set, and is reported as such (the call is then not comparable).

``regrade_all()`` returns a ``Report``: agreement per assertion (gate, actions,
requirements) and per requirement check, and every disagreement with the label's reason
and the verifier's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.schema import Task, TaskSet
from vamos_env.grading import grade, read_ledger
from vamos_env.types import Transcript

HERE = Path(__file__).resolve().parent
TARGET = 0.99
ASSERTIONS = ("gate", "actions", "requirements")


@dataclass(frozen=True)
class Label:
    verdict: str  # "pass" | "fail"
    reason: str


# Checks the grader adds to every task (not in the task files): a call whose labels leave
# one out was read as passing it.
GRADER_CHECKS = {
    "no_recitation": Label(
        "pass", "no identifier of the account is recited where no request needs it"
    )
}


@dataclass
class LabelledCall:
    id: str
    variant: str
    note: str
    task: Task
    transcript: Transcript
    assertions: dict[str, Label]
    checks: dict[str, Label]


def load() -> list[LabelledCall]:
    tasks = {
        t.task_id: t
        for t in TaskSet.model_validate(json.loads((HERE / "tasks.json").read_text())).tasks
    }
    labels = {entry["id"]: entry for entry in yaml.safe_load((HERE / "labels.yaml").read_text())}
    calls = []
    for line in (HERE / "calls.jsonl").read_text().splitlines():
        raw = json.loads(line)
        entry = labels.pop(raw["id"], None)
        if entry is None:
            raise ValueError(f"{raw['id']}: a call without labels")
        calls.append(
            LabelledCall(
                id=raw["id"],
                variant=raw["variant"],
                note=raw["note"],
                task=tasks[raw["task_id"]],
                transcript=Transcript.model_validate(raw["transcript"]),
                assertions={a: Label(*entry[a]) for a in ASSERTIONS},
                checks={
                    **GRADER_CHECKS,
                    **{k: Label(*v) for k, v in entry["checks"].items()},
                },
            )
        )
    if labels:
        raise ValueError(f"labels without a call: {sorted(labels)[:5]}")
    return calls


class WorldChanged(RuntimeError):
    """A replayed tool call no longer gives the recorded result."""


def replay(call: LabelledCall) -> Any:
    """The ledger diff of the call, from its tool calls replayed on a fresh clone."""
    snapshot = default_snapshot()
    before = snapshot.clone()
    after = before.clone()
    clients = after.clients()
    try:
        session = CallSession(clients)
        for turn in call.transcript.turns:
            if turn.tool_call is None or turn.tool_result is None:
                continue
            result = session.call(turn.tool_call.name, dict(turn.tool_call.arguments))
            if json.loads(json.dumps(result)) != turn.tool_result.result:
                raise WorldChanged(
                    f"{call.id}: turn {turn.index} {turn.tool_call.name} now returns "
                    f"{json.dumps(result)[:200]}, recorded "
                    f"{json.dumps(turn.tool_result.result)[:200]}"
                )
    finally:
        clients.close()
    return read_ledger(before, after, call.task.caller.account_number)


@dataclass
class Disagreement:
    call: str
    what: str  # an assertion name or "check <id>"
    label: Label
    code: str
    code_reason: str


@dataclass
class Report:
    calls: int = 0
    agree: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ASSERTIONS, 0))
    check_total: int = 0
    check_agree: int = 0
    by_check: dict[str, list[int]] = field(default_factory=dict)  # check kind -> [agree, all]
    disagreements: list[Disagreement] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    labels_fail: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ASSERTIONS, 0))

    @property
    def assertion_agreement(self) -> float:
        total = 3 * self.calls
        return sum(self.agree.values()) / total if total else 0.0

    def text(self) -> str:
        lines = [
            f"{self.calls} labelled calls, {self.check_total} labelled requirement checks "
            f"(code verifier)",
            f"{'assertion':14} {'agree':>7} {'of':>5} {'rate':>7} {'labelled fail':>14}",
        ]
        for name in ASSERTIONS:
            rate = self.agree[name] / self.calls if self.calls else 0.0
            lines.append(
                f"{name:14} {self.agree[name]:>7} {self.calls:>5} {rate:>7.1%} "
                f"{self.labels_fail[name]:>14}"
            )
        lines.append(
            f"{'all':14} {sum(self.agree.values()):>7} {3 * self.calls:>5} "
            f"{self.assertion_agreement:>7.1%}   (target {TARGET:.0%})"
        )
        rate = self.check_agree / self.check_total if self.check_total else 0.0
        lines.append(f"{'checks':14} {self.check_agree:>7} {self.check_total:>5} {rate:>7.1%}")
        lines.append("")
        lines.append(f"{'check':28} {'agree':>7} {'of':>5}")
        for name, (ok, total) in sorted(self.by_check.items()):
            lines.append(f"{name:28} {ok:>7} {total:>5}")
        if self.stale:
            lines.append(f"\n{len(self.stale)} calls no longer replay (world changed):")
            lines.extend(f"  {s}" for s in self.stale)
        if self.disagreements:
            lines.append(f"\n{len(self.disagreements)} disagreements:")
            for d in self.disagreements:
                lines.append(
                    f"- {d.call} :: {d.what}: label {d.label.verdict} ({d.label.reason}); "
                    f"code {d.code} ({d.code_reason})"
                )
        return "\n".join(lines)


def _verdict_of(passed: bool | None) -> str:
    return "pass" if passed is True else ("undecided" if passed is None else "fail")


def regrade_all() -> Report:
    report = Report()
    for call in load():
        try:
            ledger = replay(call)
        except WorldChanged as exc:
            report.stale.append(str(exc))
            continue
        verdict = grade(call.task, call.transcript, ledger)
        report.calls += 1
        assertions = {"gate": verdict.gate, "actions": verdict.actions}
        assertions["requirements"] = verdict.requirements
        for name in ASSERTIONS:
            label = call.assertions[name]
            if label.verdict == "fail":
                report.labels_fail[name] += 1
            assertion = assertions[name]
            passed = bool(assertion.passed) and not (
                name == "requirements" and verdict.grading_fault
            )
            code = "pass" if passed else "fail"
            if code == label.verdict:
                report.agree[name] += 1
            else:
                failing = [c for c in assertion.checks if c.passed is not True]
                reason = "; ".join(f"{c.id}: {c.reason}" for c in failing) or (
                    verdict.grading_fault or "all checks passed"
                )
                report.disagreements.append(Disagreement(call.id, name, label, code, reason))
        results = {c.id: c for c in verdict.requirements.checks}
        for check_id, label in call.checks.items():
            result = results.get(check_id)
            code = _verdict_of(result.passed) if result is not None else "missing"
            kind = check_id.split("_", 1)[1]
            tally = report.by_check.setdefault(kind, [0, 0])
            tally[1] += 1
            report.check_total += 1
            if code == label.verdict:
                tally[0] += 1
                report.check_agree += 1
            else:
                report.disagreements.append(
                    Disagreement(
                        call.id,
                        f"check {check_id}",
                        label,
                        code,
                        result.reason if result is not None else "no such check",
                    )
                )
    return report
