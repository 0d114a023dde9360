"""``vamos eval``, ``vamos report`` and ``vamos redteam``: evaluation runs on the command line.

- ``vamos eval --stacks reference,naive --tasks exam --repeats 3 --out runs/NAME``: every
  (stack, task, repeat) on Ray (a local Ray unless ``--address``), into a resumable
  store; rerunning the same command finishes an interrupted run without duplicates.
  ``--report`` writes the report at the end.
  ``--retry-faults`` also reruns the calls stored as benchmark faults (excluded), in place.
- ``vamos report runs/NAME``: ``summary.md``, ``report.html`` and one page per call.
- ``vamos repair runs/NAME``: moves the results file's unreadable lines (a torn or
  corrupted write) aside, so that eval and report can go on; their calls run again.
- ``vamos redteam --stack NAME --scripted 20 --sceptic 20 --rubric FILE``: the red-team
  gate; prints the judge's dimension table and exits 1 when the gate fails.

Every argument is checked before anything runs: a usage problem (a number out of range,
an unknown or unloadable stack, a stack whose key or server is missing, a task file the
world does not know, a run folder started with other settings, a cluster that does not
answer) is one line on stderr naming the argument, what was expected and what arrived,
and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vamos_env.channel.parameters import DEFAULT_RECOGNISER, RECOGNISER_PROFILES
from vamos_env.cli.args import CommandLineParser, fail, integer, level_db, seconds, share, text

MAX_REPEATS = 1000


def register(subparsers: Any) -> None:
    """Add ``eval``, ``report`` and ``redteam`` to ``vamos``'s subparsers."""
    run = subparsers.add_parser(
        "eval", help="evaluate stacks x tasks x repeats (Ray), resumable, into runs/NAME"
    )
    add_eval_arguments(run)
    run.set_defaults(func=_eval)

    report = subparsers.add_parser("report", help="write a run's summary.md and report.html")
    report.add_argument("run", help="the run folder (runs/NAME)")
    report.add_argument("--prices", help="price table JSON to re-price the tokens")
    report.add_argument("--title", type=text("title", 300), help="the report's title")
    report.set_defaults(func=_report)

    repair = subparsers.add_parser(
        "repair", help="move a results file's unreadable lines aside (their calls run again)"
    )
    repair.add_argument("run", help="the run folder (runs/NAME)")
    repair.set_defaults(func=_repair)

    red = subparsers.add_parser(
        "redteam", help="the red-team gate: scripted and sceptic calls, judged (exit 1: fail)"
    )
    red.add_argument("--stack", required=True, help="the stack to test (name or NAME=ENTRY)")
    red.add_argument(
        "--scripted", type=integer(0, 10_000), default=20, help="calm/angry calls (default 20)"
    )
    red.add_argument(
        "--sceptic", type=integer(0, 10_000), default=20, help="sceptic calls (default 20)"
    )
    red.add_argument("--rubric", help="rubric JSON file (default: the shipped rubric)")
    red.add_argument("--judge", choices=("heuristic", "llm"), default="heuristic")
    red.add_argument(
        "--model", default="gpt-4o-mini", help="model for --judge llm (local: the local server)"
    )
    red.add_argument("--base-url", help="OpenAI-compatible server for --judge llm")
    red.add_argument("--tasks", default="exam", help="where the calls' tasks come from")
    red.add_argument(
        "--min-pass-rate",
        type=share,
        default=1.0,
        help="share of transcripts that must pass on their own (default 1.0: all)",
    )
    red.add_argument("--timeout", type=seconds(), default=900.0, help="seconds per call")
    red.add_argument("--out", help="folder to write the judged calls to (judged.jsonl)")
    red.set_defaults(func=_redteam)


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stacks",
        required=True,
        type=text("stack list", 10_000),
        help="comma-separated stack names, or NAME=module:factory / NAME=file.py:factory",
    )
    parser.add_argument(
        "--tasks",
        default="exam",
        type=text("task selection", 100_000),
        help="exam, singles, exam:N, a task file, or task ids",
    )
    parser.add_argument(
        "--repeats",
        type=integer(1, MAX_REPEATS),
        default=3,
        help="repeats per task (default 3)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=integer(1, 10_000),
        default=5,
        help="calls in flight at most (default 5)",
    )
    parser.add_argument("--timeout", type=seconds(), default=900.0, help="seconds per call (900)")
    parser.add_argument(
        "--out", required=True, type=text("folder", 4096), help="the run folder, e.g. runs/NAME"
    )
    parser.add_argument(
        "--address",
        type=text("address", 500),
        help="a Ray cluster's address, HOST:PORT (default: a local Ray); see docs/evaluation.md",
    )
    parser.add_argument(
        "--trial", default="default", type=text("trial id", 200), help="trial id (sets the casting)"
    )
    parser.add_argument(
        "--caller",
        choices=("scripted", "openai", "gemini", "local", "realtime", "gemini-live"),
        default="scripted",
        help="who plays the caller: scripted (default), an LLM (openai, gemini), or local "
        "(the local model server, started if none answers; docs/llm.md); in duplex calls, "
        "a speech-to-speech session (realtime, gemini-live; docs/duplex.md)",
    )
    parser.add_argument(
        "--max-turns", type=integer(1, 1000), default=60, help="agent turns per call (60)"
    )
    parser.add_argument("--level-db", type=level_db, help="background level override")
    parser.add_argument(
        "--channel",
        choices=("text", "audio"),
        default="text",
        help="text (fast, default) or audio: real TTS, noise and ASR (slow; needs the audio extra)",
    )
    parser.add_argument(
        "--mode",
        choices=("text", "duplex"),
        default="text",
        help="text (turns, default) or duplex: full-duplex audio calls on 20 ms frames with a "
        "voice stack such as cascade (needs the audio extra; docs/duplex.md)",
    )
    parser.add_argument(
        "--line",
        default="wideband",
        help="duplex only: the telephony line, wideband (default), narrowband, g711, or any of "
        "them with -loss<percent> (g711-loss2)",
    )
    parser.add_argument(
        "--grading-ear",
        choices=("whisper-tiny.en", "whisper-base"),
        default="whisper-tiny.en",
        help="duplex only: the recogniser the grader reads the agent's audio with, over its "
        "stretches packed into 28-s windows (default whisper-tiny.en; docs/grading.md)",
    )
    parser.add_argument(
        "--recogniser",
        choices=RECOGNISER_PROFILES,
        default=DEFAULT_RECOGNISER,
        help="the text channel's recogniser profile: whisper-tiny.en (measured, default) or "
        "ideal (no recognition errors, for ablations); see docs/rooms.md",
    )
    parser.add_argument(
        "--executor",
        choices=("ray", "local"),
        default="ray",
        help="ray (default) or local (this process only; for debugging)",
    )
    parser.add_argument(
        "--num-cpus", type=integer(1, 4096), help="CPUs for a local Ray (default: all)"
    )
    parser.add_argument("--batch-size", type=integer(1, 10_000), help="offline calls per Ray task")
    parser.add_argument("--prices", help="price table JSON (default: the shipped one)")
    parser.add_argument(
        "--retry-faults",
        action="store_true",
        help="also rerun the calls stored as benchmark faults (excluded), in place",
    )
    parser.add_argument("--report", action="store_true", help="write the report at the end")
    parser.add_argument("--quiet", action="store_true", help="no progress line")


def _fail(message: str, command: str = "vamos") -> int:
    return fail(command, message)


def _eval(args: argparse.Namespace) -> int:
    from vamos_env.envs.energy.tasks.schema import TaskFileError
    from vamos_env.runner.evaluate import EvalConfig, evaluate
    from vamos_env.runner.store import StoreError

    config = EvalConfig(
        stacks=[s for s in args.stacks.split(",") if s.strip()],
        out=Path(args.out),
        tasks=args.tasks,
        repeats=args.repeats,
        max_concurrency=args.max_concurrency,
        timeout_s=args.timeout,
        trial_id=args.trial,
        caller=args.caller,
        max_agent_turns=args.max_turns,
        level_db=args.level_db,
        channel=args.channel,
        recogniser=args.recogniser,
        mode=args.mode,
        line=args.line,
        grading_ear=args.grading_ear,
        executor=args.executor,
        address=args.address,
        num_cpus=args.num_cpus,
        batch_size=args.batch_size,
        prices=Path(args.prices) if args.prices else None,
        progress=not args.quiet,
        retry_faults=args.retry_faults,
    )
    try:
        summary = evaluate(config)
    except (ValueError, TaskFileError, StoreError, OSError) as exc:
        return _fail(str(exc), "vamos eval")
    retried = f" ({summary.retried} benchmark fault(s) rerun)" if summary.retried else ""
    print(
        f"{summary.ran} call(s) run in {summary.wall_s:.1f} s ({summary.calls_per_s:.1f} calls/s)"
        f"{retried}; {summary.already_done} already stored; {summary.planned} planned. "
        f"Store: {summary.out / 'results.jsonl'}"
    )
    if summary.excluded_stored:
        print(
            f"{summary.excluded_stored} stored call(s) are benchmark faults (excluded); "
            "rerun them in place with --retry-faults"
        )
    if summary.async_stats.peak_in_flight:
        stats = summary.async_stats
        print(
            f"async calls: at most {stats.peak_in_flight} in flight on {stats.processes} "
            f"process(es), about {stats.bytes_per_live_call / 1024:.0f} KiB per live call"
        )
    if args.report:
        return _write_report(summary.out, None, None)
    return 0


def _write_report(run: Path, prices: str | None, title: str | None) -> int:
    from vamos_env.report import write_report
    from vamos_env.runner.store import StoreError

    try:
        files = write_report(run, prices=prices, title=title)
    except (ValueError, StoreError, OSError) as exc:
        return _fail(str(exc), "vamos report")
    metrics = files.metrics
    print(f"Pooled completion: {metrics.pooled.text()} over {len(metrics.stacks)} stack(s)")
    for stack in metrics.stacks:
        print(f"  {stack.stack:<14} {stack.completion.text()}")
    print(f"Report: {files.html}\nSummary: {files.summary}")
    return 0


def _report(args: argparse.Namespace) -> int:
    return _write_report(Path(args.run), args.prices, args.title)


def _repair(args: argparse.Namespace) -> int:
    from vamos_env.runner.store import StoreError, repair_store

    try:
        repaired = repair_store(args.run)
    except (StoreError, OSError) as exc:
        return _fail(str(exc), "vamos repair")
    if not repaired.moved:
        print(f"{repaired.path}: every line is a readable call record; nothing to repair")
        return 0
    print(
        f"{repaired.path}: moved {repaired.moved} unreadable line(s) (line(s) "
        f"{', '.join(map(str, repaired.lines[:10]))}{', ...' if len(repaired.lines) > 10 else ''})"
        f" to {repaired.rejected}; {repaired.kept} record(s) kept. Their calls run again on the "
        "next vamos eval."
    )
    return 0


def _redteam(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from vamos_env.cli.grading import endpoint_of
    from vamos_env.envs.energy.tasks.schema import TaskFileError
    from vamos_env.grading.judge import HeuristicJudge, LLMJudge, load_rubric
    from vamos_env.grading.models import GradingFault
    from vamos_env.runner.redteam import run_redteam, write_redteam

    try:
        rubric = load_rubric(args.rubric)
        judge: Any = (
            LLMJudge(endpoint_of(args.model, args.base_url), rubric)
            if args.judge == "llm"
            else HeuristicJudge()
        )
        result = run_redteam(
            args.stack,
            scripted=args.scripted,
            sceptic=args.sceptic,
            rubric=rubric,
            judge=judge,
            tasks=args.tasks,
            min_pass_rate=args.min_pass_rate,
            timeout_s=args.timeout,
        )
    except (ValueError, TaskFileError, ValidationError, GradingFault, OSError) as exc:
        return _fail(str(exc), "vamos redteam")
    report = result.report
    personas = sorted({r.persona for r in result.records})
    print(
        f"red team: stack {args.stack}, {len(result.records)} calls "
        f"({args.scripted} scripted, {args.sceptic} sceptic; personas {', '.join(personas)}), "
        f"rubric {rubric.name}, judge {judge.name}"
    )
    print(report.table())
    if report.failing:
        print("failing on their own: " + ", ".join(report.failing))
    if args.out:
        print(f"judged calls: {write_redteam(result, args.out)}")
    return 0 if report.passed else 1


def main(argv: list[str] | None = None) -> int:
    """These commands without the rest of ``vamos`` (``scripts/rollout.py``, tests)."""
    parser = CommandLineParser(prog="vamos")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
