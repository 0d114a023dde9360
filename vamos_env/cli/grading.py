"""``vamos grade ...`` and ``vamos judge ...``: calibration and the judge gate on the command line.

- ``vamos grade calibrate RESULTS``: code verifier against LLM verifier on the same checks
  (agreement per check kind and per call, every disagreement listed);
- ``vamos judge gate RESULTS --rubric FILE``: scores every transcript (heuristic judge by
  default, ``--judge llm`` for a model), prints the dimension table, exits 1 when the run
  fails (a transcript fails the rubric, or fewer than ``--min-pass-rate`` pass) and 0 when
  it passes;
- ``vamos judge calibrate LABELS``: the judge's pass/fail against human labels; exits 1
  below the target agreement (85% by default).

RESULTS and LABELS are JSON Lines of graded calls (``vamos_env.grading.records``). A file
that cannot be read, or a model that cannot be reached, exits 2 with the reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from vamos_env.cli.args import CommandLineParser, fail, share


def register(subparsers: Any) -> None:
    """Add the ``grade`` and ``judge`` commands to ``vamos``'s subparsers."""
    grade = subparsers.add_parser("grade", help="grading: calibrate the verifiers")
    grade_sub = grade.add_subparsers(dest="grade_command", required=True)
    calibrate = grade_sub.add_parser(
        "calibrate", help="code verifier against LLM verifier on the same checks"
    )
    calibrate.add_argument("results", help="JSON Lines of graded calls with both verdicts")
    calibrate.add_argument("--json", action="store_true", help="print the report as JSON")
    calibrate.add_argument(
        "--verifier",
        choices=("stored", "llm"),
        default="stored",
        help="stored: the records' LLM checks (default); llm: ask --model for the checks of "
        "records that lack them (their tasks from --tasks)",
    )
    calibrate.add_argument(
        "--model", default="gpt-4o-mini", help="model for --verifier llm (local: the local server)"
    )
    calibrate.add_argument("--base-url", help="OpenAI-compatible server (default OPENAI_BASE_URL)")
    calibrate.add_argument("--tasks", default="exam", help="where the records' tasks come from")
    calibrate.add_argument("--write", help="write the records, LLM checks filled in, to this file")
    calibrate.set_defaults(func=_grade_calibrate)

    judge = subparsers.add_parser("judge", help="the judge gate of the red-teaming rig")
    judge_sub = judge.add_subparsers(dest="judge_command", required=True)
    gate = judge_sub.add_parser("gate", help="fail (exit 1) a run the judge fails")
    gate.add_argument("results", help="JSON Lines of graded calls with transcripts or scores")
    _judge_options(gate)
    gate.add_argument(
        "--min-pass-rate",
        type=share,
        default=1.0,
        help="share of transcripts that must pass on their own (default 1.0: all)",
    )
    gate.set_defaults(func=_judge_gate)
    labels = judge_sub.add_parser("calibrate", help="judge pass/fail against human labels")
    labels.add_argument("labels", help="JSON Lines of graded calls with human_label")
    _judge_options(labels)
    labels.add_argument("--target", type=share, default=0.85, help="agreement to reach")
    labels.add_argument(
        "--use-stored", action="store_true", help="use scores stored in the records"
    )
    labels.set_defaults(func=_judge_calibrate)


def _judge_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rubric", help="rubric JSON file (default: the shipped rubric)")
    parser.add_argument("--judge", choices=("heuristic", "llm"), default="heuristic")
    parser.add_argument(
        "--model",
        default="gpt-4o-mini",
        help="model for --judge llm (local: the local server, started if none answers)",
    )
    parser.add_argument("--base-url", help="OpenAI-compatible server (default OPENAI_BASE_URL)")


def endpoint_of(model: str, base_url: str | None) -> Any:
    """The grader's endpoint; ``local`` finds or starts the local server (docs/llm.md)."""
    from vamos_env.grading.llm import ModelEndpoint
    from vamos_env.grading.models import GradingFault

    if model != "local":
        return ModelEndpoint(model=model, base_url=base_url)
    from vamos_env.llm.roles import grader_endpoint
    from vamos_env.llm.server import LocalServerError

    try:
        return grader_endpoint(model, base_url)
    except LocalServerError as exc:
        raise GradingFault(str(exc)) from None


def _fail(message: str) -> int:
    return fail("vamos", message)


def _grade_calibrate(args: argparse.Namespace) -> int:
    from vamos_env.grading.calibration import compare_verifiers
    from vamos_env.grading.models import GradingFault
    from vamos_env.grading.records import RecordFileError, read_records

    try:
        records = list(read_records(args.results))
        if args.verifier == "llm":
            records = _verify_with_model(records, args)
        report = compare_verifiers(records)
    except (RecordFileError, GradingFault, OSError, ValueError) as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps({**report.model_dump(), "rate": report.rate}, indent=2))
    else:
        print(report.report())
    return 0


def _verify_with_model(records: list[Any], args: argparse.Namespace) -> list[Any]:
    """The records, each lacking LLM checks given the model's (a fault is recorded, not raised)."""
    from vamos_env.envs.energy.env import resolve_tasks
    from vamos_env.grading.llm_verifier import LLMVerifier
    from vamos_env.grading.models import GradingFault
    from vamos_env.grading.records import write_records
    from vamos_env.grading.timeline import Timeline

    tasks = {t.task_id: t for t in resolve_tasks(args.tasks).tasks}
    verifier = LLMVerifier(endpoint_of(args.model, args.base_url))
    out = []
    for record in records:
        if record.llm_checks is None and record.transcript is not None:
            task = tasks.get(record.task_id)
            if task is None:
                raise ValueError(
                    f"{record.key}: expected task {record.task_id!r} in --tasks {args.tasks}, "
                    "got no such task"
                )
            try:
                checks = verifier.judge(task, Timeline.of(record.transcript))
                record = record.model_copy(update={"llm_checks": checks, "llm_fault": None})
            except GradingFault as exc:
                record = record.model_copy(update={"llm_fault": str(exc)})
        out.append(record)
    if args.write:
        write_records(args.write, out)
    return out


def _make_judge(args: argparse.Namespace) -> Any:
    from vamos_env.grading.judge import HeuristicJudge, LLMJudge, load_rubric

    rubric = load_rubric(args.rubric)
    if args.judge == "llm":
        return rubric, LLMJudge(endpoint_of(args.model, args.base_url), rubric)
    return rubric, HeuristicJudge()


def _judge_gate(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from vamos_env.grading.calibration import score_record
    from vamos_env.grading.judge import gate_run
    from vamos_env.grading.models import GradingFault
    from vamos_env.grading.records import RecordFileError, read_records

    try:
        rubric, judge = _make_judge(args)
        records = list(read_records(args.results))
        scored = [(r.key, score_record(r, judge)) for r in records]
        report = gate_run(scored, rubric, min_pass_rate=args.min_pass_rate)
    except (RecordFileError, GradingFault, ValidationError, OSError, ValueError) as exc:
        return _fail(str(exc))
    print(f"judge gate: {len(scored)} transcript(s), rubric {rubric.name}, judge {judge.name}")
    print(report.table())
    if report.failing:
        print("failing on their own: " + ", ".join(report.failing))
    return 0 if report.passed else 1


def _judge_calibrate(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from vamos_env.grading.calibration import judge_agreement
    from vamos_env.grading.models import GradingFault
    from vamos_env.grading.records import RecordFileError, read_records

    try:
        rubric, judge = _make_judge(args)
        records = list(read_records(args.labels))
    except (RecordFileError, GradingFault, ValidationError, OSError, ValueError) as exc:
        return _fail(str(exc))
    report = judge_agreement(records, rubric, judge, target=args.target, use_stored=args.use_stored)
    print(report.report())
    return 0 if report.meets_target else 1


def main(argv: list[str] | None = None) -> int:
    """Run the grading commands without the rest of ``vamos`` (tests, and until wired in)."""
    parser = CommandLineParser(prog="vamos")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
