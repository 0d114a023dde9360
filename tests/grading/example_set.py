"""The graded example set: hand-written calls played on real twins, with expected verdicts.

An example (``examples/*.yaml``) names a task of ``examples/tasks.yaml`` and lists the
call's turns: what the caller and the agent said, and the agent's tool calls. The builder
plays the tool calls through a real ``CallSession`` on a fresh clone of the seeded world,
so results, writes and the ledger diff are the real ones; an example may then tamper
with a recorded result (a trace that lies) or write to the services behind the session's
back (a ledger that moved without the trace), to test the cross-check.

Turn forms:
- ``caller: text`` (``spurious: true`` for background speech the agent received,
  ``heard`` for what the agent heard when the channel changed it);
- ``agent: text`` (``cut: true`` with ``heard`` for a turn cut by a barge-in);
- ``call: tool`` with ``args`` (for ``verify_caller`` the task caller's own answers by
  default), and optionally ``tamper: {ok, result, writes}`` applied to the recorded turn.

Placeholders in tasks and examples: ``{bill:N}`` is the task account's bill with number
suffix N, ``{card:LAST4}`` its card with those last four digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, model_validator

from vamos_env.clock import TODAY
from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.schema import Task, TaskSet
from vamos_env.grading import LedgerDiff, read_ledger
from vamos_env.twins.snapshot import Snapshot
from vamos_env.types import ToolCall, ToolResult, Transcript, Turn

EXAMPLES = Path(__file__).parent / "examples"
_PLACEHOLDER = re.compile(r"\{(bill|card):([^}]+)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Tamper(_Strict):
    ok: bool | None = None
    result: dict[str, Any] | None = None  # merged over the real result
    replace_result: dict[str, Any] | None = None
    writes: list[dict[str, Any]] | None = None  # replaces the real writes


class TurnSpec(_Strict):
    caller: str | None = None
    agent: str | None = None
    call: str | None = None
    args: dict[str, Any] | None = None
    spurious: bool = False
    cut: bool = False
    heard: str | None = None
    tamper: Tamper | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> TurnSpec:
        kinds = [k for k in (self.caller, self.agent, self.call) if k is not None]
        if len(kinds) != 1:
            raise ValueError("a turn is exactly one of caller, agent or call")
        return self


class BehindBack(_Strict):
    """A write made directly through the clients, unseen by the session's trace."""

    pay: str | None = None  # invoice id (placeholder)
    card: str | None = None
    metadata: dict[str, str] | None = None
    email: str | None = None
    repayment_cents: int | None = None


Verdicts = Literal["pass", "fail", "undecided"]


class Expect(_Strict):
    outcome: Literal["pass", "fail", "fault"]
    checks: dict[str, Verdicts]


class Example(_Strict):
    id: str
    task: str
    note: str
    turns: list[TurnSpec]
    behind_back: list[BehindBack] = []
    expect: Expect


@dataclass
class BuiltCall:
    example: Example
    task: Task
    transcript: Transcript
    ledger: LedgerDiff


class ExampleWorld:
    """Builds example calls on clones of the seeded snapshot."""

    def __init__(self, snapshot: Snapshot[SeedReport]) -> None:
        self.snapshot = snapshot
        self.report = snapshot.report
        raw = yaml.safe_load((EXAMPLES / "tasks.yaml").read_text())
        self._raw_tasks = {t["task_id"]: t for t in raw["tasks"]}
        self.tasks = {
            task_id: Task.model_validate(self.resolve(t, t["caller"]["account_number"]))
            for task_id, t in self._raw_tasks.items()
        }
        TaskSet(name=raw["name"], tasks=tuple(self.tasks.values()))  # ids unique, schema ok

    def resolve(self, value: Any, account_number: str) -> Any:
        seeded = self.report.accounts[account_number]
        account = self.report.manifest.account(account_number)
        cards = {c.last4: seeded.payment_methods[c.stripe_test_token] for c in account.cards}

        def one(match: re.Match[str]) -> str:
            kind, key = match.groups()
            if kind == "bill":
                return seeded.invoices[int(key)]
            return cards[key]

        if isinstance(value, str):
            return _PLACEHOLDER.sub(one, value)
        if isinstance(value, list):
            return [self.resolve(v, account_number) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v, account_number) for k, v in value.items()}
        return value

    def build(self, example: Example) -> BuiltCall:
        task = self.tasks[example.task]
        number = task.caller.account_number
        before = self.snapshot.clone()
        after = before.clone()
        clients = after.clients()
        session = CallSession(clients)
        turns: list[Turn] = []
        try:
            for spec in example.turns:
                turns.append(self._turn(len(turns), spec, task, session))
            for write in example.behind_back:
                self._behind_back(write, number, clients)
        finally:
            clients.close()
        transcript = Transcript(task_id=task.task_id, turns=turns)
        return BuiltCall(example, task, transcript, read_ledger(before, after, number))

    def _turn(self, index: int, spec: TurnSpec, task: Task, session: CallSession) -> Turn:
        if spec.caller is not None:
            return Turn(index=index, speaker="caller", text=spec.caller, heard=spec.heard,
                        spurious=spec.spurious)  # fmt: skip
        if spec.agent is not None:
            return Turn(index=index, speaker="agent", text=spec.agent, heard=spec.heard,
                        cut=spec.cut)  # fmt: skip
        assert spec.call is not None
        number = task.caller.account_number
        args = self.resolve(spec.args, number) if spec.args is not None else None
        if args is None and spec.call == "verify_caller":
            args = {
                "account_number": number,
                "name_on_account": task.caller.full_name,
                "second_factor": task.caller.second_factor.value,
            }
        session.call(spec.call, args or {})
        entry = session.trace[-1]
        result = dict(entry.result)
        ok = entry.ok
        writes = [w.as_dict() for w in entry.writes]
        if spec.tamper is not None:
            t = self.resolve(spec.tamper.model_dump(exclude_none=True), number)
            if "replace_result" in t:
                result = t["replace_result"]
            result.update(t.get("result", {}))
            ok = t.get("ok", ok)
            writes = t.get("writes", writes)
        return Turn(
            index=index,
            speaker="tool",
            tool_call=ToolCall(call_id=entry.call_id, name=entry.tool, arguments=args or {}),
            tool_result=ToolResult(
                call_id=entry.call_id,
                name=entry.tool,
                ok=ok,
                result=result,
                writes=writes,
                verified=entry.verified,
            ),
        )

    def _behind_back(self, write: BehindBack, number: str, clients: Any) -> None:
        seeded = self.report.accounts[number]
        if write.pay is not None:
            params: dict[str, Any] = {"paid_out_of_band": True}
            if write.card is not None:
                params = {"payment_method": self.resolve(write.card, number)}
            clients.stripe.v1.invoices.pay(self.resolve(write.pay, number), params=params)
        if write.metadata is not None:
            clients.stripe.v1.customers.update(
                seeded.customer_id, params={"metadata": write.metadata}
            )
        if write.email is not None:
            clients.stripe.v1.customers.update(seeded.customer_id, params={"email": write.email})
        if write.repayment_cents is not None:
            assert seeded.loan_id is not None
            clients.fineract.make_repayment(
                seeded.loan_id, amount_cents=write.repayment_cents, on=TODAY
            )


def load_examples() -> list[Example]:
    examples: list[Example] = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        if path.name == "tasks.yaml":
            continue
        for raw in yaml.safe_load(path.read_text()) or []:
            examples.append(Example.model_validate(raw))
    ids = [e.id for e in examples]
    assert len(ids) == len(set(ids)), "example ids must be unique"
    return examples
