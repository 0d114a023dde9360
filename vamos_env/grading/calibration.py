"""Calibration: the code verifier against the LLM verifier, and the judge against human labels.

``compare_verifiers`` takes graded calls that carry both verdicts on the same checks (the
code verifier's ``verdict.requirements`` and the LLM verifier's ``llm_checks``) and
reports agreement per check kind and per call, and lists every disagreement with both
sides' evidence for review. A check either side could not judge counts as a
disagreement (it needs a human either way). The published benchmark found 98.9-99.1%
agreement over 744 checks.

``judge_agreement`` scores labelled transcripts with a judge and reports how often the
rubric's pass/fail matches the human label (target: at least 85%).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from vamos_env.grading.judge import JudgeScores, Rubric
from vamos_env.grading.models import CheckResult, GradingFault
from vamos_env.grading.recitation import CHECK_ID as RECITATION
from vamos_env.grading.records import GradedCall
from vamos_env.types import Transcript


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Agreement(_Strict):
    group: str
    compared: int
    agreed: int

    @property
    def rate(self) -> float:
        return self.agreed / self.compared if self.compared else 1.0


class Disagreement(_Strict):
    key: str
    check_id: str
    kind: str
    code: CheckResult
    llm: CheckResult


class VerifierCalibration(_Strict):
    compared: int
    agreed: int
    by_kind: list[Agreement]
    by_call: list[Agreement]
    disagreements: list[Disagreement]
    skipped: list[str]  # calls without both verdicts, with the reason

    @property
    def rate(self) -> float:
        return self.agreed / self.compared if self.compared else 1.0

    def report(self) -> str:
        lines = [
            f"checks compared: {self.compared}, agreed: {self.agreed} ({self.rate:.1%})",
            "",
            f"{'check kind':<16}{'checks':>8}{'agreed':>8}{'rate':>9}",
        ]
        lines += [f"{a.group:<16}{a.compared:>8}{a.agreed:>8}{a.rate:>9.1%}" for a in self.by_kind]
        lines += ["", f"{'call':<40}{'checks':>8}{'agreed':>8}{'rate':>9}"]
        lines += [f"{a.group:<40}{a.compared:>8}{a.agreed:>8}{a.rate:>9.1%}" for a in self.by_call]
        lines += ["", f"disagreements ({len(self.disagreements)}):"]
        for d in self.disagreements:
            lines.append(f"- {d.key} {d.check_id} ({d.kind})")
            for side, result in (("code", d.code), ("llm", d.llm)):
                verdict = {True: "pass", False: "fail", None: "cannot judge"}[result.passed]
                quotes = "; ".join(
                    f"turn {e.turn}: {e.quote!r}" if e.turn is not None else repr(e.quote)
                    for e in result.evidence[:3]
                )
                lines.append(f"    {side:>4}: {verdict} - {result.reason}")
                if quotes:
                    lines.append(f"          evidence: {quotes}")
        if self.skipped:
            lines += ["", f"skipped ({len(self.skipped)}):"] + [f"- {s}" for s in self.skipped]
        return "\n".join(lines)


def compare_verifiers(records: Iterable[GradedCall]) -> VerifierCalibration:
    by_kind: dict[str, list[bool]] = {}
    by_call: list[Agreement] = []
    disagreements: list[Disagreement] = []
    skipped: list[str] = []
    for record in records:
        if record.verdict is None or record.llm_checks is None:
            reason = record.llm_fault or "no code verdict or no LLM checks"
            skipped.append(f"{record.key}: {reason}")
            continue
        code = {c.id: c for c in record.verdict.requirements.checks}
        llm = {c.id: c for c in record.llm_checks}
        agreed = compared = 0
        for check_id, ours in code.items():
            if check_id == RECITATION:
                continue  # judged by code for both verifiers: nothing to compare
            theirs = llm.get(check_id)
            if theirs is None:
                skipped.append(f"{record.key}: the LLM verdicts lack check {check_id}")
                continue
            same = ours.passed is not None and ours.passed == theirs.passed
            compared += 1
            agreed += same
            by_kind.setdefault(ours.kind, []).append(same)
            if not same:
                disagreements.append(
                    Disagreement(
                        key=record.key, check_id=check_id, kind=ours.kind, code=ours, llm=theirs
                    )
                )
        by_call.append(Agreement(group=record.key, compared=compared, agreed=agreed))
    kinds = [
        Agreement(group=kind, compared=len(v), agreed=sum(v)) for kind, v in sorted(by_kind.items())
    ]
    return VerifierCalibration(
        compared=sum(a.compared for a in kinds),
        agreed=sum(a.agreed for a in kinds),
        by_kind=kinds,
        by_call=by_call,
        disagreements=disagreements,
        skipped=skipped,
    )


class TranscriptJudge(Protocol):
    name: str

    def score(self, transcript: Transcript, persona: str | None = None) -> JudgeScores: ...


class JudgeCase(_Strict):
    key: str
    human: str
    judge: str
    weighted: float
    below_floor: list[str]


class JudgeCalibration(_Strict):
    judge: str
    cases: list[JudgeCase]
    target: float
    faults: list[str]

    @property
    def agreed(self) -> int:
        return sum(c.human == c.judge for c in self.cases)

    @property
    def rate(self) -> float:
        return self.agreed / len(self.cases) if self.cases else 0.0

    @property
    def meets_target(self) -> bool:
        return bool(self.cases) and self.rate >= self.target

    def report(self) -> str:
        n = len(self.cases)
        matrix = {
            (h, j): sum(c.human == h and c.judge == j for c in self.cases)
            for h in ("pass", "fail")
            for j in ("pass", "fail")
        }
        lines = [
            f"judge {self.judge}: agrees with the human label on {self.agreed}/{n} "
            f"({self.rate:.1%}); target {self.target:.0%}: "
            + ("met" if self.meets_target else "NOT met"),
            "",
            f"{'':<14}{'judge pass':>12}{'judge fail':>12}",
            f"{'human pass':<14}{matrix[('pass', 'pass')]:>12}{matrix[('pass', 'fail')]:>12}",
            f"{'human fail':<14}{matrix[('fail', 'pass')]:>12}{matrix[('fail', 'fail')]:>12}",
        ]
        wrong = [c for c in self.cases if c.human != c.judge]
        if wrong:
            lines += ["", "disagreements:"]
            lines += [
                f"- {c.key}: human {c.human}, judge {c.judge} (weighted {c.weighted:.3f}"
                + (f", below floor: {', '.join(c.below_floor)}" if c.below_floor else "")
                + ")"
                for c in wrong
            ]
        if self.faults:
            lines += ["", "not judged:"] + [f"- {f}" for f in self.faults]
        return "\n".join(lines)


def judge_agreement(
    records: Sequence[GradedCall],
    rubric: Rubric,
    judge: TranscriptJudge,
    *,
    target: float = 0.85,
    use_stored: bool = False,
) -> JudgeCalibration:
    """How often ``judge`` agrees with the human labels (stored scores only if ``use_stored``)."""
    cases: list[JudgeCase] = []
    faults: list[str] = []
    for record in records:
        if record.human_label is None:
            faults.append(f"{record.key}: no human label")
            continue
        try:
            scores = score_record(record, judge, use_stored=use_stored)
        except GradingFault as exc:
            faults.append(f"{record.key}: {exc}")
            continue
        except ValueError as exc:
            faults.append(str(exc))
            continue
        decision = rubric.decide(scores.scores)
        cases.append(
            JudgeCase(
                key=record.key,
                human=record.human_label,
                judge="pass" if decision.passed else "fail",
                weighted=decision.weighted,
                below_floor=decision.below_floor,
            )
        )
    return JudgeCalibration(judge=judge.name, cases=cases, target=target, faults=faults)


def score_record(
    record: GradedCall, judge: TranscriptJudge, *, use_stored: bool = True
) -> JudgeScores:
    """The record's scores: those it carries (when ``use_stored``), else the judge's."""
    if use_stored and record.judge is not None:
        return record.judge
    if record.transcript is None:
        raise ValueError(f"{record.key}: the record has neither judge scores nor a transcript")
    return judge.score(record.transcript, record.persona)
