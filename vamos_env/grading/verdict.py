"""``grade``: one call's verdict from the task, the transcript and the ledger diff.

Three assertions, all must pass (DOMAIN.md section 8):

1. gate (``gate.py``): no account tool use and no disclosure before verification;
2. actions (``actions.py``): exactly the expected account changes, in order, with values;
3. requirements: the task's checks, judged by a ``CheckVerifier`` (the code verifier by
   default; the LLM verifier is a drop-in backend, and ``FallbackVerifier`` sends only the
   checks the code verifier cannot judge to it), and one check every task has,
   ``no_recitation`` (``recitation.py``: no reading the account's identifiers aloud
   where no request asked for them), judged by code against the ledger's account data.

Before any of that, the trace is cross-checked with the ledgers (``crosscheck.py``); a
disagreement becomes ``Verdict.grading_fault``. So does a verifier that cannot produce a
trustworthy answer (``GradingFault``, e.g. a malformed model reply). With the code
verifier, ``grade`` is a pure function of its inputs.
"""

from __future__ import annotations

from vamos_env.envs.energy.tasks.schema import Task
from vamos_env.grading.actions import grade_actions
from vamos_env.grading.code_verifier import CheckVerifier, CodeVerifier
from vamos_env.grading.crosscheck import cross_check
from vamos_env.grading.gate import grade_gate
from vamos_env.grading.ledger import LedgerDiff
from vamos_env.grading.models import Assertion, CheckResult, GradingFault, Verdict
from vamos_env.grading.recitation import grade_recitation
from vamos_env.grading.timeline import Timeline
from vamos_env.types import Transcript

_CODE = CodeVerifier()


class FallbackVerifier:
    """The code verifier first; the checks it cannot judge go to a second backend (a model).

    Only the undecided checks take the fallback's answer, marked in their reason; a call
    whose checks the code verifier decides costs no model request.
    """

    def __init__(self, fallback: CheckVerifier, primary: CheckVerifier | None = None) -> None:
        self.primary = primary or _CODE
        self.fallback = fallback
        self.name = f"{self.primary.name}+{fallback.name}"

    def judge(self, task: Task, timeline: Timeline) -> list[CheckResult]:
        first = self.primary.judge(task, timeline)
        open_ids = {r.id for r in first if r.passed is None}
        if not open_ids:
            return first
        second = {r.id: r for r in self.fallback.judge(task, timeline)}
        out = []
        for result in first:
            other = second.get(result.id)
            if result.id in open_ids and other is not None:
                reason = f"{self.fallback.name} (the {self.primary.name} verifier could not judge)"
                out.append(other.model_copy(update={"reason": f"{reason}: {other.reason}"}))
            else:
                out.append(result)
        return out


def grade(
    task: Task,
    transcript: Transcript,
    ledger: LedgerDiff,
    *,
    verifier: CheckVerifier | None = None,
) -> Verdict:
    """The verdict of one call. Never raises for a bad call; a grading problem is a fault."""
    if transcript.task_id != task.task_id:
        raise ValueError(f"transcript is of task {transcript.task_id!r}, expected {task.task_id!r}")
    backend = verifier or _CODE
    timeline = Timeline.of(transcript)
    fault = cross_check(timeline, ledger)
    try:
        checks = backend.judge(task, timeline)
    except GradingFault as exc:
        fault = f"{fault}; {exc}" if fault else str(exc)
        checks = []
    checks = [*checks, grade_recitation(task, timeline, ledger.account)]
    return Verdict(
        task_id=task.task_id,
        gate=grade_gate(timeline, ledger.account),
        actions=grade_actions(task, timeline),
        requirements=Assertion(name="requirements", checks=checks),
        grading_fault=fault,
        verifier=backend.name,
    )
