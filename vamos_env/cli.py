"""``vamos``: the command line.

Subcommands import what they need lazily so that ``vamos --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from vamos_env import cli_eval, cli_grading, cli_tasks
from vamos_env.channel.audio import calibration as channel_calibration


def _cmd_demo(args: argparse.Namespace) -> int:
    from vamos_env.runner.mainjob import run_main_job

    return run_main_job(args.out, repeats=args.repeats)


def _cmd_twins_show(args: argparse.Namespace) -> int:
    from vamos_env.demo import run_demo

    return run_demo(clones=args.clones)


def _cmd_twins_serve(args: argparse.Namespace) -> int:
    import signal

    from vamos_env.clients.config import ServiceEndpoints
    from vamos_env.twins.http import Routes
    from vamos_env.twins.serve import TwinServer
    from vamos_env.twins.snapshot import Twins

    if args.seeded:
        from vamos_env.envs.energy.seed import default_snapshot

        snapshot = default_snapshot()
        twins = snapshot.clone()

        def reset() -> tuple[Routes, Routes]:
            fresh = snapshot.clone()
            return fresh.billing, fresh.loans

        server = TwinServer(twins.billing, twins.loans, host=args.host, port=args.port, reset=reset)
    else:
        from vamos_env.twins.fineract import LoanTwin
        from vamos_env.twins.stripe import BillingTwin

        twins = Twins(BillingTwin(), LoanTwin())
        server = TwinServer(twins.billing, twins.loans, host=args.host, port=args.port)
    endpoints = ServiceEndpoints(stripe_api_base=server.base_url, fineract_api_base=server.base_url)
    for key, value in endpoints.as_env().items():
        print(f"{key}={value}")
    if args.seeded:
        print(f"# reset to the seeded snapshot: curl -X POST {server.base_url}/__vamos/reset")
    sys.stdout.flush()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        server.serve_forever()
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from vamos_env.play import play

    return play(list(args.rest))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vamos", description="vamos-env command line")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo",
        help="the main job: every offline stack on the exam, 3 repeats, then the report",
    )
    demo.add_argument("--out", default="runs/exam", help="run folder (default runs/exam)")
    demo.add_argument("--repeats", type=int, default=3)
    demo.set_defaults(func=_cmd_demo)

    twins = sub.add_parser("twins", help="the service twins")
    twins_sub = twins.add_subparsers(dest="twins_command", required=True)
    serve = twins_sub.add_parser("serve", help="serve the twins on a loopback port")
    serve.add_argument("--seeded", action="store_true", help="serve a clone of the seeded world")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8111)
    serve.set_defaults(func=_cmd_twins_serve)
    show = twins_sub.add_parser(
        "show", help="build the seeded snapshot, clone it, print the accounts and clone timing"
    )
    show.add_argument("--clones", type=int, default=2000, help="clones to time (default 2000)")
    show.set_defaults(func=_cmd_twins_show)

    play = sub.add_parser(
        "play",
        help="be the agent yourself in a terminal call (words, or /tool NAME {json})",
        add_help=False,
    )
    play.add_argument("rest", nargs=argparse.REMAINDER)
    play.set_defaults(func=_cmd_play)

    cli_tasks.register(sub)
    cli_grading.register(sub)
    cli_eval.register(sub)
    channel_calibration.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["play"]:
        # play has its own parser; argparse's REMAINDER would not pass "--task" through.
        from vamos_env.play import play

        return play(argv[1:])
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
