"""``vamos twins serve`` and ``vamos twins show``: the service twins on the command line.

- ``vamos twins serve [--seeded] [--host H] [--port P] [--allow-host NAME] [--admin-token T]``
  serves both twins on one loopback port and prints the variables an outside agent needs
  (the published benchmark's names) and how to reset the world between calls;
- ``vamos twins show [--clones N]`` builds the seeded world, clones it, shows the accounts
  and what a clone costs. Everything shown is read back through the clients (the official
  Stripe SDK and our Fineract client) from a fresh clone, the way a tool would see it.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import statistics
import sys
import time
from decimal import Decimal
from typing import Any

from vamos_env import clock
from vamos_env.cli.args import fail, integer, loopback_host, port

ADMIN_TOKEN_VARIABLE = "VAMOS_TWINS_ADMIN_TOKEN"


def register(subparsers: Any) -> None:
    """Add ``twins serve`` and ``twins show`` to ``vamos``'s subparsers."""
    twins = subparsers.add_parser("twins", help="the service twins")
    twins_sub = twins.add_subparsers(dest="twins_command", required=True)
    serve = twins_sub.add_parser("serve", help="serve the twins on a loopback port")
    serve.add_argument("--seeded", action="store_true", help="serve a clone of the seeded world")
    serve.add_argument(
        "--host", type=loopback_host, default="127.0.0.1", help="127.0.0.1, localhost or ::1"
    )
    serve.add_argument("--port", type=port, default=8111, help="TCP port (0: any free one)")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name the Host header may carry (e.g. a container's); repeatable",
    )
    serve.add_argument(
        "--admin-token",
        help=f"token for the /__vamos/ routes (default ${ADMIN_TOKEN_VARIABLE}, else random)",
    )
    serve.set_defaults(func=_serve)
    show = twins_sub.add_parser(
        "show", help="build the seeded snapshot, clone it, print the accounts and clone timing"
    )
    show.add_argument(
        "--clones",
        type=integer(1, 1_000_000),
        default=2000,
        help="clones to time (default 2000)",
    )
    show.set_defaults(func=lambda args: run_demo(clones=args.clones))


def _serve(args: argparse.Namespace) -> int:
    import signal

    from vamos_env.clients.config import ServiceEndpoints
    from vamos_env.twins.http import Routes
    from vamos_env.twins.serve import TwinServer
    from vamos_env.twins.snapshot import Twins

    command = "vamos twins serve"
    token = args.admin_token or os.environ.get(ADMIN_TOKEN_VARIABLE) or None
    if token is not None and len(token) < 8:
        return fail(command, f"--admin-token: expected 8 characters or more, got {len(token)}")
    reset: Any = None
    if args.seeded:
        from vamos_env.envs.energy.seed import default_snapshot

        snapshot = default_snapshot()
        twins = snapshot.clone()

        def reset() -> tuple[Routes, Routes]:
            fresh = snapshot.clone()
            return fresh.billing, fresh.loans

    else:
        from vamos_env.twins.fineract import LoanTwin
        from vamos_env.twins.stripe import BillingTwin

        twins = Twins(BillingTwin(), LoanTwin())
    try:
        server = TwinServer(
            twins.billing,
            twins.loans,
            host=args.host,
            port=args.port,
            reset=reset,
            admin_token=token,
            allowed_hosts=args.allow_host,
        )
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        if exc.errno == errno.EADDRINUSE:
            return fail(command, f"--port: expected a free port, got {args.port} ({reason})")
        return fail(command, f"--host/--port: cannot listen on {args.host}:{args.port} ({reason})")
    endpoints = ServiceEndpoints(stripe_api_base=server.base_url, fineract_api_base=server.base_url)
    for key, value in endpoints.as_env().items():
        print(f"{key}={value}")
    auth = f"-H 'Authorization: Bearer {server.admin_token}'"
    if args.seeded:
        print(
            f"# reset to the seeded snapshot: curl -X POST {auth} {server.base_url}/__vamos/reset"
        )
    print(f"# health: curl {auth} {server.base_url}/__vamos/health")
    sys.stdout.flush()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        server.serve_forever()
    return 0


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) / 100:,.2f}"


def run_demo(clones: int = 2000) -> int:
    from vamos_env.envs.energy.seed import default_snapshot

    started = time.perf_counter()
    snapshot = default_snapshot()
    build_s = time.perf_counter() - started
    report = snapshot.report
    print(
        f"Seeded {len(report.accounts)} accounts through the Stripe SDK and the Fineract client "
        f"({report.api_calls} API calls) and verified them in {build_s:.2f} s."
    )
    print(f"Frozen clock: {clock.FROZEN_ISO}. Usage: {report.manifest.usage_source}")
    print()

    twins = snapshot.clone()
    clients = twins.clients()
    today = clock.TODAY
    header = (
        f"{'account':11} {'name':28} {'prem':>4} {'cards':>5} {'open':>10} "
        f"{'past due':>10} {'days':>4} {'arrangement':>12}  situations"
    )
    print(header)
    print("-" * len(header))
    for account in report.manifest.accounts:
        seeded = report.accounts[account.account_number]
        customer = clients.stripe.v1.customers.retrieve(seeded.customer_id)
        invoices = clients.stripe.v1.invoices.list(
            params={"customer": customer.id, "status": "open", "limit": 100}
        ).data
        open_cents = sum(i.amount_remaining for i in invoices)
        due = {i.id: clock.from_unix(i.due_date or clock.NOW_UNIX).date() for i in invoices}
        late = [i for i in invoices if due[i.id] < today]
        past_due = sum(i.amount_remaining for i in late)
        days = max(((today - due[i.id]).days for i in late), default=0)
        cards = clients.stripe.v1.payment_methods.list(
            params={"customer": customer.id, "type": "card"}
        ).data
        premises = clients.stripe.v1.subscriptions.list(params={"customer": customer.id}).data
        plan = "-"
        loan_ref = customer.metadata.to_dict().get("arrangement_id") if customer.metadata else None
        if loan_ref:
            loan = clients.fineract.get_loan(int(loan_ref))
            outstanding = int(Decimal(str(loan["summary"]["totalOutstanding"])) * 100)
            plan = _money(outstanding)
        situations = ", ".join(account.situations[:3])
        print(
            f"{account.account_number:11} {(customer.name or '')[:28]:28} {len(premises):>4} "
            f"{len(cards):>5} {_money(open_cents):>10} {_money(past_due):>10} {days:>4} "
            f"{plan:>12}  {situations}"
        )
    clients.close()

    samples = []
    for _ in range(clones):
        t = time.perf_counter()
        snapshot.clone()
        samples.append(time.perf_counter() - t)
    median_us = statistics.median(samples) * 1e6
    print()
    print(
        f"clone() of both twins: median {median_us:.1f} us over {clones} clones "
        f"(target: at most 1000 us). Each call of the benchmark gets its own clone."
    )
    return 0
