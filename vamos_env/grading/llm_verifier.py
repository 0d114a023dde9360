"""The LLM verifier: the task's checks judged by a language model, as the published verifier does.

A drop-in ``CheckVerifier`` for ``grade(..., verifier=LLMVerifier(...))``. For each
check the model gets exactly what the code verifier uses: the description, the kind, the
value (money also in cents), the tolerance, the topic, and the slice of the transcript
inside the check's evidence window (the same ``Timeline`` windows; a window opened by
another check's evidence is sent from its tool bounds with the instruction to count only
what follows that check's evidence). One request per call carries every check; the reply
is one JSON object, a verdict with evidence per check, under a strict JSON schema.

The reply must name every check exactly once; anything else (not JSON, a missing or
unknown check id, a turn outside the transcript) raises ``GradingFault``, which ``grade``
turns into a grading fault. Tokens and cost accumulate in ``usage``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from vamos_env.envs.energy.tasks.schema import Check, Task
from vamos_env.grading.code_verifier import money_text, spoken
from vamos_env.grading.llm import ModelEndpoint, Price, StructuredChat, Usage
from vamos_env.grading.models import CheckResult, Evidence, GradingFault
from vamos_env.grading.timeline import Span, Timeline
from vamos_env.types import Turn

SYSTEM = """\
You verify a recorded phone call between a utility's billing agent and a caller against \
explicit checks. Judge each check only from the turns listed under it (its evidence \
window) and the rule of its kind:
- say: the agent states the value (within the tolerance) on the check's topic. Money may \
be spoken in words ("sixty-five fifty-two" is $65.52). A postal code, card digits, an \
account number or a phone number is not an amount; a number of payments is not a number \
of months.
- confirm: the caller (not background speech) agrees after the read-back, inside the window.
- called / not_called: a successful call of the named tool is / is not inside the window.
- not_said: the agent never claims the topic inside the window (a negated statement or a \
question is not a claim).
For a cut agent turn only the words the caller heard count. Answer "cannot_judge" only \
when the turns do not let anyone decide. Quote the exact words that decided the check.\
"""


class _CheckVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    verdict: Literal["pass", "fail", "cannot_judge"]
    evidence_turns: list[int]
    quote: str
    reason: str


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checks: list[_CheckVerdict]


def turn_line(turn: Turn) -> str:
    """One transcript turn as the model reads it."""
    if turn.tool_call is not None or turn.tool_result is not None:
        call, result = turn.tool_call, turn.tool_result
        name = call.name if call is not None else (result.name if result else "?")
        args = json.dumps(call.arguments, sort_keys=True) if call is not None else "{}"
        if result is None:
            return f"[{turn.index}] tool {name}({args}) -> no result"
        status = "succeeded" if result.ok else "failed"
        shown = json.dumps(_compact(result.result), sort_keys=True)[:600]
        return f"[{turn.index}] tool {name}({args}) {status}: {shown}"
    if turn.speaker == "caller":
        who = "background speech (NOT the caller)" if turn.spurious else "caller"
        return f"[{turn.index}] {who}: {turn.text}"
    if turn.cut and turn.heard is not None:
        return f"[{turn.index}] agent (cut off; the caller heard only this): {spoken(turn)}"
    return f"[{turn.index}] agent: {turn.text}"


def _compact(value: Any) -> Any:
    """A tool result without the long lists (schedules, bill lines) the checks never need."""
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items() if k not in ("schedule", "lines", "bills")}
    return value


def describe_value(check: Check) -> str:
    if check.value is None:
        return "none (the topic itself must be said)"
    if check.value_type == "money" and isinstance(check.value, int):
        shown = f"{money_text(check.value)} ({check.value} cents)"
        if check.tolerance:
            shown += f", tolerance {check.tolerance} cents"
        return shown
    shown = f"{check.value!r} ({check.value_type})"
    if check.tolerance:
        unit = "days" if check.value_type == "date" else ""
        shown += f", tolerance {check.tolerance} {unit}".rstrip()
    return shown


def tool_bounded_window(check: Check, timeline: Timeline) -> Span:
    """The check's window from its tool bounds alone (an ``after_check`` is left to the model)."""
    bare = check.model_copy(
        update={"window": check.window.model_copy(update={"after_check": None})}
    )
    return timeline.window(bare, lambda _: None)


def evidence_slice(check: Check, timeline: Timeline) -> tuple[Span, list[str]]:
    span = tool_bounded_window(check, timeline)
    lines = [turn_line(t) for t in timeline.turns if t.index in span]
    return span, lines


def check_block(check: Check, timeline: Timeline) -> str:
    span, lines = evidence_slice(check, timeline)
    parts = [
        f"check {check.id} ({check.kind}): {check.description}",
        f"  value: {describe_value(check)}",
    ]
    if check.topic or check.topic_phrases:
        phrases = ", ".join(check.topic_phrases)
        parts.append(f"  topic: {check.topic or '-'}" + (f" (e.g. {phrases})" if phrases else ""))
    if check.tool:
        parts.append(f"  tool: {check.tool}")
    window = span.describe()
    if check.window.after_check:
        window += f"; count only turns after the evidence of check {check.window.after_check}"
    parts.append(f"  evidence window: {window}")
    parts.append("  turns:" if lines else "  turns: (none)")
    parts.extend(f"    {line}" for line in lines)
    return "\n".join(parts)


def verification_request(task: Task, timeline: Timeline) -> str:
    blocks = "\n\n".join(check_block(c, timeline) for c in task.checks)
    return (
        f"Task {task.task_id}. Judge these {len(task.checks)} checks. Reply with one JSON "
        f'object: {{"checks": [one entry per check id]}}.\n\n{blocks}'
    )


class LLMVerifier:
    """A ``CheckVerifier`` that asks a model; ``usage`` holds tokens and cost so far."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        prices: dict[str, Price] | None = None,
        client: Any = None,
    ) -> None:
        self.chat = StructuredChat(endpoint, prices=prices, client=client)
        self.name = f"llm:{endpoint.model}"

    @property
    def usage(self) -> Usage:
        return self.chat.usage

    def judge(self, task: Task, timeline: Timeline) -> list[CheckResult]:
        if not task.checks:
            return []
        reply = self.chat.ask(
            SYSTEM, verification_request(task, timeline), _Reply, "check_verdicts"
        )
        return _results(task, timeline, reply)


def _results(task: Task, timeline: Timeline, reply: _Reply) -> list[CheckResult]:
    expected = [c.id for c in task.checks]
    got = [c.id for c in reply.checks]
    missing = [i for i in expected if i not in got]
    unknown = [i for i in got if i not in expected]
    repeated = sorted({i for i in got if got.count(i) > 1})
    if missing or unknown or repeated:
        raise GradingFault(
            "the model's reply is malformed: "
            + "; ".join(
                part
                for part in (
                    f"missing checks {missing}" if missing else "",
                    f"unknown checks {unknown}" if unknown else "",
                    f"repeated checks {repeated}" if repeated else "",
                )
                if part
            )
        )
    indices = {t.index for t in timeline.turns}
    by_id = {c.id: c for c in reply.checks}
    out = []
    for check in task.checks:
        answer = by_id[check.id]
        stray = [t for t in answer.evidence_turns if t not in indices]
        if stray:
            raise GradingFault(
                f"the model's reply is malformed: check {check.id} cites turns {stray}, "
                f"which the transcript does not have"
            )
        passed = {"pass": True, "fail": False, "cannot_judge": None}[answer.verdict]
        evidence = [Evidence(turn=t, quote=answer.quote) for t in answer.evidence_turns]
        if not evidence and answer.quote:
            evidence = [Evidence(quote=answer.quote)]
        out.append(
            CheckResult(
                id=check.id, kind=check.kind, passed=passed, evidence=evidence, reason=answer.reason
            )
        )
    return out
