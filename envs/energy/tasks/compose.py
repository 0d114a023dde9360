"""Single-request cases, recursive composition, and turning a request path into a ``Task``.

**Singles.** Every request kind x account x variant valid on the seeded account is a
candidate (367 on the default world). ``select_singles`` picks 112 of them by round
robin over the request kinds in catalogue order: each round takes one candidate of every
kind that has one left, preferring an account that does not have that kind yet, then
one whose singles so far it can share a call with (no common requirement, write tool or
transfer), then the account with the fewest singles, then slot and variant order. Every
kind gets as many singles as the others until its candidates run out (so each kind has
at least two where two exist), and the singles spread evenly over the accounts.

**Composition.** A call grows by appending one of its account's single cases to an
existing case; the appended request is rebuilt on the state the earlier requests leave
(their writes simulated) and kept only if (the validity rule, ``extend``):

1. nothing before it ends the call (a transfer);
2. it is valid on that state (the policy model says so: a paid bill cannot be paid, an
   arrangement just opened blocks a new one, a payment is recorded only on an
   arrangement that existed before the call);
3. its requirement is not already in the call (the same thing asked twice);
4. its account-changing tool is not already used by an earlier request (assertion 3's
   evidence windows name "the first call of a tool", which would be ambiguous);
5. it does not forbid a tool an earlier request needs, or need one an earlier request
   forbids.

Up to four requests. Composition over each account's singles (rather than over every
variant) keeps calls to things the single cases already prove solvable one at a time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.tasks.catalogue import (
    KIND_ORDER,
    BuiltRequest,
    Invalid,
    RequestSpec,
    build_request,
    candidates,
)
from vamos_env.envs.energy.tasks.schema import (
    CallerBrief,
    SecondFactor,
    SecondFactorKind,
    Task,
    TaskMeta,
)
from vamos_env.envs.energy.tasks.state import AccountState

SINGLE_COUNT = 112
MAX_REQUESTS = 4
FACTOR_KINDS: tuple[SecondFactorKind, ...] = ("card_last4", "postal_code", "last_bill_amount")
RejectReason = Literal[
    "after_transfer", "invalid", "duplicate_requirement", "write_tool_reused", "conflict"
]


def account_states(report: SeedReport) -> dict[str, AccountState]:
    """Every account of the seeded world as the task builder sees it, keyed by slot."""
    return {
        account.slot: AccountState.from_world(account, report.accounts[account.account_number])
        for account in report.manifest.accounts
    }


# --- ids ---------------------------------------------------------------------------------


def single_id(slot: str, spec: RequestSpec) -> str:
    """``s-pay_bill-a04-aug``: kind, account slot, variant."""
    tail = f"-{spec.variant}" if spec.variant else ""
    return f"s-{spec.kind}-{slot.lower()}{tail}"


def composed_id(slot: str, specs: Sequence[RequestSpec]) -> str:
    """``c-a04-pay_after_decline-aug.balance``: the slot, then each request's step in order."""
    return f"c-{slot.lower()}-" + ".".join(spec.step for spec in specs)


def task_id(slot: str, specs: Sequence[RequestSpec]) -> str:
    return single_id(slot, specs[0]) if len(specs) == 1 else composed_id(slot, specs)


def parse_task_id(text: str) -> tuple[str, tuple[RequestSpec, ...]]:
    """The account slot and request path a task id encodes; ``ValueError`` when it is not one."""
    prefix, _, rest = text.partition("-")
    if prefix == "s":
        kind, _, tail = rest.partition("-")
        slot, _, variant = tail.partition("-")
        specs: tuple[RequestSpec, ...] = (
            RequestSpec.parse(f"{kind}-{variant}" if variant else kind),
        )
    elif prefix == "c":
        slot, _, path = rest.partition("-")
        specs = tuple(RequestSpec.parse(step) for step in path.split("."))
    else:
        raise ValueError(f"expected a task id starting 's-' or 'c-', got {text!r}")
    if not (len(slot) == 3 and slot[0] == "a" and slot[1:].isdigit()):
        raise ValueError(f"expected an account slot such as 'a04' in {text!r}, got {slot!r}")
    return slot.upper(), specs


# --- singles -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Single:
    slot: str
    spec: RequestSpec

    @property
    def id(self) -> str:
        return single_id(self.slot, self.spec)


def _clashes(a: BuiltRequest, b: BuiltRequest) -> bool:
    """Whether two requests cannot share a call (see ``Builder.extend``)."""
    return (
        a.requirement == b.requirement
        or bool(a.write_tools & b.write_tools)
        or (a.ends_call and b.ends_call)
        or bool(a.write_tools & b.not_called)
        or bool(b.write_tools & a.not_called)
    )


def select_singles(states: Mapping[str, AccountState], count: int = SINGLE_COUNT) -> list[Single]:
    """Choose ``count`` single cases by round robin over the kinds (see the module docstring)."""
    pool: dict[str, list[BuiltRequest]] = {kind: [] for kind in KIND_ORDER}
    for slot in sorted(states):
        for built in candidates(states[slot]):
            pool[built.spec.kind].append(built)
    chosen: list[Single] = []
    on_account: dict[str, list[BuiltRequest]] = {slot: [] for slot in states}
    while len(chosen) < count and any(pool.values()):
        for kind in KIND_ORDER:
            if len(chosen) == count or not pool[kind]:
                continue
            best = min(
                pool[kind],
                key=lambda b: (
                    sum(1 for o in on_account[b.after.slot] if o.spec.kind == b.spec.kind),
                    sum(1 for o in on_account[b.after.slot] if _clashes(o, b)),
                    len(on_account[b.after.slot]),
                    b.after.slot,
                    b.spec.variant,
                ),
            )
            pool[kind].remove(best)
            chosen.append(Single(best.after.slot, best.spec))
            on_account[best.after.slot].append(best)
    if len(chosen) < count:
        raise ValueError(f"only {len(chosen)} single cases are eligible, {count} were asked for")
    return sorted(chosen, key=lambda s: s.id)


# --- composition ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rejection:
    reason: RejectReason
    detail: str


@dataclass(frozen=True, slots=True)
class Path:
    """A call on one account: its requests, each built on the state the earlier ones left."""

    slot: str
    start: AccountState
    steps: tuple[BuiltRequest, ...]

    @property
    def specs(self) -> tuple[RequestSpec, ...]:
        return tuple(step.spec for step in self.steps)

    @property
    def id(self) -> str:
        return task_id(self.slot, self.specs)

    @property
    def end(self) -> AccountState:
        return self.steps[-1].after if self.steps else self.start

    @property
    def requires_transfer(self) -> bool:
        """Whether a request of the call can only be met by handing it to a person."""
        return any(
            step.ends_call
            or step.request.expected_outcome == "transferred"
            or any(c.kind == "called" and c.tool == "transfer_to_human" for c in step.checks)
            for step in self.steps
        )

    def __len__(self) -> int:
        return len(self.steps)


class Builder:
    """Builds requests on states, remembering results (states repeat across paths)."""

    def __init__(self) -> None:
        self._memo: dict[tuple[RequestSpec, tuple[object, ...], int], BuiltRequest | Invalid] = {}

    def build(self, state: AccountState, spec: RequestSpec, index: int) -> BuiltRequest | Invalid:
        key = (spec, state.key, index)
        found = self._memo.get(key)
        if found is None:
            found = build_request(state, spec, index)
            self._memo[key] = found
        return found

    def extend(self, path: Path, spec: RequestSpec) -> BuiltRequest | Rejection:
        """``spec`` appended to ``path`` if the validity rule keeps it (module docstring)."""
        if path.steps and path.steps[-1].ends_call:
            return Rejection("after_transfer", f"{path.steps[-1].spec.kind} ends the call")
        built = self.build(path.end, spec, len(path))
        if isinstance(built, Invalid):
            return Rejection("invalid", built.reason)
        earlier = path.steps
        if any(step.requirement == built.requirement for step in earlier):
            return Rejection("duplicate_requirement", f"{built.requirement} is already asked for")
        used = frozenset().union(*(step.write_tools for step in earlier))
        reused = built.write_tools & used
        if reused:
            return Rejection("write_tool_reused", f"{', '.join(sorted(reused))} already used")
        forbidden = frozenset().union(*(step.not_called for step in earlier))
        if built.write_tools & forbidden or built.not_called & used:
            return Rejection("conflict", "one request forbids a tool another one needs")
        return built

    def path(
        self, slot: str, start: AccountState, specs: Iterable[RequestSpec]
    ) -> Path | Rejection:
        """Build a whole path, or the first rejection on the way."""
        path = Path(slot, start, ())
        for spec in specs:
            step = self.extend(path, spec)
            if isinstance(step, Rejection):
                return step
            path = Path(slot, start, (*path.steps, step))
        return path


@dataclass(slots=True)
class Pool:
    """Every eligible call grown from the single cases, and why the others were rejected."""

    singles: list[Path]
    combinations: list[Path]
    rejections: Counter[RejectReason] = field(default_factory=Counter)

    def by_length(self) -> dict[int, int]:
        counts = Counter(len(p) for p in self.combinations)
        return {n: counts.get(n, 0) for n in range(2, MAX_REQUESTS + 1)}


def compose(
    states: Mapping[str, AccountState],
    singles: Sequence[Single],
    *,
    max_requests: int = MAX_REQUESTS,
    builder: Builder | None = None,
) -> Pool:
    """Grow every single case by the other single cases of its account, depth first."""
    builder = builder or Builder()
    by_account: dict[str, list[RequestSpec]] = {}
    for single in sorted(singles, key=lambda s: s.id):
        by_account.setdefault(single.slot, []).append(single.spec)
    pool = Pool(singles=[], combinations=[])
    for slot, specs in sorted(by_account.items()):
        start = states[slot]
        frontier: list[Path] = []
        for spec in specs:
            first = builder.path(slot, start, (spec,))
            if isinstance(first, Rejection):
                raise ValueError(f"single case {single_id(slot, spec)} is not valid: {first}")
            pool.singles.append(first)
            frontier.append(first)
        for _ in range(max_requests - 1):
            grown: list[Path] = []
            for path in frontier:
                for spec in specs:
                    if spec in path.specs:
                        continue
                    step = builder.extend(path, spec)
                    if isinstance(step, Rejection):
                        pool.rejections[step.reason] += 1
                        continue
                    grown.append(Path(slot, start, (*path.steps, step)))
            pool.combinations.extend(grown)
            frontier = grown
    return pool


# --- tasks -------------------------------------------------------------------------------


def second_factor(state: AccountState, kind: SecondFactorKind) -> SecondFactor:
    """The caller's second factor of ``kind``, as the caller would say it."""
    if kind == "card_last4":
        card = state.good_cards[0] if state.good_cards else state.cards[0]
        return SecondFactor(kind=kind, value=card.last4)
    if kind == "postal_code":
        return SecondFactor(kind=kind, value=state.postal_code)
    total = state.latest_bill.total_cents
    return SecondFactor(kind=kind, value=f"{total // 100}.{total % 100:02d}")


def _opening_line(path: Path) -> str:
    first = path.steps[0].request.says
    more = len(path) - 1
    if more == 0:
        return f"Hi. {first}"
    if more == 1:
        return f"Hi. {first} And I have one other thing after that."
    return f"Hi. {first} I have a couple of other things after that, too."


def to_task(
    path: Path,
    factor: SecondFactorKind,
    *,
    predicted_success: float | None = None,
) -> Task:
    """The task file entry for a built path."""
    start = path.start
    facts = []
    seen: set[str] = set()
    for step in path.steps:
        for fact in step.private_facts:
            if fact.key not in seen:
                seen.add(fact.key)
                facts.append(fact)
    parent = None
    if len(path) == 2:
        parent = single_id(path.slot, path.specs[0])
    elif len(path) > 2:
        parent = composed_id(path.slot, path.specs[:-1])
    return Task(
        task_id=path.id,
        caller=CallerBrief(
            account_number=start.account_number,
            full_name=start.full_name,
            second_factor=second_factor(start, factor),
            opening_line=_opening_line(path),
            private_facts=tuple(facts),
        ),
        requests=tuple(step.request for step in path.steps),
        expected_changes=tuple(c for step in path.steps for c in step.changes),
        checks=tuple(c for step in path.steps for c in step.checks),
        meta=TaskMeta(
            request_kinds=tuple(step.spec.kind for step in path.steps),
            request_count=len(path),
            account_slot=path.slot,
            source="single" if len(path) == 1 else "composed",
            parent=parent,
            predicted_success=predicted_success,
        ),
    )
