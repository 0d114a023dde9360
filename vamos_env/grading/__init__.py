"""Grading a call: the three-assertion verdict, the ledger cross-check, verifiers and the judge.

``grade(task, transcript, ledger)`` is the reward: gate, actions and requirements must all
pass. ``read_ledger(pristine, final, account_number)`` is the services' side of the story,
which the grader compares with the tool trace. The code verifier judges the task's checks
by rule; the LLM verifier (``llm_verifier``) judges the same checks with a model, and
``calibration`` compares the two. The judge gate (``judge``) scores transcripts on the
five rubric dimensions of the red-teaming rig.
"""

from __future__ import annotations

from vamos_env.grading.code_verifier import CheckVerifier, CodeVerifier
from vamos_env.grading.ledger import AccountData, LedgerChange, LedgerDiff, read_ledger
from vamos_env.grading.models import Assertion, CheckResult, Evidence, GradingFault, Verdict
from vamos_env.grading.timeline import Timeline
from vamos_env.grading.verdict import FallbackVerifier, grade

__all__ = [
    "AccountData",
    "Assertion",
    "CheckResult",
    "CheckVerifier",
    "CodeVerifier",
    "Evidence",
    "FallbackVerifier",
    "GradingFault",
    "LedgerChange",
    "LedgerDiff",
    "Timeline",
    "Verdict",
    "grade",
    "read_ledger",
]
