"""What a run will do: the tasks, the stacks, and one ``CallSpec`` per (stack, task, repeat).

Tasks are named as ``vamos eval --tasks`` takes them: ``exam`` or ``singles`` (the shipped
sets), ``exam:N`` (the first N task ids of the exam, for quick runs), a task file path,
or comma-separated task ids (looked up in the exam, then the singles).

Casting (persona per task, background per repeat, call seed) is computed over the whole
source task set and then filtered, so a run on a subset meets the same callers as the
full run would, and every stack meets identical ones.

Stacks are registered names (``vamos_env.agents``), or ``NAME=ENTRY`` where ENTRY is
``module:factory`` or ``path/to/file.py:factory`` (a stack of your own). An entry-point
stack runs as an offline (CPU-bound) stack unless its factory has ``offline = False`` or
is a class with ``aact`` (then it runs on async actors as an LLM-bound stack).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vamos_env.callers.casting import cast
from vamos_env.envs.energy.env import EXAM_PATH, SINGLES_PATH, resolve_tasks
from vamos_env.envs.energy.tasks.schema import TaskSet
from vamos_env.runner.records import call_key

NAMED_SETS = {"exam": EXAM_PATH, "singles": SINGLES_PATH}
_STACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class TaskSelection:
    """The source task set (casting is over all of it) and the task ids selected from it."""

    source: str  # "exam", "singles" or an absolute file path
    task_set: TaskSet
    task_ids: tuple[str, ...]


def select_tasks(text: str) -> TaskSelection:
    """Resolve ``--tasks``; raise ``ValueError`` naming what was expected."""
    text = text.strip()
    if not text:
        raise ValueError("--tasks: expected exam, singles, exam:N, a task file or task ids")
    name, _, count = text.partition(":")
    if name in NAMED_SETS:
        task_set = resolve_tasks(name)
        ids = tuple(sorted(t.task_id for t in task_set.tasks))
        if count:
            if not count.isdigit() or int(count) < 1:
                raise ValueError(f"--tasks: expected {name}:N with N >= 1, got {text!r}")
            ids = ids[: int(count)]
        return TaskSelection(name, task_set, ids)
    path = Path(text)
    if path.suffix == ".json" or path.exists():
        if not path.exists():
            raise ValueError(f"--tasks: no task file at {path}")
        task_set = resolve_tasks(path.resolve())
        return TaskSelection(
            str(path.resolve()), task_set, tuple(sorted(t.task_id for t in task_set.tasks))
        )
    wanted = [part.strip() for part in text.split(",") if part.strip()]
    for source in NAMED_SETS:
        task_set = resolve_tasks(source)
        known = {t.task_id for t in task_set.tasks}
        if all(task_id in known for task_id in wanted):
            return TaskSelection(source, task_set, tuple(sorted(set(wanted))))
    exam = {t.task_id for t in resolve_tasks("exam").tasks}
    singles = {t.task_id for t in resolve_tasks("singles").tasks}
    unknown = [t for t in wanted if t not in exam and t not in singles]
    if unknown:
        raise ValueError(f"--tasks: unknown task ids {unknown[:5]} (not in the exam or singles)")
    raise ValueError("--tasks: the task ids must all come from one set (the exam or the singles)")


def task_set_of(source: str) -> TaskSet:
    """The task set a selection's ``source`` names (in a worker, from the same string)."""
    return resolve_tasks(source)


@dataclass(frozen=True)
class StackRef:
    """A stack as the runner meets it: a name for the store, a factory, CPU-bound or not."""

    name: str
    entry_point: str
    offline: bool


def resolve_stack(text: str) -> StackRef:
    """A registered stack name, or ``NAME=module:factory`` / ``NAME=path.py:factory``."""
    import vamos_env.agents  # noqa: F401  (registers the shipped stacks)
    from vamos_env.agents.base import stacks

    text = text.strip()
    name, eq, entry = text.partition("=")
    if not eq and text.startswith("cascade:"):
        # A text agent of the registry behind the cascade's ears and voice (duplex calls).
        inner = resolve_stack(text.removeprefix("cascade:"))
        if inner.name not in stacks() or inner.name == "cascade":
            raise ValueError(
                f"--stacks: cascade:<stack> takes a registered text stack, got {text!r}"
            )
        return StackRef(
            f"cascade-{inner.name}",
            f"vamos_env.duplex.cascade:cascade_over_{inner.name}",
            inner.offline,
        )
    if not eq:
        spec = stacks().get(text)
        if spec is None:
            raise ValueError(
                f"--stacks: unknown stack {text!r}; expected one of {sorted(stacks())} "
                "or NAME=module:factory"
            )
        return StackRef(spec.name, spec.entry_point, spec.offline)
    if not _STACK_NAME.fullmatch(name):
        raise ValueError(f"--stacks: a stack name is letters, digits, '_', '.', '-'; got {name!r}")
    target, colon, attribute = entry.rpartition(":")
    if not colon or not target or not attribute:
        raise ValueError(f"--stacks: expected NAME=module:factory, got {text!r}")
    if target.endswith(".py"):
        path = Path(target).resolve()
        if not path.exists():
            raise ValueError(f"--stacks: no file {path} for stack {name!r}")
        target = str(path)
    entry_point = f"{target}:{attribute}"
    factory = load_factory(entry_point)
    # A class with ``aact`` is LLM-bound (async actors) unless it says ``offline = True``.
    return StackRef(
        name, entry_point, bool(getattr(factory, "offline", not hasattr(factory, "aact")))
    )


def load_factory(entry_point: str) -> Callable[..., Any]:
    """The callable an entry point names; a ``.py`` path is imported as a module by path."""
    target, _, attribute = entry_point.rpartition(":")
    if target.endswith(".py"):
        module_name = "vamos_stack_" + hashlib.sha256(target.encode()).hexdigest()[:12]
        module = sys.modules.get(module_name)
        if module is None:
            spec = importlib.util.spec_from_file_location(module_name, target)
            if spec is None or spec.loader is None:
                raise ValueError(f"--stacks: expected a Python file to import, got {target}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:  # a syntax error, a missing import: the user's code
                del sys.modules[module_name]
                raise ValueError(
                    f"--stacks: expected {target} to import, got {type(exc).__name__}: {exc}"
                ) from None
    else:
        try:
            module = importlib.import_module(target)
        except Exception as exc:
            raise ValueError(
                f"--stacks: expected an importable module {target!r}, got "
                f"{type(exc).__name__}: {exc}"
            ) from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ValueError(
            f"--stacks: expected {entry_point} to name a callable that builds an agent, "
            f"got {'nothing' if factory is None else type(factory).__name__}"
        )
    return factory


def make_stack_agent(stack: StackRef) -> Any:
    """A fresh agent of a stack (one per call: calls never share an agent's memory)."""
    return load_factory(stack.entry_point)()


@dataclass(frozen=True)
class CallSpec:
    """One call to run: which stack, which task and repeat, with its casting and seed."""

    stack: str
    task_id: str
    repeat: int
    persona: str
    background: str
    seed: int
    trial_id: str

    @property
    def key(self) -> str:
        return call_key(self.stack, self.task_id, self.repeat)


def plan_calls(
    stack_names: Sequence[str],
    selection: TaskSelection,
    *,
    repeats: int,
    trial_id: str,
    personas: Sequence[str] | None = None,
) -> list[CallSpec]:
    """Every call of the run, stack-major, then task, then repeat (identical casting)."""
    all_ids = [t.task_id for t in selection.task_set.tasks]
    kwargs: dict[str, Any] = {} if personas is None else {"personas": tuple(personas)}
    table = cast(all_ids, trial_id=trial_id, repeats=repeats, **kwargs)
    chosen = set(selection.task_ids)
    rows = [row for row in table if row.task_id in chosen]
    return [
        CallSpec(
            stack=stack,
            task_id=row.task_id,
            repeat=row.repeat,
            persona=row.persona,
            background=row.background,
            seed=row.seed,
            trial_id=trial_id,
        )
        for stack in stack_names
        for row in rows
    ]
