"""Where calls run: in this process (``LocalBackend``) or on Ray (``RayBackend``).

Both take the calls still to run and hand finished records, as ``(key, status, json
line)``, to a sink (the driver's store writer and progress line); only the driver writes.

Ray, two shapes for two kinds of stack:

- **Offline stacks are CPU-bound and fast** (milliseconds a call): calls go to Ray
  tasks in batches, so the per-task overhead is paid once per batch, not once per
  call. Each worker process builds the seeded snapshot once and clones it per call. At
  most ``max_concurrency`` batches are in flight (one call at a time in each).
- **LLM-bound stacks wait on a model**: calls go to a few async actors, each running many
  calls on one event loop, so 200 calls in flight need a couple of processes, not 200.
  The driver keeps at most ``max_concurrency`` calls in flight across the actors.

The same code runs on a laptop (a local Ray started here) and on a cluster
(``address``): every call builds its own services from the snapshot, so nothing is
shared between workers. On a cluster every node needs vamos-env (and any stack code
named by path) installed at the same place.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vamos_env.envs.energy.tasks.schema import TaskSet
from vamos_env.runner.plan import CallSpec, StackRef
from vamos_env.runner.rollout import Rollout, RolloutSettings, storable_line

Finished = tuple[str, str, str]  # key, status, the record as one JSON line
Sink = Callable[[list[Finished]], None]
CALLS_PER_ACTOR = 100  # async calls one actor process keeps in flight before another is added
# Settings the LLM stacks and callers read from the environment, passed on to the workers
# (a local Ray's workers see the variables of the moment Ray started, not later ones).
FORWARDED_PREFIXES = ("OPENAI_", "GOOGLE_", "GEMINI_", "VAMOS_")


def forwarded_env() -> dict[str, str]:
    """The driver's variables a worker needs: model endpoints and keys."""
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)}


def _finished(rollout: Rollout, spec: CallSpec, stack: StackRef) -> Finished:
    # One call's failure, even the runner's own, is that call's record, never the run's.
    try:
        record = rollout.run(spec, stack)
    except Exception as exc:
        record = rollout.failed(spec, exc)
    status, line = storable_line(record)
    return spec.key, status, line


def resident_bytes() -> int:
    """This process's resident memory (Linux ``/proc``; 0 where it cannot be read)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


@dataclass
class AsyncStats:
    """How the async calls went: the most in flight at once, and memory per live call."""

    peak_in_flight: int = 0  # calls in flight at once, as the driver dispatched them
    live_at_peak: int = 0  # the actors' own count of live calls, summed over their peaks
    processes: int = 0
    idle_bytes: int = 0  # resident memory of the actors before any call
    peak_bytes: int = 0  # resident memory of the actors at their most loaded
    per_actor: list[dict[str, int]] = field(default_factory=list)

    @property
    def bytes_per_live_call(self) -> float:
        if not self.live_at_peak:
            return 0.0
        return max(0, self.peak_bytes - self.idle_bytes) / self.live_at_peak


class CallHost:
    """Runs async calls on one event loop and tracks how many are live (a Ray actor body)."""

    def __init__(self, task_set: TaskSet, settings: RolloutSettings, stacks: dict[str, StackRef]):
        self.rollout = Rollout(task_set, settings)
        self.stacks = stacks
        self.live = 0
        self.peak = 0
        self.peak_bytes = 0
        # Warm the snapshot and the imports before measuring the idle footprint.
        self.rollout.new_env()
        self.idle_bytes = resident_bytes()

    async def run(self, spec: CallSpec) -> Finished:
        self.live += 1
        if self.live >= self.peak:
            self.peak = self.live
        try:
            record = await self.rollout.arun(spec, self.stacks[spec.stack])
        except Exception as exc:
            record = self.rollout.failed(spec, exc)
        finally:
            if self.live >= self.peak:
                self.peak_bytes = max(self.peak_bytes, resident_bytes())
            self.live -= 1
        status, line = storable_line(record)
        return spec.key, status, line

    def stats(self) -> dict[str, int]:
        return {
            "pid": os.getpid(),
            "peak_in_flight": self.peak,
            "idle_bytes": self.idle_bytes,
            "peak_bytes": max(self.peak_bytes, self.idle_bytes),
        }


class LocalBackend:
    """Runs every call in this process: sync stacks one by one, async ones on one loop."""

    name = "local"

    def __init__(self, max_concurrency: int = 5) -> None:
        self.max_concurrency = max_concurrency
        self.async_stats = AsyncStats()

    def run(
        self,
        specs: Sequence[CallSpec],
        stacks: dict[str, StackRef],
        task_set: TaskSet,
        settings: RolloutSettings,
        sink: Sink,
    ) -> None:
        rollout = Rollout(task_set, settings)
        sync = [s for s in specs if stacks[s.stack].offline]
        for spec in sync:
            sink([_finished(rollout, spec, stacks[spec.stack])])
        waiting = [s for s in specs if not stacks[s.stack].offline]
        if waiting:
            asyncio.run(self._run_async(waiting, stacks, task_set, settings, sink))

    async def _run_async(
        self,
        specs: Sequence[CallSpec],
        stacks: dict[str, StackRef],
        task_set: TaskSet,
        settings: RolloutSettings,
        sink: Sink,
    ) -> None:
        host = CallHost(task_set, settings, stacks)
        gate = asyncio.Semaphore(self.max_concurrency)

        async def one(spec: CallSpec) -> None:
            async with gate:
                sink([await host.run(spec)])

        await asyncio.gather(*(one(s) for s in specs))
        stats = host.stats()
        self.async_stats = AsyncStats(
            peak_in_flight=stats["peak_in_flight"],
            live_at_peak=stats["peak_in_flight"],
            processes=1,
            idle_bytes=stats["idle_bytes"],
            peak_bytes=stats["peak_bytes"],
            per_actor=[stats],
        )


# --- Ray -------------------------------------------------------------------------------------

_ROLLOUTS: dict[tuple[str, RolloutSettings], Rollout] = {}


def _worker_rollout(token: str, boxed: list[Any], settings: RolloutSettings) -> Rollout:
    """The worker process's ``Rollout`` for a task set, built on first use and kept."""
    key = (token, settings)
    rollout = _ROLLOUTS.get(key)
    if rollout is None:
        import ray

        # The task set travels boxed so Ray does not deserialise it for every batch.
        rollout = Rollout(ray.get(boxed[0]), settings)
        _ROLLOUTS[key] = rollout
    return rollout


def _run_batch(
    token: str,
    boxed: list[Any],
    settings: RolloutSettings,
    stacks: dict[str, StackRef],
    specs: list[CallSpec],
) -> list[Finished]:
    rollout = _worker_rollout(token, boxed, settings)
    return [_finished(rollout, spec, stacks[spec.stack]) for spec in specs]


def task_set_token(task_set: TaskSet) -> str:
    return hashlib.sha256(task_set.model_dump_json().encode()).hexdigest()[:16]


def batch_size_for(
    calls: int, slots: int, requested: int | None = None, *, mode: str = "text"
) -> int:
    """Calls per Ray task: about four batches per slot for balance, at most 25 so the
    progress line and a crash lose little. A duplex call takes seconds to minutes, not
    milliseconds: one call per task, so results arrive and are kept call by call."""
    if requested is not None:
        return max(1, requested)
    if mode == "duplex":
        return 1
    return max(1, min(25, math.ceil(calls / max(1, slots * 4))))


def _runtime_env() -> dict[str, Any]:
    env = forwarded_env()
    return {"runtime_env": {"env_vars": env}} if env else {}


def cluster_error(address: str, exc: BaseException) -> ValueError:
    """Why ``ray.init(address=...)`` failed, in one line that says what to do."""
    text = " ".join(str(exc).split())[:400]
    lowered = f"{type(exc).__name__} {text}".lower()
    if "version mismatch" in lowered:
        advice = "expected the same Ray and Python versions as the cluster's nodes"
    elif "authentication" in lowered or "auth_token" in lowered or "token" in lowered:
        advice = (
            "the cluster refused this driver's token: set RAY_AUTH_MODE=token and the head's "
            "token (RAY_AUTH_TOKEN, or ~/.ray/auth_token) in this shell"
        )
    elif os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        advice = (
            "a head started by Ray 2.60 or later uses token authentication: set "
            "RAY_AUTH_MODE=token (and the head's RAY_AUTH_TOKEN, or ~/.ray/auth_token) in this "
            "shell, as for every `ray start`"
        )
    else:
        advice = (
            "check the head is up (ray status --address ADDRESS) and that this shell's token "
            "is the head's; on one machine use 127.0.0.2, not 127.0.0.1 (Ray replaces "
            "127.0.0.1 by the machine's own address)"
        )
    return ValueError(
        f"--address: cannot join the Ray cluster at {address} ({type(exc).__name__}: {text}); "
        f"{advice}; see docs/evaluation.md, 'A Ray cluster'"
    )


class RayBackend:
    """Runs calls on Ray: batches of offline calls as tasks, async calls on actors."""

    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        num_cpus: int | None = None,
        max_concurrency: int = 5,
        batch_size: int | None = None,
    ) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.max_concurrency = max_concurrency
        self.batch_size = batch_size
        self.async_stats = AsyncStats()
        self.batches = 0

    def _init(self) -> Any:
        import ray

        if not ray.is_initialized():
            if self.address:
                try:
                    ray.init(
                        address=self.address, log_to_driver=False, logging_level=logging.WARNING
                    )
                except Exception as exc:
                    raise cluster_error(self.address, exc) from None
            else:
                ray.init(
                    num_cpus=self.num_cpus,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                )
        return ray

    def connect(self) -> None:
        """Start or join Ray now (a ``ValueError`` saying what is wrong when it cannot)."""
        self._init()

    def cpus(self) -> int:
        ray = self._init()
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def run(
        self,
        specs: Sequence[CallSpec],
        stacks: dict[str, StackRef],
        task_set: TaskSet,
        settings: RolloutSettings,
        sink: Sink,
    ) -> None:
        ray = self._init()
        boxed = [ray.put(task_set)]
        token = task_set_token(task_set)
        offline = [s for s in specs if stacks[s.stack].offline]
        waiting = [s for s in specs if not stacks[s.stack].offline]
        if offline:
            self._run_offline(ray, offline, stacks, token, boxed, settings, sink)
        if waiting:
            self._run_async(ray, waiting, stacks, boxed, settings, sink)

    def _run_offline(
        self,
        ray: Any,
        specs: Sequence[CallSpec],
        stacks: dict[str, StackRef],
        token: str,
        boxed: list[Any],
        settings: RolloutSettings,
        sink: Sink,
    ) -> None:
        cpus = self.cpus()
        slots = max(1, min(self.max_concurrency, cpus))
        size = batch_size_for(len(specs), slots, self.batch_size, mode=settings.mode)
        # Ray runs at most one batch per CPU. When the setting is below the CPUs, it is the
        # cap; otherwise Ray's own accounting caps the calls running, and a queue of a batch
        # per CPU keeps every worker busy while the driver writes what came back.
        limit = self.max_concurrency if self.max_concurrency < cpus else slots + cpus
        batches = [list(specs[i : i + size]) for i in range(0, len(specs), size)]
        batches.reverse()  # pop() from the end keeps the planned order
        remote = ray.remote(num_cpus=1, max_retries=2)(_run_batch).options(**_runtime_env())
        pending: set[Any] = set()
        while batches or pending:
            while batches and len(pending) < limit:
                pending.add(remote.remote(token, boxed, settings, stacks, batches.pop()))
                self.batches += 1
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                pending.discard(ref)
                sink(ray.get(ref))

    def _run_async(
        self,
        ray: Any,
        specs: Sequence[CallSpec],
        stacks: dict[str, StackRef],
        boxed: list[Any],
        settings: RolloutSettings,
        sink: Sink,
    ) -> None:
        count = max(1, min(self.cpus(), math.ceil(self.max_concurrency / CALLS_PER_ACTOR)))
        share = math.ceil(self.max_concurrency / count)
        # A little headroom beyond the share for the stats() call; the driver does the capping.
        actor_class = ray.remote(num_cpus=1, max_concurrency=share + 2)(CallHost).options(
            **_runtime_env()
        )
        task_set = ray.get(boxed[0])
        actors = [actor_class.remote(task_set, settings, stacks) for _ in range(count)]
        load = [0] * count
        owner: dict[Any, int] = {}
        queue = list(reversed(specs))
        peak = 0
        try:
            while queue or owner:
                while queue and len(owner) < self.max_concurrency:
                    index = min(range(count), key=load.__getitem__)
                    ref = actors[index].run.remote(queue.pop())
                    owner[ref] = index
                    load[index] += 1
                peak = max(peak, len(owner))
                ready, _ = ray.wait(list(owner), num_returns=1)
                for ref in ready:
                    load[owner.pop(ref)] -= 1
                    sink([ray.get(ref)])
            per_actor = ray.get([a.stats.remote() for a in actors])
        finally:
            for actor in actors:
                ray.kill(actor)
        self.async_stats = AsyncStats(
            peak_in_flight=peak,
            live_at_peak=sum(s["peak_in_flight"] for s in per_actor),
            processes=count,
            idle_bytes=sum(s["idle_bytes"] for s in per_actor),
            peak_bytes=sum(s["peak_bytes"] for s in per_actor),
            per_actor=per_actor,
        )
