"""``vamos``: the command line, one module per verb group.

- ``evaluation``: ``vamos eval``, ``vamos report``, ``vamos repair``, ``vamos redteam``;
- ``grading``: ``vamos grade ...`` and ``vamos judge ...``;
- ``tasks``: ``vamos tasks ...``;
- ``twins``: ``vamos twins serve`` and ``vamos twins show``;
- ``play``: ``vamos play`` (be the agent in a terminal);
- ``llm``: ``vamos llm serve`` and ``vamos llm prepare`` (the local model server);
- ``args``: the argument types and the one-line usage errors every command shares.

``vamos demo`` (the main job) is defined here. Subcommands import what they need lazily
so that ``vamos --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from vamos_env.cli.args import CommandLineParser, integer


def _cmd_demo(args: argparse.Namespace) -> int:
    from vamos_env.runner.mainjob import run_main_job

    return run_main_job(args.out, repeats=args.repeats)


def _cmd_play(args: argparse.Namespace) -> int:
    from vamos_env.cli.play import play

    return play(list(args.rest))


def build_parser() -> argparse.ArgumentParser:
    # Imported here, not at the top: ``python -m vamos_env.cli.grading`` (and the others)
    # must not find their own module already imported by the package.
    from vamos_env.channel.audio import calibration as channel_calibration
    from vamos_env.cli import evaluation, grading, llm, tasks, twins

    parser = CommandLineParser(prog="vamos", description="vamos-env command line")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo",
        help="the main job: every offline stack on the exam, 3 repeats, then the report",
    )
    demo.add_argument("--out", default="runs/exam", help="run folder (default runs/exam)")
    demo.add_argument("--repeats", type=integer(1, 1000), default=3)
    demo.set_defaults(func=_cmd_demo)

    twins.register(sub)

    play = sub.add_parser(
        "play",
        help="be the agent yourself in a terminal call (words, or /tool NAME {json})",
        add_help=False,
    )
    play.add_argument("rest", nargs=argparse.REMAINDER)
    play.set_defaults(func=_cmd_play)

    tasks.register(sub)
    grading.register(sub)
    evaluation.register(sub)
    llm.register(sub)
    channel_calibration.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["play"]:
        # play has its own parser; argparse's REMAINDER would not pass "--task" through.
        from vamos_env.cli.play import play

        return play(argv[1:])
    args = build_parser().parse_args(argv)
    return int(args.func(args))
