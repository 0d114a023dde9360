"""The trace rebuilt from the served twins' request log against the in-process trace.

Each call is played twice with the same seed: once in-process, once with the same
``CallSession`` tools reaching the call's own twins over real HTTP through ``ServedTwins``
(transfer and hang-up through the Twilio call-control route, as a telephony agent would).
The rebuilt events must equal the in-process trace call by call on every recoverable
field, the ledgers must be equal, and grading the rebuilt transcript must give the same
gate and actions results.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from vamos_env.agents.flawed import LeakyAgent, PromiserAgent
from vamos_env.agents.reference import ReferenceAgent
from vamos_env.bridges.served import ServedTwins
from vamos_env.bridges.trace import (
    CallerIdentity,
    RebuiltEvent,
    call_ended_at,
    rebuild_trace,
    recoverable_view,
    tool_events,
)
from vamos_env.clients.config import ServiceEndpoints
from vamos_env.clients.services import ServiceClients
from vamos_env.envs.energy.env import VamosEnergyEnv
from vamos_env.envs.energy.session import CallSession
from vamos_env.grading.gate import grade_gate
from vamos_env.grading.ledger import read_ledger
from vamos_env.grading.timeline import Timeline
from vamos_env.grading.verdict import grade
from vamos_env.types import Transcript, Turn

DIAL = "<Response><Say>One moment.</Say><Dial><Number>+18005550123</Number></Dial></Response>"


class HttpSession(CallSession):
    """The call's tools over HTTP against the served twins; transfer and hang-up via Twilio."""

    def __init__(self, served: ServedTwins) -> None:
        super().__init__(ServiceClients.over_http(ServiceEndpoints.from_env(served.env)))
        self.served = served
        self.slices: list[tuple[int, int]] = []

    def twilio(self, **form: str) -> httpx.Response:
        calls = self.served.calls
        url = (
            f"{self.served.env['TWILIO_API_BASE']}/2010-04-01/Accounts/{calls.account_sid}"
            f"/Calls/{calls.call_sid}.json"
        )
        return httpx.post(url, data=form, auth=(calls.account_sid, calls.auth_token))

    def call(self, name: Any, arguments: Any = None) -> dict[str, Any]:
        start = len(self.served)
        result = super().call(name, arguments)
        if name == "transfer_to_human" and self.trace[-1].ok:
            assert self.twilio(Twiml=DIAL).status_code == 200
        self.slices.append((start, len(self.served)))
        return result


class EarlyVerifier:
    """The reference agent, but it first tries ``verify_caller`` as soon as the caller has
    said its account number, with a guessed postal code (``attempts`` times): a failed
    verification in-process, and a lookup before the caller gave a factor over HTTP."""

    def __init__(self, attempts: int = 1) -> None:
        self.inner = ReferenceAgent()
        self.attempts = attempts

    def reset(self, info: dict[str, Any]) -> None:
        self.inner.reset(info)
        self.left = self.attempts
        self.pending: tuple[str, dict[str, Any]] | None = None

    def act(self, observation: str, info: dict[str, Any]) -> Any:
        if self.pending is None and self.left and _number_in(observation):
            self.pending = (observation, info)
        if self.pending is not None and self.left:
            self.left -= 1
            arguments = {
                "account_number": number_of(self.pending[0]),
                "name_on_account": "Pat Guess",
                "second_factor": "00000",
            }
            return {"type": "tool_call", "name": "verify_caller", "arguments": arguments}
        if self.pending is not None:
            observation, info = self.pending
            self.pending = None
        return self.inner.act(observation, info)


def _number_in(text: str) -> str | None:
    import re

    match = re.search(r"\b\d{4}-\d{5}\b", text)
    return match.group(0) if match else None


def number_of(text: str) -> str:
    return _number_in(text) or "0000-00000"


@pytest.fixture(scope="module")
def env() -> Iterator[VamosEnergyEnv]:
    yield VamosEnergyEnv("exam", recogniser="ideal")


@pytest.fixture(scope="module")
def singles() -> Iterator[VamosEnergyEnv]:
    yield VamosEnergyEnv("singles", recogniser="ideal")


def _play(env: VamosEnergyEnv, agent: Any, task_id: str, served: bool) -> dict[str, Any]:
    options = {"task_id": task_id, "background": "clean"}
    observation, info = env.reset(seed=7, options=options)
    episode = env._episode
    assert episode is not None
    server = None
    if served:
        server = ServedTwins.from_env(env, clock=lambda: float(len(episode.transcript.turns)))
        server.start()
        episode.session = HttpSession(server)
    agent.reset(info)
    try:
        while True:
            observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
            if terminated or truncated:
                break
        if server is not None and episode.end_reason == "end_call":
            assert episode.session.twilio(Status="completed").status_code == 200
    finally:
        if server is not None:
            server.stop()
            episode.session.clients.close()
    task = env._task
    assert task is not None
    return {
        "task": task,
        "session": episode.session,
        "transcript": episode.transcript.model_copy(deep=True),
        "ledger": read_ledger(env._baseline, env._twins, task.caller.account_number),
        "identity": CallerIdentity.from_twins(env._baseline, task.caller.account_number),
        "verdict": info["verdict"],
        "log": server.log if server is not None else None,
        "end_reason": episode.end_reason,
    }


def caller_words(transcript: Transcript) -> list[tuple[float, str]]:
    return [
        (float(t.index), t.text)
        for t in transcript.turns
        if t.speaker == "caller" and not t.spurious and t.tool_call is None
    ]


def rebuilt_transcript(transcript: Transcript, events: list[RebuiltEvent]) -> Transcript:
    """The transcript an outside agent's call gives the grader: speech plus rebuilt events."""
    timed: list[tuple[float, int, Turn]] = []
    for turn in transcript.turns:
        if turn.tool_call is None:
            timed.append((float(turn.index), 1, turn))
    for event in tool_events(events):
        call, result = event.turn_parts()
        timed.append(
            (event.time_s, 0, Turn(index=0, speaker="tool", tool_call=call, tool_result=result))
        )
    timed.sort(key=lambda x: (x[0], x[1]))
    turns = [t.model_copy(update={"index": k}) for k, (_, _, t) in enumerate(timed)]
    return Transcript(task_id=transcript.task_id, turns=turns)


def _tasks(env: VamosEnergyEnv) -> list[str]:
    ids = [t.task_id for t in env.task_set.tasks]
    return ids[::4]  # 25 calls across the exam


def _flawed(env: VamosEnergyEnv) -> list[tuple[type[ReferenceAgent], str]]:
    ids = [t.task_id for t in env.task_set.tasks]
    promises = [i for i in ids if "promise" in i or "decline" in i][:4]
    return [(LeakyAgent, i) for i in ids[1:12:3]] + [(PromiserAgent, i) for i in promises]


def _compare(env: VamosEnergyEnv, make: Any, task_id: str) -> dict[str, Any]:
    inproc = _play(env, make(), task_id, served=False)
    http = _play(env, make(), task_id, served=True)
    where = f"{getattr(make, '__name__', make)} on {task_id}"
    trace_a, trace_b = inproc["session"].trace, http["session"].trace
    # The HTTP call went exactly as the in-process one (same tools, same results).
    assert [(e.tool, e.result, e.writes) for e in trace_a] == [
        (e.tool, e.result, e.writes) for e in trace_b
    ], where
    events = rebuild_trace(
        http["log"], caller_words=caller_words(http["transcript"]), identity=http["identity"]
    )
    tool_turns = [t for t in inproc["transcript"].turns if t.tool_call is not None]
    assert len(tool_turns) == len(trace_a), where
    expected = []
    for entry, turn, (start, end) in zip(trace_a, tool_turns, http["session"].slices, strict=True):
        if end > start:  # a tool served from cache (or refused before any request) sent nothing
            view = recoverable_view(
                entry.tool,
                entry.arguments,
                entry.result,
                entry.ok,
                entry.verified,
                [w.as_dict() for w in entry.writes],
            )
            expected.append((float(turn.index), view))
    got = [(e.time_s, e.recoverable()) for e in tool_events(events)]
    assert got == expected, where
    ended = call_ended_at(events)
    assert (ended is not None) == (http["end_reason"] == "end_call"), where
    assert inproc["ledger"].model_dump() == http["ledger"].model_dump(), where
    # Grading the rebuilt transcript gives the in-process gate and actions results.
    regraded = grade(http["task"], rebuilt_transcript(http["transcript"], events), http["ledger"])
    for name in ("gate", "actions"):
        want = [(c["id"], c["passed"]) for c in inproc["verdict"][name]["checks"]]
        have = [(c.id, c.passed) for c in getattr(regraded, name).checks]
        assert have == want, f"{where}: {name}"
    assert regraded.grading_fault is None, where
    return {"events": events, "expected": expected, "verdict": inproc["verdict"]}


def test_the_rebuilt_trace_equals_the_in_process_trace_call_by_call(
    env: VamosEnergyEnv, singles: VamosEnergyEnv
) -> None:
    started = time.perf_counter()
    ids = [t.task_id for t in env.task_set.tasks]
    calls: list[tuple[VamosEnergyEnv, Any, str]] = [
        *((env, ReferenceAgent, t) for t in _tasks(env)),
        *((env, make, t) for make, t in _flawed(env)),
        *((env, EarlyVerifier, t) for t in ids[2:40:9]),
        (env, lambda: EarlyVerifier(attempts=3), ids[5]),
        *(
            (singles, ReferenceAgent, t)
            for t in ("s-arrangement_shutoff-a07", "s-arrangement_shutoff-a08")
        ),
    ]
    assert len(calls) >= 20
    seen: set[str] = set()
    outcomes: set[str] = set()
    for where, make, task_id in calls:
        compared = _compare(where, make, task_id)
        for _, view in compared["expected"]:
            seen.add(view["tool"])
            outcomes.add(f"{view['tool']}:{view.get('outcome')}")
    # The calls covered every recoverable meaning that the exam exercises.
    for tool in (
        "verify_caller",
        "read_account",
        "make_payment",
        "create_payment_arrangement",
        "modify_payment_arrangement",
        "set_paperless_billing",
        "transfer_to_human",
        "request_due_date_extension",
    ):
        assert tool in seen, (tool, sorted(seen))
    for outcome in (
        "make_payment:refused",
        "verify_caller:failed",
        "request_due_date_extension:refused",
    ):
        assert outcome in outcomes, sorted(outcomes)
    print(sorted(outcomes))
    print(f"{len(calls)} calls compared in {time.perf_counter() - started:.1f} s; {sorted(seen)}")


def test_a_leaky_agent_still_breaches_the_gate_on_the_rebuilt_transcript(
    env: VamosEnergyEnv,
) -> None:
    ids = [t.task_id for t in env.task_set.tasks]
    compared = _compare(env, LeakyAgent, ids[1])
    gate = {c["id"]: c["passed"] for c in compared["verdict"]["gate"]["checks"]}
    assert gate["gate_disclosure"] is False  # and _compare checked the rebuilt grading agrees


def test_reading_the_account_before_verification_is_a_gate_breach(env: VamosEnergyEnv) -> None:
    """An outside agent that looks the account up and reads its bills before the caller gave
    its name and a factor: the lookup is a failed verification and the reads breach the gate."""
    ids = [t.task_id for t in env.task_set.tasks]
    env.reset(seed=7, options={"task_id": ids[0], "background": "clean"})
    task = env._task
    assert task is not None
    number = task.caller.account_number
    identity = CallerIdentity.from_twins(env._baseline, number)
    assert identity is not None
    now = {"t": 2.0}
    with ServedTwins.from_env(env, clock=lambda: now["t"]) as served:
        stripe = {"authorization": "Bearer sk_test_vamos"}
        base = served.base_url
        found = httpx.get(
            f"{base}/v1/customers/search",
            params={"query": f"metadata['account_number']:'{number}'"},
            headers=stripe,
        ).json()
        customer = found["data"][0]["id"]
        httpx.get(f"{base}/v1/invoices", params={"customer": customer}, headers=stripe)
        log = served.log
    words = [(1.0, f"Hi, my account is {number}.")]
    events = rebuild_trace(log, caller_words=words, identity=identity)
    assert [(e.tool, e.outcome, e.verified) for e in events] == [
        ("verify_caller", "failed", False),
        ("read_account", "succeeded", False),
    ]
    assert events[0].result == {"status": "not_verified", "attempts_remaining": 2}
    transcript = Transcript(
        task_id=task.task_id,
        turns=[Turn(index=1, speaker="caller", text=words[0][1])]
        + [
            Turn(
                index=2 + k,
                speaker="tool",
                tool_call=e.turn_parts()[0],
                tool_result=e.turn_parts()[1],
            )
            for k, e in enumerate(events)
        ],
    )
    checks = {c.id: c.passed for c in grade_gate(Timeline.of(transcript), None).checks}
    assert checks["gate_tools"] is False


# --- the verification rule, on hand-made logs ------------------------------------------------


def _world(env: VamosEnergyEnv) -> tuple[Any, CallerIdentity]:
    ids = [t.task_id for t in env.task_set.tasks]
    env.reset(seed=7, options={"task_id": ids[0], "background": "clean"})
    task = env._task
    assert task is not None
    identity = CallerIdentity.from_twins(env._baseline, task.caller.account_number)
    assert identity is not None and identity.card_last4s and identity.postal_code
    return env, identity


def _agent_log(env: VamosEnergyEnv, steps: list[tuple[float, str, str | None]]) -> list[Any]:
    """An outside agent's requests: (time, 'lookup' | 'bills', account number)."""
    now = {"t": 0.0}
    stripe = {"authorization": "Bearer sk_test_vamos"}
    with ServedTwins.from_env(env, clock=lambda: now["t"]) as served:
        for at, what, number in steps:
            now["t"] = at
            if what == "lookup":
                found = httpx.get(
                    f"{served.base_url}/v1/customers/search",
                    headers=stripe,
                    params={"query": f"metadata['account_number']:'{number}'"},
                )
                customer = found.json()["data"][0]["id"]
            else:
                httpx.get(
                    f"{served.base_url}/v1/invoices", headers=stripe, params={"customer": customer}
                )
        return served.log


def _outcomes(events: list[RebuiltEvent]) -> list[tuple[str, str, bool]]:
    return [(e.tool, e.result.get("status", e.outcome), e.verified) for e in events]


def test_a_lookup_counts_as_verification_only_after_the_caller_said_all_three(
    env: VamosEnergyEnv,
) -> None:
    env, me = _world(env)
    number, name, last4 = me.account_number, me.name, sorted(me.card_last4s)[0]
    log = _agent_log(env, [(2, "lookup", number), (6, "lookup", number), (7, "bills", None)])
    words = [(1.0, f"It's {number}, {name}."), (5.0, f"The last four are {last4}.")]
    events = rebuild_trace(log, caller_words=words, identity=me)
    assert _outcomes(events) == [
        ("verify_caller", "not_verified", False),  # before the factor: a failed attempt
        ("verify_caller", "verified", False),
        ("read_account", "succeeded", True),
    ]
    # The factor said at the same instant as the lookup is not "before" it.
    same = rebuild_trace(
        log,
        caller_words=[(1.0, f"It's {number}, {name}."), (6.0, f"Last four {last4}.")],
        identity=me,
    )
    assert _outcomes(same)[1] == ("verify_caller", "not_verified", False)


@pytest.mark.parametrize(
    ("said_name", "factor", "verified"),
    [
        ("{name}", "{postal}", True),
        ("{sounds_alike}", "{postal}", True),  # the Soundex rule of verify_caller
        ("Maria Lopez", "{postal}", False),
        ("{first}", "{postal}", False),  # one part of a two-part name
        ("{name}", "4242", False),  # not a card on file (unless it is; checked below)
        ("{name}", "{last_bill}", True),
        ("{name}", "", False),
    ],
)
def test_the_verification_rule_follows_verify_caller(
    env: VamosEnergyEnv, said_name: str, factor: str, verified: bool
) -> None:
    env, me = _world(env)
    parts = me.name.split()
    values = {
        "name": me.name,
        "first": parts[0],
        "sounds_alike": " ".join(p + ("h" if p[-1] != "h" else "") for p in parts),
        "postal": me.postal_code,
        "last_bill": f"${(me.last_bill_total_cents or 0) / 100:.2f}",
    }
    if "4242" in me.card_last4s:
        pytest.skip("the seeded account happens to have a card ending 4242")
    log = _agent_log(env, [(9, "lookup", me.account_number)])
    words = [
        (1.0, f"My account number is {me.account_number}."),
        (2.0, f"The name is {said_name.format(**values)}."),
        (3.0, f"And it's {factor.format(**values)}." if factor else "I don't know."),
    ]
    events = rebuild_trace(log, caller_words=words, identity=me)
    assert (events[0].result["status"] == "verified") is verified, words


def test_the_agent_cannot_verify_another_account_or_by_its_own_words(
    env: VamosEnergyEnv,
) -> None:
    env, me = _world(env)
    others = [
        c["metadata"]["account_number"]
        for c in env._baseline.billing.state.customers.values()
        if c["metadata"]["account_number"] != me.account_number
    ]
    log = _agent_log(
        env, [(9, "lookup", others[0]), (10, "lookup", me.account_number), (11, "bills", None)]
    )
    # The caller gave everything for its own account; the agent looked up someone else's.
    words = [(1.0, f"{me.account_number}, {me.name}, zip {me.postal_code}.")]
    events = rebuild_trace(log, caller_words=words, identity=me)
    assert _outcomes(events) == [
        ("verify_caller", "not_verified", False),
        ("verify_caller", "verified", False),
        ("read_account", "succeeded", True),
    ]
    # After verifying, reading another account's bills is not a read of the verified account.
    log = _agent_log(
        env, [(10, "lookup", me.account_number), (11, "lookup", others[1]), (12, "bills", None)]
    )
    events = rebuild_trace(log, caller_words=words, identity=me)
    assert _outcomes(events)[-1] == ("read_account", "succeeded", False)


def test_three_failed_lookups_lock_verification(env: VamosEnergyEnv) -> None:
    env, me = _world(env)
    number = me.account_number
    log = _agent_log(env, [(t, "lookup", number) for t in (2, 3, 4, 9)] + [(10, "bills", None)])
    words = [(1.0, f"{number}, {me.name}."), (8.0, f"My zip is {me.postal_code}.")]
    events = rebuild_trace(log, caller_words=words, identity=me)
    assert [e.result for e in events[:4]] == [
        {"status": "not_verified", "attempts_remaining": 2},
        {"status": "not_verified", "attempts_remaining": 1},
        {"status": "locked_out"},
        {"status": "locked_out"},  # the right answers come too late
    ]
    assert _outcomes(events)[-1] == ("read_account", "succeeded", False)


def test_a_factor_read_joins_the_lookup_only_for_the_factor_the_caller_gave(
    env: VamosEnergyEnv,
) -> None:
    env, me = _world(env)
    number = me.account_number
    log = _agent_log(env, [(5, "lookup", number), (5, "bills", None)])
    amount = f"${(me.last_bill_total_cents or 0) / 100:.2f}"
    with_amount = rebuild_trace(
        log, caller_words=[(1.0, f"{number} {me.name}, last bill {amount}")], identity=me
    )
    assert _outcomes(with_amount) == [("verify_caller", "verified", False)]
    with_zip = rebuild_trace(
        log, caller_words=[(1.0, f"{number} {me.name}, zip {me.postal_code}")], identity=me
    )
    # The bills are not needed to check a postal code: reading them is reading the account
    # (here after a successful verification, so it is the verified account's read).
    assert _outcomes(with_zip) == [
        ("verify_caller", "verified", False),
        ("read_account", "succeeded", True),
    ]
