"""``evaluate``: stacks x tasks x repeats into a run folder, resumable, without duplicates.

A run folder (``runs/NAME``) holds ``run.json`` (what the run is: trial, caller, turn
limit, level; the stacks, tasks and repeats asked for so far) and ``results.jsonl`` (the
store). Rerunning the same command runs only the calls not yet stored. A run may grow
(more stacks, tasks or repeats) but not change what makes its calls comparable: a
different trial id, caller, turn limit or level needs another folder.

Before the first call, ``preflight`` checks everything it can (numbers, tasks against
the world, stacks and their credentials, prices, the cluster address), so a run that
cannot work fails in a second. Calls stored as benchmark faults (excluded) are kept on
resume; ``retry_faults`` drops them from the store (archived) and runs them again.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from vamos_env import __version__
from vamos_env.channel.parameters import (
    DEFAULT_RECOGNISER,
    RecogniserProfile,
    parameters_digest,
)
from vamos_env.runner.backends import AsyncStats, Finished, LocalBackend, RayBackend
from vamos_env.runner.plan import CallSpec, StackRef, TaskSelection, plan_calls
from vamos_env.runner.preflight import preflight
from vamos_env.runner.progress import Progress
from vamos_env.runner.rollout import CallerKind, RolloutSettings
from vamos_env.runner.store import ResultStore

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "run.json"
# What must match for calls of one run folder to be comparable.
# A run folder's calls are comparable only under these; the channel parameters are the
# shipped text-channel file's digest (a recalibrated file changes every noisy call).
_FIXED = (
    "trial_id",
    "caller",
    "max_agent_turns",
    "level_db",
    "channel",
    "channel_parameters",
    "recogniser",
    "mode",
    "line",
    "grading_ear",
)


@dataclass
class EvalConfig:
    """What ``vamos eval`` takes (see ``vamos eval --help``)."""

    stacks: Sequence[str]
    out: Path
    tasks: str = "exam"
    repeats: int = 3
    max_concurrency: int = 5
    timeout_s: float = 900.0
    trial_id: str = "default"
    caller: CallerKind = "scripted"
    max_agent_turns: int = 60
    level_db: float | None = None
    channel: Literal["text", "audio"] = "text"
    recogniser: RecogniserProfile = DEFAULT_RECOGNISER
    mode: Literal["text", "duplex"] = "text"
    line: str = "wideband"  # duplex only: the telephony line condition
    grading_ear: str = "whisper-tiny.en"  # duplex only: the recogniser the grader reads with
    executor: Literal["ray", "local"] = "ray"
    address: str | None = None
    num_cpus: int | None = None
    batch_size: int | None = None
    prices: Path | None = None
    progress: bool = True
    stream: TextIO | None = None
    retry_faults: bool = False  # rerun the calls stored as benchmark faults, in place


@dataclass
class EvalSummary:
    """What a run (or a resumed part of it) did."""

    out: Path
    planned: int
    already_done: int
    ran: int
    wall_s: float
    passed: int = 0
    counted: int = 0
    excluded: int = 0
    retried: int = 0  # stored benchmark faults dropped to run again (retry_faults)
    excluded_stored: int = 0  # planned calls stored as benchmark faults after the run
    batches: int = 0
    async_stats: AsyncStats = field(default_factory=AsyncStats)

    @property
    def calls_per_s(self) -> float:
        return self.ran / self.wall_s if self.wall_s > 0 else 0.0


class RunFolderError(ValueError):
    """A run folder whose calls would not be comparable with the ones asked for now."""


def _manifest(
    config: EvalConfig, selection: TaskSelection, stacks: list[StackRef]
) -> dict[str, Any]:
    return {
        "vamos_env": __version__,
        "trial_id": config.trial_id,
        "caller": config.caller,
        "max_agent_turns": config.max_agent_turns,
        "level_db": config.level_db,
        "channel": config.channel,
        "channel_parameters": parameters_digest(),
        "recogniser": config.recogniser,
        "mode": config.mode,
        "line": config.line if config.mode == "duplex" else None,
        "grading_ear": config.grading_ear if config.mode == "duplex" else None,
        "timeout_s": config.timeout_s,
        "task_source": selection.source,
        "task_set": selection.task_set.name,
        "task_ids": list(selection.task_ids),
        "stacks": {s.name: {"entry_point": s.entry_point, "offline": s.offline} for s in stacks},
        "repeats": config.repeats,
    }


def _load_manifest(path: Path) -> dict[str, Any]:
    try:
        old = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunFolderError(
            f"{path}: expected the run's JSON manifest, got unreadable JSON ({exc}); restore it "
            "or use another --out folder"
        ) from None
    if not isinstance(old, dict):
        raise RunFolderError(
            f"{path}: expected the run's JSON manifest (an object), got {type(old).__name__}"
        )
    return old


def _merge_manifest(path: Path, fresh: dict[str, Any]) -> dict[str, Any]:
    if not path.exists():
        return fresh
    old = _load_manifest(path)
    old.setdefault("channel", "text")  # folders from before the audio channel were text
    # Folders from before the profiles ran the measured recogniser's file.
    old.setdefault("recogniser", DEFAULT_RECOGNISER)
    old.setdefault("mode", "text")  # folders from before duplex calls
    old.setdefault("line", None)
    # Duplex folders from before the grader had its own ear took the caller's recognitions.
    old.setdefault("grading_ear", "caller-hearing" if old["mode"] == "duplex" else None)
    for name in _FIXED:
        if old.get(name) != fresh[name]:
            raise RunFolderError(
                f"{path.parent}: this run was started with {name}={old.get(name)!r}, "
                f"not {fresh[name]!r}; use another --out folder"
            )
    if old.get("task_source") != fresh["task_source"]:
        raise RunFolderError(
            f"{path.parent}: this run's tasks come from {old.get('task_source')!r}, "
            f"not {fresh['task_source']!r}; use another --out folder"
        )
    merged = dict(fresh)
    merged["task_ids"] = sorted(set(old.get("task_ids", [])) | set(fresh["task_ids"]))
    merged["stacks"] = {**old.get("stacks", {}), **fresh["stacks"]}
    merged["repeats"] = max(int(old.get("repeats", 0)), fresh["repeats"])
    return merged


def read_manifest(out: str | Path) -> dict[str, Any]:
    path = Path(out) / MANIFEST_FILE
    return _load_manifest(path) if path.exists() else {}


def evaluate(config: EvalConfig) -> EvalSummary:
    """Run every planned call not yet in ``config.out``; return what was done."""
    checked = preflight(config)
    selection, stack_refs, prices = checked.selection, checked.stacks, checked.prices
    names = [s.name for s in stack_refs]
    by_name = {s.name: s for s in stack_refs}

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST_FILE
    manifest = _merge_manifest(manifest_path, _manifest(config, selection, stack_refs))
    tmp = manifest_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    tmp.replace(manifest_path)

    specs = plan_calls(names, selection, repeats=config.repeats, trial_id=config.trial_id)
    settings = RolloutSettings(
        timeout_s=config.timeout_s,
        caller=config.caller,
        max_agent_turns=config.max_agent_turns,
        level_db=config.level_db,
        channel=config.channel,
        prices=prices,
        recogniser=config.recogniser,
        mode=config.mode,
        line=config.line,
        grading_ear=config.grading_ear,
    )
    started = time.perf_counter()
    with ResultStore(out / RESULTS_FILE) as store:
        retried = 0
        if config.retry_faults:
            stored = store.keys
            retried = store.drop([s.key for s in specs if stored.get(s.key) == "excluded"])
        todo: list[CallSpec] = [s for s in specs if s.key not in store]
        summary = EvalSummary(
            out=out,
            planned=len(specs),
            already_done=len(specs) - len(todo),
            ran=0,
            wall_s=0.0,
            retried=retried,
        )
        progress = Progress(
            len(specs),
            already_done=summary.already_done,
            stream=config.stream or sys.stderr,
            enabled=config.progress,
        )

        def sink(finished: list[Finished]) -> None:
            written = store.append(finished)
            summary.ran += written
            statuses = [status for _, status, _ in finished]
            summary.passed += statuses.count("pass")
            summary.excluded += statuses.count("excluded")
            summary.counted += len(statuses) - statuses.count("excluded")
            progress.update(statuses)

        if todo:
            backend: LocalBackend | RayBackend
            if config.executor == "local":
                backend = LocalBackend(config.max_concurrency)
            else:
                backend = RayBackend(
                    address=config.address,
                    num_cpus=config.num_cpus,
                    max_concurrency=config.max_concurrency,
                    batch_size=config.batch_size,
                )
                backend.connect()  # a cluster that cannot be joined fails before any call
            backend.run(todo, by_name, selection.task_set, settings, sink)
            summary.async_stats = backend.async_stats
            summary.batches = getattr(backend, "batches", 0)
        progress.close()
        stored = store.keys
        summary.excluded_stored = sum(stored.get(s.key) == "excluded" for s in specs)
    summary.wall_s = time.perf_counter() - started
    return summary
