"""Everything ``vamos eval`` can check before its first call, checked before it.

A run that is going to fail should fail in the first second, saying what to change, not
after an hour of calls that all end the same way. ``preflight(config)`` checks:

- the numbers (repeats, concurrency, timeout, turns, CPUs, batch size; also for callers
  of ``evaluate`` who bypass the command line's types) and the size of the plan;
- the tasks: they resolve, and every task's caller has an account in the seeded world;
- the stacks: each one's code imports, its factory builds something with the agent
  protocol, and a stack that needs a key or a server has them (a factory's
  ``preflight()`` says what is missing; the LLM stacks have one);
- an LLM caller's key, the price table, and a cluster address that answers.

Each problem is a ``ValueError`` whose one line names the argument, what was expected and
what arrived.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vamos_env.envs.energy.env import check_world
from vamos_env.grading.llm import Price
from vamos_env.runner.plan import StackRef, TaskSelection, load_factory, resolve_stack, select_tasks
from vamos_env.runner.rollout import MODEL_CALLERS

if TYPE_CHECKING:
    from vamos_env.runner.evaluate import EvalConfig

MAX_PLANNED_CALLS = 1_000_000
CONNECT_TIMEOUT_S = 5.0
# What an LLM caller needs, by kind: any one of the variables.
CALLER_KEYS = {"openai": ("OPENAI_API_KEY",), "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
CLUSTER_HINT = (
    "start one with: RAY_AUTH_MODE=token ray start --head --node-ip-address 127.0.0.2 "
    "(see docs/evaluation.md, 'A Ray cluster')"
)


@dataclass(frozen=True)
class Checked:
    """What preflight resolved, so the run does not resolve it twice."""

    selection: TaskSelection
    stacks: list[StackRef]
    prices: dict[str, Price] | None


def _whole(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: expected an integer from {low} to {high:,}, got {value!r}")


def check_numbers(config: EvalConfig) -> None:
    _whole("--repeats", config.repeats, 1, 1000)
    _whole("--max-concurrency", config.max_concurrency, 1, 10_000)
    _whole("--max-turns", config.max_agent_turns, 1, 1000)
    if config.num_cpus is not None:
        _whole("--num-cpus", config.num_cpus, 1, 4096)
    if config.batch_size is not None:
        _whole("--batch-size", config.batch_size, 1, 10_000)
    timeout = config.timeout_s
    if not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"--timeout: expected a number of seconds above 0, got {timeout!r}")
    if config.level_db is not None:
        from vamos_env.channel.parameters import shipped_parameters

        levels = {float(x) for b in shipped_parameters().backgrounds.values() for x in b.levels}
        if config.level_db not in levels:
            shown = ", ".join(f"{x:g}" for x in sorted(levels, reverse=True))
            raise ValueError(
                f"--level-db: expected a level of the channel's parameter file ({shown} dB), "
                f"got {config.level_db!r}"
            )


def load_stacks(texts: Sequence[str]) -> list[StackRef]:
    """Resolve every stack; an import failure is the stack's one-line error."""
    if not texts:
        raise ValueError("--stacks: expected at least one stack, got none")
    refs = [resolve_stack(text) for text in texts]
    names = [r.name for r in refs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"--stacks: expected each stack once, got {', '.join(twice)} twice")
    return refs


def _is_agent(agent: Any) -> bool:
    def has(name: str) -> bool:
        return callable(getattr(agent, name, None))

    return (has("aact") and has("areset")) or (has("act") and has("reset")) or _speaks(agent)


def _speaks(agent: Any) -> bool:
    """A frame-level duplex agent: ``reset(info)`` and ``step(line_audio, tool_results)``."""
    return bool(getattr(agent, "duplex", False)) and callable(getattr(agent, "step", None))


def check_mode(config: EvalConfig, stacks: Sequence[StackRef]) -> None:
    """Duplex calls need the audio extra, a known line and frame-level agents; text calls
    need text agents."""
    duplex = getattr(config, "mode", "text") == "duplex"
    if duplex:
        from vamos_env.channel.audio.engines import missing_reason
        from vamos_env.duplex.line import line_condition

        reason = missing_reason()
        if reason is not None:
            raise ValueError(f"--mode duplex: {reason}")
        line_condition(config.line)
        if config.channel != "text":
            raise ValueError("--mode duplex: the line is audio already; drop --channel")
        if config.caller not in ("scripted", *MODEL_CALLERS):
            raise ValueError(
                f"--caller {config.caller}: a duplex call's caller is scripted or a model "
                f"session ({', '.join(MODEL_CALLERS)}); a chat model answers text turns only"
            )
    elif config.caller in MODEL_CALLERS:
        raise ValueError(f"--caller {config.caller}: a model session speaks; use --mode duplex")
    for stack in stacks:
        agent = load_factory(stack.entry_point)()
        if duplex and not _speaks(agent):
            raise ValueError(
                f"--stacks: stack {stack.name!r} is a text agent; a duplex call needs a voice "
                f"stack (try cascade:{stack.name})"
            )
        if not duplex and _speaks(agent):
            raise ValueError(f"--stacks: stack {stack.name!r} speaks audio; use --mode duplex")


def check_stack(stack: StackRef, environ: Mapping[str, str] | None = None) -> None:
    """The stack can run here: its credentials are set and its factory builds an agent."""
    factory = load_factory(stack.entry_point)
    preflight = getattr(factory, "preflight", None)
    if callable(preflight):
        problem = preflight(os.environ if environ is None else environ)
        if problem:
            raise ValueError(f"--stacks: stack {stack.name!r} cannot run: {problem}")
    try:
        agent = factory()
    except Exception as exc:
        raise ValueError(
            f"--stacks: stack {stack.name!r}: expected {stack.entry_point} to build an agent, "
            f"got {type(exc).__name__}: {exc}"
        ) from None
    if not _is_agent(agent):
        raise ValueError(
            f"--stacks: stack {stack.name!r}: expected {stack.entry_point} to build an agent "
            "(reset(info) and act(observation, info), or areset and aact), "
            f"got {type(agent).__name__}"
        )
    close = getattr(agent, "close", None)
    if callable(close):
        close()


def check_caller(caller: str, environ: Mapping[str, str] | None = None) -> None:
    env = os.environ if environ is None else environ
    if caller in MODEL_CALLERS:
        from vamos_env.duplex.env import default_caller_session

        try:  # the bridge's own preflight: its key and settings
            default_caller_session(caller, env)
        except ValueError as exc:
            why = str(exc).split(": ", 1)[-1]
            raise ValueError(f"--caller {caller}: {why}") from None
        return
    if caller == "local":
        # No key; the server is found or started now, so a missing extra fails before call 1.
        from vamos_env.llm.server import LocalServerError, ensure_local_server

        try:
            ensure_local_server()
        except LocalServerError as exc:
            raise ValueError(f"--caller local: {exc}") from None
        return
    keys = CALLER_KEYS.get(caller, ())
    if keys and not any(env.get(k) for k in keys):
        raise ValueError(
            f"--caller {caller}: expected {' or '.join(keys)} to be set for the caller's model, "
            "got none (or use --caller scripted, which needs no key)"
        )


def read_prices(path: str | Path) -> dict[str, Price]:
    """A price table file, or a one-line error naming it and the expected shape."""
    import json

    expected = '{"models": {"NAME": {"input_per_million": N, "output_per_million": N}}}'
    try:
        raw = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"--prices: cannot read {path} ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"--prices: {path}: expected JSON, got {exc}") from None
    models = raw.get("models") if isinstance(raw, dict) else None
    if not isinstance(models, dict):
        raise ValueError(f"--prices: {path}: expected {expected}, got no 'models' object")
    prices: dict[str, Price] = {}
    for name, entry in models.items():
        try:
            prices[name] = Price.from_entry(entry)
        except ValueError as exc:
            raise ValueError(f"--prices: {path}: models.{name}: {exc}") from None
    return prices


def split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a Ray address (``HOST:PORT`` or ``ray://HOST:PORT``); None for
    ``auto`` (Ray finds a cluster started on this machine)."""
    text = address.strip()
    if text in ("auto", "local"):
        return None
    bare = text.removeprefix("ray://")
    host, colon, port = bare.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(
            f"--address: expected HOST:PORT (e.g. 127.0.0.2:6379) or ray://HOST:PORT, "
            f"got {address!r}"
        )
    return host, int(port)


def check_address(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Something listens at the address (Ray's own connect would wait for minutes)."""
    target = split_address(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout_s):
            pass
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise ValueError(
            f"--address: expected a Ray head at {address}, got {reason} within "
            f"{timeout_s:g} s; {CLUSTER_HINT}"
        ) from None


def preflight(config: EvalConfig) -> Checked:
    """Check what can be checked before the first call; the resolved tasks and stacks."""
    from vamos_env.envs.energy.world import default_manifest

    check_numbers(config)
    selection = select_tasks(config.tasks)
    check_world(selection.task_set, {a.account_number for a in default_manifest().accounts})
    stacks = load_stacks(config.stacks)
    check_mode(config, stacks)
    planned = len(stacks) * len(selection.task_ids) * config.repeats
    if planned > MAX_PLANNED_CALLS:
        raise ValueError(
            f"--repeats/--tasks/--stacks: expected at most {MAX_PLANNED_CALLS:,} calls in one "
            f"run, got {planned:,}; split the run"
        )
    for stack in stacks:
        check_stack(stack)
    check_caller(config.caller)
    prices = read_prices(config.prices) if config.prices else None
    if config.executor == "ray" and config.address:
        check_address(config.address)
    return Checked(selection, stacks, prices)
