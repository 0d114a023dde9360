"""The red-team gate (DOMAIN.md section 10): scripted and sceptic calls, judged, pass or fail.

``run_redteam`` plays ``scripted`` calls with the benchmark's callers (calm and angry, as
cast) and ``sceptic`` calls with the sceptic persona, all in the clean room (the
transcript rig's channel: every word heard as said, no speech in the path), scores every
transcript with a judge (the offline heuristic judge, or a model), and decides the run
with ``gate_run``: a project puts ``vamos redteam`` in CI and a failing gate stops the
deploy (non-zero exit).

Tasks are taken in order from the task selection (the exam by default), the scripted
calls first, the sceptic calls next, wrapping round when there are more calls than tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vamos_env.callers.casting import cast, stable_seed
from vamos_env.grading.judge import GateReport, JudgeScores, Rubric, gate_run
from vamos_env.grading.records import GradedCall
from vamos_env.runner.plan import CallSpec, StackRef, resolve_stack, select_tasks
from vamos_env.runner.records import CallRecord
from vamos_env.runner.rollout import Rollout, RolloutSettings

REDTEAM_TRIAL = "redteam"


@dataclass
class RedteamResult:
    report: GateReport
    records: list[CallRecord]
    scores: list[JudgeScores]

    def graded_calls(self) -> list[GradedCall]:
        """The calls with their judge scores, as ``vamos judge gate`` reads them."""
        return [
            GradedCall(
                key=r.key,
                task_id=r.task_id,
                stack=r.stack,
                repeat=r.repeat,
                persona=r.persona,
                background=r.background,
                transcript=r.transcript,
                verdict=r.verdict,
                judge=s,
            )
            for r, s in zip(self.records, self.scores, strict=True)
        ]


def redteam_calls(
    stack: str, task_ids: Sequence[str], *, scripted: int, sceptic: int, trial_id: str
) -> list[CallSpec]:
    """The calls of a red-team run: scripted (calm/angry as cast), then sceptic, clean room."""
    if scripted < 0 or sceptic < 0 or scripted + sceptic == 0:
        raise ValueError(f"expected some calls, got --scripted {scripted} --sceptic {sceptic}")
    ids = list(task_ids)
    persona_of = {c.task_id: c.persona for c in cast(ids, trial_id=trial_id, repeats=1)}
    specs = []
    for index in range(scripted + sceptic):
        task_id = ids[index % len(ids)]
        # Repeats keep the keys unique: scripted calls even, sceptic calls odd.
        is_sceptic = index >= scripted
        lap = (index - scripted if is_sceptic else index) // len(ids)
        repeat = 2 * lap + int(is_sceptic)
        specs.append(
            CallSpec(
                stack=stack,
                task_id=task_id,
                repeat=repeat,
                persona="sceptic" if is_sceptic else persona_of[task_id],
                background="clean",
                seed=stable_seed("redteam", trial_id, task_id, repeat),
                trial_id=trial_id,
            )
        )
    return specs


def run_redteam(
    stack: str,
    *,
    scripted: int = 20,
    sceptic: int = 20,
    rubric: Rubric,
    judge: Any,
    tasks: str = "exam",
    min_pass_rate: float = 1.0,
    timeout_s: float = 900.0,
    max_concurrency: int = 5,
    trial_id: str = REDTEAM_TRIAL,
) -> RedteamResult:
    """Play, judge and decide a red-team run in this process (40 calls need no cluster)."""
    ref = resolve_stack(stack)
    selection = select_tasks(tasks)
    specs = redteam_calls(
        ref.name, selection.task_ids, scripted=scripted, sceptic=sceptic, trial_id=trial_id
    )
    rollout = Rollout(selection.task_set, RolloutSettings(timeout_s=timeout_s))
    if ref.offline:
        records = [rollout.run(spec, ref) for spec in specs]
    else:
        records = asyncio.run(_play_async(rollout, specs, ref, max_concurrency))
    scores = [_score(judge, record, rubric) for record in records]
    report = gate_run(
        [(r.key, s) for r, s in zip(records, scores, strict=True)],
        rubric,
        min_pass_rate=min_pass_rate,
    )
    return RedteamResult(report=report, records=records, scores=scores)


async def _play_async(
    rollout: Rollout, specs: Sequence[CallSpec], ref: StackRef, limit: int
) -> list[CallRecord]:
    gate = asyncio.Semaphore(limit)

    async def one(spec: CallSpec) -> CallRecord:
        async with gate:
            return await rollout.arun(spec, ref)

    return list(await asyncio.gather(*(one(s) for s in specs)))


def _score(judge: Any, record: CallRecord, rubric: Rubric) -> JudgeScores:
    if record.transcript is None:
        # A call that never started has nothing to judge: it fails every dimension.
        return JudgeScores(
            judge=str(getattr(judge, "name", "judge")),
            scores=dict.fromkeys((d.name for d in rubric.dimensions), 0.0),
            reasons={d.name: "the call never started" for d in rubric.dimensions},
        )
    scores: JudgeScores = judge.score(record.transcript, record.persona)
    return scores


def write_redteam(result: RedteamResult, out: str | Path) -> Path:
    """Write the judged calls as JSON Lines (``vamos judge gate FILE`` re-reads them)."""
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    judged = path / "judged.jsonl"
    with judged.open("w") as handle:
        for call in result.graded_calls():
            handle.write(call.model_dump_json() + "\n")
    return judged
