"""One call of an evaluation, from reset to record, for sync and async agents alike.

``Rollout`` holds what a worker process needs: the task set and the run's settings. It
builds the environment (and so the seeded snapshot) once per process and gives every call
its own clone of the services through ``reset``. ``run`` drives a sync agent, ``arun``
an async (LLM-bound) one; each returns a ``CallRecord``. Agents are reused across calls
through ``reset(info)`` (the protocol's promise), at most one per call in flight; one that
faulted is dropped.

Faults, as the published benchmark sorts them:

- the agent raised, or the call ran past its timeout, or the agent's model failed (the
  LLM stacks' ``ModelCallError``: HTTP errors after the SDK's retries, a body that is not
  a completion): an agent fault, a miss. The call is then ended as if the agent hung up
  (``end_call``) so it is still graded on what happened, and the record says why it is a
  miss. Nothing an agent raises can exclude its call;
- the caller deviated from its brief, the grader reported a fault, or the session was
  lost (the environment or the caller's model failed): a benchmark fault, excluded
  whether passed or not. So is a call whose record cannot be serialised whole
  (``storable_line``): it is stored without its transcript, as a ``store_fault``.

A sync agent's timeout is checked between its actions (an ``act`` that never returns
cannot be interrupted in-thread; LLM agents bound their own requests); an async agent's
``aact`` is cancelled when the call's time is up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from vamos_env.channel.parameters import DEFAULT_RECOGNISER, RecogniserProfile
from vamos_env.envs.energy.env import VamosEnergyEnv
from vamos_env.envs.energy.tasks.schema import TaskSet
from vamos_env.grading.llm import Price, price_of
from vamos_env.grading.models import Verdict
from vamos_env.runner.plan import CallSpec, StackRef, make_stack_agent
from vamos_env.runner.records import CallRecord, CallUsage, Exclusion, Status, TraceEntry
from vamos_env.storable import storable_text
from vamos_env.types import Transcript

END_CALL: dict[str, Any] = {"type": "end_call"}
# Text callers (a chat model answers each turn) and, in duplex calls only, model callers
# (a speech-to-speech session speaks into the call: ``duplex/model_caller.py``).
TextCallerKind = Literal["scripted", "openai", "gemini", "local"]
CallerKind = Literal[TextCallerKind, "realtime", "gemini-live"]
MODEL_CALLERS = ("realtime", "gemini-live")


@dataclass(frozen=True)
class RolloutSettings:
    """The run's settings every call shares (picklable: it travels to Ray workers)."""

    timeout_s: float = 900.0
    caller: CallerKind = "scripted"
    max_agent_turns: int = 60
    level_db: float | None = None
    channel: Literal["text", "audio"] = "text"
    prices: Mapping[str, Price] | None = None  # None: the shipped price table
    recogniser: RecogniserProfile = DEFAULT_RECOGNISER
    mode: Literal["text", "duplex"] = "text"  # duplex: full-duplex audio (docs/duplex.md)
    line: str = "wideband"  # the duplex line condition
    grading_ear: str = "whisper-tiny.en"  # the duplex grader's recogniser


@dataclass
class _Call:
    """What one call gathers while it runs."""

    spec: CallSpec
    started: float = field(default_factory=time.perf_counter)
    latencies: list[float] = field(default_factory=list)
    agent_fault: str | None = None
    lost: str | None = None
    final: dict[str, Any] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    pool_key: str = ""


class Rollout:
    """Runs calls of one task set in this process."""

    def __init__(self, task_set: TaskSet, settings: RolloutSettings) -> None:
        self.task_set = task_set
        self.settings = settings
        self._env: VamosEnergyEnv | None = None
        self._duplex_env: Any = None
        self._idle: dict[str, list[Any]] = {}  # agents between calls, per stack
        self.agents_built = 0
        self.worker = f"{socket.gethostname()}:{os.getpid()}"

    def new_env(self) -> VamosEnergyEnv:
        # The seeded snapshot is built once per process (cached); each env only clones it.
        caller = self.settings.caller
        if caller in MODEL_CALLERS:  # preflight refuses it; a direct caller of this may not
            raise ValueError(f"caller {caller!r}: a model session speaks; use duplex calls")
        return VamosEnergyEnv(
            self.task_set,
            caller=cast(TextCallerKind, caller),
            channel=self.settings.channel,
            max_agent_turns=self.settings.max_agent_turns,
            recogniser=self.settings.recogniser,
        )

    @property
    def env(self) -> VamosEnergyEnv:
        """The process's environment for sync calls (one call at a time)."""
        if self._env is None:
            self._env = self.new_env()
        return self._env

    def _options(self, spec: CallSpec) -> dict[str, Any]:
        options: dict[str, Any] = {
            "task_id": spec.task_id,
            "repeat": spec.repeat,
            "persona": spec.persona,
            "background": spec.background,
        }
        if self.settings.level_db is not None:
            options["level_db"] = self.settings.level_db
        return options

    # -- sync ------------------------------------------------------------------------------
    def run(self, spec: CallSpec, stack: StackRef | Callable[[], Any]) -> CallRecord:
        """One call with a sync agent (``reset``/``act``), or a duplex call."""
        if self.settings.mode == "duplex":
            return self._run_duplex(spec, stack)
        env = self.env
        call = _Call(spec)
        deadline = call.started + self.settings.timeout_s
        try:
            observation, call.info = env.reset(seed=spec.seed, options=self._options(spec))
        except Exception as exc:
            call.lost = f"reset failed: {type(exc).__name__}: {exc}"
            return self._record(call, None)
        agent: Any = None
        try:
            agent = self._acquire(call, stack)
            agent.reset(call.info)
        except Exception as exc:
            _fault(call, exc, "agent failed to start")
        info = call.info
        while call.agent_fault is None and call.lost is None:
            if time.perf_counter() > deadline:
                call.agent_fault = f"timeout: the call ran past {self.settings.timeout_s:g} s"
                break
            began = time.perf_counter()
            try:
                action = agent.act(observation, info)
            except Exception as exc:
                _fault(call, exc, "agent raised")
                break
            call.latencies.append(time.perf_counter() - began)
            if not self._step(env, call, action):
                return self._record(call, agent)
            if call.final is not None:
                return self._record(call, agent)
            observation, info = call.info["observation"], call.info
        # A fault: end the call where it stands so that it is still graded.
        self._step(env, call, END_CALL)
        return self._record(call, agent)

    def _step(self, env: VamosEnergyEnv, call: _Call, action: Any) -> bool:
        """Step the env; False when the environment itself failed (the session is lost)."""
        try:
            observation, _reward, terminated, truncated, info = env.step(action)
        except Exception as exc:
            call.lost = call.lost or f"step failed: {type(exc).__name__}: {exc}"
            return False
        info = dict(info)
        info["observation"] = observation
        call.info = info
        if terminated or truncated:
            call.final = info
        return True

    # -- async -----------------------------------------------------------------------------
    async def arun(self, spec: CallSpec, stack: StackRef | Callable[[], Any]) -> CallRecord:
        """One call with an async agent (``areset``/``aact``), sharing the event loop.

        Every async call has its own environment: calls interleave at the agent's awaits.
        A sync-only agent is run in a thread, and so is a duplex call.
        """
        if self.settings.mode == "duplex":
            return await asyncio.to_thread(self._run_duplex, spec, stack)
        env = self.new_env()
        call = _Call(spec)
        deadline = call.started + self.settings.timeout_s
        try:
            observation, call.info = env.reset(seed=spec.seed, options=self._options(spec))
        except Exception as exc:
            call.lost = f"reset failed: {type(exc).__name__}: {exc}"
            return self._record(call, None)
        agent: Any = None
        try:
            agent = self._acquire(call, stack)
            reset, act = _async_methods(agent)
            await asyncio.wait_for(reset(call.info), max(0.0, deadline - time.perf_counter()))
        except TimeoutError:
            call.agent_fault = f"timeout: the call ran past {self.settings.timeout_s:g} s"
        except Exception as exc:
            _fault(call, exc, "agent failed to start")
        info = call.info
        while call.agent_fault is None and call.lost is None:
            remaining = deadline - time.perf_counter()
            began = time.perf_counter()
            try:
                if remaining <= 0:
                    raise TimeoutError
                action = await asyncio.wait_for(act(observation, info), remaining)
            except TimeoutError:
                call.agent_fault = f"timeout: the call ran past {self.settings.timeout_s:g} s"
                break
            except Exception as exc:
                _fault(call, exc, "agent raised")
                break
            call.latencies.append(time.perf_counter() - began)
            if not self._step(env, call, action):
                return self._record(call, agent)
            if call.final is not None:
                return self._record(call, agent)
            observation, info = call.info["observation"], call.info
        self._step(env, call, END_CALL)
        return self._record(call, agent)

    # -- duplex ----------------------------------------------------------------------------
    def _run_duplex(self, spec: CallSpec, stack: StackRef | Callable[[], Any]) -> CallRecord:
        """One full-duplex audio call with a frame-level agent (``reset``/``step``)."""
        from vamos_env.duplex.env import VamosEnergyDuplexEnv
        from vamos_env.duplex.run import play

        call = _Call(spec)
        if self._duplex_env is None:
            caller = self.settings.caller
            self._duplex_env = VamosEnergyDuplexEnv(
                self.task_set,
                line=self.settings.line,
                grading_ear=self.settings.grading_ear,
                frames_per_step=1,
                caller=caller if caller in MODEL_CALLERS else "scripted",
            )
        agent: Any = None
        try:
            agent = self._acquire(call, stack)
        except Exception as exc:
            _fault(call, exc, "agent failed to start")
            return self._record(call, None)
        try:
            played = play(
                self._duplex_env,
                agent,
                seed=spec.seed,
                options=self._options(spec),
                timeout_s=self.settings.timeout_s,
            )
        except Exception as exc:
            call.lost = f"duplex call failed: {type(exc).__name__}: {exc}"
            return self._record(call, agent)
        call.agent_fault = played.agent_fault
        call.final, call.info = played.final, played.info
        record = self._record(call, agent)
        duplex = dict(played.final.get("duplex") or {})
        duplex["compute"] = played.compute
        duplex["agent_log"] = played.agent_log
        duplex["wall_s"] = round(played.wall_s, 3)
        duplex["late_s"] = round(played.late_s, 3)  # how far a paced call fell behind
        return record.model_copy(update={"duplex": duplex})

    # -- agents ----------------------------------------------------------------------------
    def _acquire(self, call: _Call, stack: StackRef | Callable[[], Any]) -> Any:
        """An idle agent of the stack, or a new one. Agents are reused across calls through
        ``reset(info)``, as the protocol allows: building one can be costly (an LLM
        client's connection pool and TLS context), and a process needs at most as many as
        it has calls in flight."""
        call.pool_key = stack.name if isinstance(stack, StackRef) else f"callable:{id(stack)}"
        with contextlib.suppress(RuntimeError):  # no running loop: a sync call
            # An async agent's client belongs to the event loop it was first used on.
            call.pool_key += f"@loop{id(asyncio.get_running_loop())}"
        idle = self._idle.get(call.pool_key)
        if idle:
            return idle.pop()
        self.agents_built += 1
        return make_stack_agent(stack) if isinstance(stack, StackRef) else stack()

    def _release(self, call: _Call, agent: Any) -> None:
        # An agent that raised or lost its platform may be in any state: never reuse it.
        if agent is not None and call.agent_fault is None and call.lost is None:
            self._idle.setdefault(call.pool_key, []).append(agent)

    # -- the record ------------------------------------------------------------------------
    def _record(self, call: _Call, agent: Any) -> CallRecord:
        self._release(call, agent)
        spec = call.spec
        final = call.final or {}
        exclusions: list[Exclusion] = []
        if call.lost is not None:
            exclusions.append(Exclusion(kind="lost_session", detail=storable_text(call.lost)[0]))
        deviations = list(final.get("deviations") or [])
        for deviation in deviations:
            exclusions.append(
                Exclusion(
                    kind="caller_deviation",
                    detail=f"{deviation.get('kind')}: {deviation.get('detail')}",
                )
            )
        verdict: Verdict | None = None
        if "verdict" in final:
            verdict = Verdict.model_validate(final["verdict"])
            verdict = verdict.model_copy(update={"caller_satisfied": final.get("caller_goal_met")})
            if verdict.grading_fault is not None:
                exclusions.append(Exclusion(kind="grading_fault", detail=verdict.grading_fault))
        transcript = (
            Transcript.model_validate(final["transcript"]) if "transcript" in final else None
        )
        status: Status
        if exclusions:
            status = "excluded"
        elif call.agent_fault is not None or verdict is None:
            status = "fail"
        else:
            status = "pass" if verdict.passed else "fail"
        usage = _usage_of(agent)
        return CallRecord(
            key=spec.key,
            task_id=spec.task_id,
            stack=spec.stack,
            repeat=spec.repeat,
            trial_id=spec.trial_id,
            seed=spec.seed,
            persona=spec.persona,
            background=spec.background,
            request_count=int(call.info.get("request_count") or self._request_count(spec)),
            status=status,
            exclusions=exclusions,
            agent_fault=call.agent_fault,
            end_reason=final.get("end_reason"),
            caller_satisfied=final.get("caller_goal_met"),
            transferred=_transferred(transcript),
            agent_turns=int(final.get("turn") or 0),
            malformed_actions=int(final.get("malformed_actions") or 0),
            replaced_code_points=int(final.get("replaced_code_points") or 0),
            transcript=transcript,
            trace=_trace(transcript),
            verdict=verdict,
            deviations=deviations,
            response_latencies_s=[round(x, 6) for x in call.latencies],
            usage=usage,
            cost_usd=_cost(usage, self.settings.prices),
            wall_s=round(time.perf_counter() - call.started, 6),
            worker=self.worker,
        )

    def failed(self, spec: CallSpec, exc: BaseException) -> CallRecord:
        """The record of a call the runner itself failed to run or record (a bug of ours):
        a lost session, excluded and listed, never the end of the run."""
        detail = storable_text(f"the runner failed: {type(exc).__name__}: {exc!s:.500}")[0]
        return CallRecord(
            key=spec.key,
            task_id=spec.task_id,
            stack=spec.stack,
            repeat=spec.repeat,
            trial_id=spec.trial_id,
            seed=spec.seed,
            persona=spec.persona,
            background=spec.background,
            request_count=self._request_count(spec),
            status="excluded",
            exclusions=[Exclusion(kind="lost_session", detail=detail)],
            worker=self.worker,
        )

    def _request_count(self, spec: CallSpec) -> int:
        for task in self.task_set.tasks:
            if task.task_id == spec.task_id:
                return len(task.requests)
        return 0


def _fault(call: _Call, exc: BaseException, what: str) -> None:
    """An exception from the agent is always the agent's fault, a miss: its model failing
    (``ModelCallError``) included, as in the published benchmark. Letting an agent mark
    its own failures as platform faults would let it take failing calls out of the
    denominator."""
    try:
        message = str(exc)
    except Exception:  # an exception whose __str__ raises
        message = "(unprintable)"
    described = storable_text(f"{type(exc).__name__}: {message}")[0][:2000]
    if type(exc).__name__ == "ModelCallError":
        call.agent_fault = f"the agent's model failed: {described}"
    else:
        call.agent_fault = f"{what} {described}"


def storable_line(record: CallRecord) -> tuple[str, str]:
    """``(status, JSON line)`` of a record. A record that cannot be serialised (a bug that
    let unstorable data past the boundary) becomes that call's ``store_fault``: stored
    without its transcript, trace and verdict, excluded, listed, retryable. Never raises."""
    try:
        line = record.model_dump_json()
        line.encode("utf-8")
        return record.status, line
    except Exception as exc:
        detail = f"the call's record could not be stored whole ({type(exc).__name__}: {exc!s:.300})"
    fallback = record.model_copy(
        update={
            "status": "excluded",
            "exclusions": [
                *[e for e in record.exclusions if e.kind != "store_fault"],
                Exclusion(kind="store_fault", detail=ascii(detail)[1:-1]),
            ],
            "transcript": None,
            "trace": [],
            "verdict": None,
            "deviations": [],
            "agent_fault": ascii(record.agent_fault)[1:-1] if record.agent_fault else None,
        }
    )
    try:
        return "excluded", fallback.model_dump_json()
    except Exception:
        bare = CallRecord(
            key=ascii(record.key)[1:-1],
            task_id=ascii(record.task_id)[1:-1],
            stack=ascii(record.stack)[1:-1],
            repeat=record.repeat,
            trial_id=ascii(record.trial_id)[1:-1],
            seed=record.seed,
            persona=record.persona,
            background=record.background,
            request_count=record.request_count,
            status="excluded",
            exclusions=[Exclusion(kind="store_fault", detail=ascii(detail)[1:-1])],
            worker=record.worker,
        )
        return "excluded", bare.model_dump_json()


def _async_methods(
    agent: Any,
) -> tuple[
    Callable[[Mapping[str, Any]], Awaitable[None]],
    Callable[[str, Mapping[str, Any]], Awaitable[Any]],
]:
    if hasattr(agent, "aact"):
        return agent.areset, agent.aact

    async def reset(info: Mapping[str, Any]) -> None:
        await asyncio.to_thread(agent.reset, info)

    async def act(observation: str, info: Mapping[str, Any]) -> Any:
        return await asyncio.to_thread(agent.act, observation, info)

    return reset, act


def _usage_of(agent: Any) -> CallUsage:
    usage = getattr(agent, "usage", None)
    model = getattr(agent, "model", None)
    if usage is None:
        return CallUsage(model=model if isinstance(model, str) else None)
    return CallUsage(
        model=model if isinstance(model, str) else None,
        requests=int(getattr(usage, "requests", 0) or 0),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        audio_prompt_tokens=int(getattr(usage, "audio_prompt_tokens", 0) or 0),
        audio_completion_tokens=int(getattr(usage, "audio_completion_tokens", 0) or 0),
    )


def _cost(usage: CallUsage, prices: Mapping[str, Price] | None) -> float | None:
    if usage.prompt_tokens == 0 and usage.completion_tokens == 0:
        return 0.0
    if usage.model is None:
        return None
    price = price_of(usage.model, dict(prices) if prices is not None else None)
    return None if price is None else price.usage_cost(usage)


def _transferred(transcript: Transcript | None) -> bool:
    if transcript is None:
        return False
    return any(
        t.tool_call is not None
        and t.tool_call.name == "transfer_to_human"
        and t.tool_result is not None
        and t.tool_result.ok
        for t in transcript.turns
    )


def _trace(transcript: Transcript | None) -> list[TraceEntry]:
    if transcript is None:
        return []
    entries = []
    for turn in transcript.tool_turns():
        assert turn.tool_call is not None
        result = turn.tool_result
        error = result.result.get("error") if result is not None else None
        entries.append(
            TraceEntry(
                turn=turn.index,
                name=turn.tool_call.name,
                arguments=turn.tool_call.arguments,
                ok=bool(result.ok) if result is not None else False,
                error=error if isinstance(error, str) else (json.dumps(error) if error else None),
                writes=list(result.writes) if result is not None else [],
            )
        )
    return entries
