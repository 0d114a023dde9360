"""``vamos tasks ...``: build, validate, show and publish the task files.

- ``vamos tasks build [--seed N] [--outcomes FILE] [--out DIR] [--write-prior]`` runs the
  pipeline (singles, composition, difficulty fit, selection), writes the exam and its
  companions, and prints the counts. ``--outcomes`` refits on any results file.
- ``vamos tasks validate [FILE]`` checks a task file against the schema, then replays
  every task's expected changes and refusals through the tools on a fresh clone; exit 1
  when a task fails, 2 when the file itself is invalid.
- ``vamos tasks show ID [--file FILE] [--json]`` prints one task.
- ``vamos tasks schema [--out FILE]`` prints or writes the published JSON schema.

``register(subparsers)`` adds these to the ``vamos`` parser; everything heavy is imported
inside the handlers so ``vamos --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vamos_env.cli.args import CommandLineParser, integer

if TYPE_CHECKING:
    from vamos_env.envs.energy.tasks.schema import Task


def register(subparsers: Any) -> None:
    """Add ``tasks`` and its subcommands to the ``vamos`` command line."""
    tasks = subparsers.add_parser("tasks", help="build, validate and inspect the task files")
    sub = tasks.add_subparsers(dest="tasks_command", required=True)

    build = sub.add_parser("build", help="build the exam (deterministic for a seed)")
    build.add_argument(
        "--seed", type=integer(0, 2**32 - 1), default=0, help="selection seed (default 0)"
    )
    build.add_argument(
        "--outcomes",
        type=Path,
        default=None,
        help="results file to fit the difficulty model on (JSON lines with task_id and "
        "passed); default: the shipped bootstrap prior",
    )
    build.add_argument(
        "--out", type=Path, default=None, help="folder to write into (default: the shipped data)"
    )
    build.add_argument(
        "--write-prior",
        action="store_true",
        help="also rebuild the bootstrap prior outcomes file in the output folder",
    )
    build.set_defaults(func=_cmd_build)

    validate = sub.add_parser("validate", help="schema check plus replay through the tools")
    validate.add_argument("file", type=Path, nargs="?", default=None, help="default: the exam")
    validate.set_defaults(func=_cmd_validate)

    show = sub.add_parser("show", help="print one task")
    show.add_argument("task_id")
    show.add_argument("--file", type=Path, default=None, help="default: the exam, then singles")
    show.add_argument("--json", action="store_true", help="print the task's JSON")
    show.set_defaults(func=_cmd_show)

    schema = sub.add_parser("schema", help="print or write the task file JSON schema")
    schema.add_argument("--out", type=Path, default=None, help="write here instead of printing")
    schema.set_defaults(func=_cmd_schema)


def run(argv: Sequence[str]) -> int:
    """Run ``vamos tasks <argv>`` (for scripts and tests)."""
    parser = CommandLineParser(prog="vamos")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["tasks", *argv])
    return int(args.func(args))


# --- build ----------------------------------------------------------------------------------


def _counts(mapping: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in mapping.items())


def _cmd_build(args: argparse.Namespace) -> int:
    from vamos_env.envs.energy.tasks.difficulty import OutcomeFileError
    from vamos_env.envs.energy.tasks.exam import BOOTSTRAP_OUTCOMES, bootstrap_bytes, build_exam
    from vamos_env.envs.energy.tasks.exam import data_dir as shipped

    out = args.out or shipped()
    outcomes = args.outcomes
    if args.write_prior:
        out.mkdir(parents=True, exist_ok=True)
        prior = out / BOOTSTRAP_OUTCOMES
        prior.write_bytes(bootstrap_bytes())
        print(f"wrote the bootstrap prior: {prior}")
        outcomes = outcomes or prior
    try:
        result = build_exam(seed=args.seed, outcomes=outcomes)
    except OutcomeFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = result.summary
    lengths = summary["eligible_combinations_by_length"]
    print(f"single cases: {summary['singles']} ({_counts(summary['singles_by_kind'])})")
    print(
        f"eligible combinations: {summary['eligible_combinations']:,} "
        f"(2 requests: {lengths['2']}, 3: {lengths['3']}, 4: {lengths['4']})"
    )
    print(f"rejected extensions: {_counts(summary['rejected_extensions'])}")
    print(
        f"outcomes: {summary['outcomes_file']}, {summary['outcomes_used']} used, "
        f"{summary['outcomes_unknown_task_ids']} with task ids this build does not have"
    )
    mix = summary["exam_mix"]
    print(
        f"exam: {len(result.exam.tasks)} tasks (2 requests: {mix.get('2', 0)}, "
        f"3: {mix.get('3', 0)}, 4: {mix.get('4', 0)}) over {summary['exam_accounts']} accounts"
    )
    try:
        written = result.write(out)
    except OSError as exc:
        print(
            f"error: could not write to {out} ({exc}); choose a folder with --out", file=sys.stderr
        )
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0


# --- validate ---------------------------------------------------------------------------------


def _cmd_validate(args: argparse.Namespace) -> int:
    from vamos_env.envs.energy.tasks.exam import shipped_exam_path
    from vamos_env.envs.energy.tasks.replay import validate_task_set
    from vamos_env.envs.energy.tasks.schema import TaskFileError, load_task_set

    path = args.file or shipped_exam_path()
    try:
        task_set = load_task_set(path)
    except TaskFileError as exc:
        print(f"invalid task file: {exc}", file=sys.stderr)
        return 2
    validation = validate_task_set(task_set)
    for report in validation.failed:
        for problem in report.problems:
            print(f"FAIL {report.task_id}: {problem}")
    failed = len(validation.failed)
    total = len(validation.reports)
    calls = sum(r.calls for r in validation.reports)
    print(
        f"{path}: {total} tasks replayed through the tools ({calls} tool calls, "
        f"{validation.seconds:.2f} s): {total - failed} valid, {failed} failed"
    )
    return 1 if failed else 0


# --- show ---------------------------------------------------------------------------------------


def _cmd_show(args: argparse.Namespace) -> int:
    from vamos_env.envs.energy.tasks.exam import shipped_exam_path, shipped_singles_path
    from vamos_env.envs.energy.tasks.schema import TaskFileError, load_task_set

    files = [args.file] if args.file else [shipped_exam_path(), shipped_singles_path()]
    for path in files:
        try:
            task_set = load_task_set(path)
        except TaskFileError as exc:
            print(f"invalid task file: {exc}", file=sys.stderr)
            return 2
        for task in task_set.tasks:
            if task.task_id == args.task_id:
                if args.json:
                    print(json.dumps(task.model_dump(mode="json", exclude_none=True), indent=1))
                else:
                    print(describe_task(task))
                return 0
    names = " or ".join(str(p) for p in files)
    print(f"no task {args.task_id!r} in {names}", file=sys.stderr)
    return 1


def _value(value: Any, value_type: str | None) -> str:
    if value_type == "money" and isinstance(value, int):
        from vamos_env.envs.energy.policy import format_cents

        return f"{value} ({format_cents(value)})"
    return str(value)


def _window(window: Any) -> str:
    parts = []
    if window.after_check:
        parts.append(f"after {window.after_check}")
    if window.after_tool:
        parts.append(f"after {window.after_tool} ({window.after_outcome})")
    if window.before_tool:
        parts.append(f"before {window.before_tool} ({window.before_outcome})")
    return ", ".join(parts) or "whole call"


def describe_task(task: Task) -> str:
    """A task in plain text, for people."""
    meta = task.meta
    caller = task.caller
    head = f"{task.task_id}  ({meta.request_count} request(s), account {meta.account_slot}"
    if meta.predicted_success is not None:
        head += f", predicted success {meta.predicted_success:.2f}"
    lines = [
        head + ")",
        f"Caller: {caller.full_name}, account {caller.account_number}, second factor "
        f"{caller.second_factor.kind} {caller.second_factor.value}",
        f'Opens: "{caller.opening_line}"',
    ]
    if caller.private_facts:
        lines.append("Knows, and says only when asked:")
        lines += [f'  {f.key}: "{f.say}"' for f in caller.private_facts]
    lines.append("Requests:")
    for n, request in enumerate(task.requests):
        lines.append(f"  {n + 1}. {request.kind} -> {request.expected_outcome}")
        lines.append(f'     says: "{request.says}"')
        if request.details:
            lines.append(
                "     details: " + ", ".join(f"{k}={v}" for k, v in request.details.items())
            )
        for consent in request.consent:
            lines.append(f"     consent ({consent.kind}): {consent.values}")
        for key, words in request.refusals.items():
            lines.append(f'     refuses {key}: "{words}"')
    lines.append("Expected account changes:" if task.expected_changes else "No account changes.")
    for change in task.expected_changes:
        values = ", ".join(f"{k}={v}" for k, v in change.values.items())
        lines.append(f"  [request {change.request_index + 1}] {change.tool}: {values}")
    lines.append("Checks:")
    for check in task.checks:
        what: str = check.kind
        if check.value is not None:
            what += f" {check.value_type} {_value(check.value, check.value_type)}"
        if check.tool:
            what += f" {check.tool}"
        lines.append(f"  {check.id}: {what}; {_window(check.window)}")
        lines.append(f"      {check.description}")
    return "\n".join(lines)


# --- schema -------------------------------------------------------------------------------------


def _cmd_schema(args: argparse.Namespace) -> int:
    from vamos_env.envs.energy.tasks.exam import schema_bytes

    data = schema_bytes()
    if args.out is None:
        sys.stdout.write(data.decode())
    else:
        args.out.write_bytes(data)
        print(f"wrote {args.out}")
    return 0
