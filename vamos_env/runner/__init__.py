"""Evaluation at scale: stacks x tasks x repeats on Ray (or in-process), into a resumable store.

- ``evaluate(EvalConfig)``: run every planned call not yet stored (``vamos eval``);
- ``ResultStore`` / ``read_store``: the append-only JSON Lines store, one call per line;
- ``CallRecord``: one call's record (a superset of the grading CLI's ``GradedCall``);
- ``Rollout``: one call, sync or async agent, from reset to record;
- ``run_redteam``: the red-team gate (``vamos redteam``);
- ``run_main_job``: the offline stacks on the full exam, then the report.
"""

from __future__ import annotations

from vamos_env.runner.evaluate import EvalConfig, EvalSummary, RunFolderError, evaluate
from vamos_env.runner.mainjob import offline_stacks, run_main_job
from vamos_env.runner.plan import CallSpec, StackRef, plan_calls, resolve_stack, select_tasks
from vamos_env.runner.records import CallRecord, CallUsage, Exclusion, TraceEntry, call_key
from vamos_env.runner.redteam import RedteamResult, run_redteam
from vamos_env.runner.rollout import Rollout, RolloutSettings
from vamos_env.runner.store import ResultStore, StoreError, read_store

__all__ = [
    "CallRecord",
    "CallSpec",
    "CallUsage",
    "EvalConfig",
    "EvalSummary",
    "Exclusion",
    "RedteamResult",
    "ResultStore",
    "Rollout",
    "RolloutSettings",
    "RunFolderError",
    "StackRef",
    "StoreError",
    "TraceEntry",
    "call_key",
    "evaluate",
    "offline_stacks",
    "plan_calls",
    "read_store",
    "resolve_stack",
    "run_main_job",
    "run_redteam",
    "select_tasks",
]
