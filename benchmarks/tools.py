"""How fast is each of the 16 tools, in-process, on a fresh clone of the seeded world?

For every tool, each sample builds a fresh clone, opens a call session, verifies the
caller (not timed) and times one call through ``CallSession.call``:

- **cold**: the first call of the session after verification (nothing cached);
- **warm**: the same call again in the same session (read tools only; cached reads of the
  account make repeated reads cheap, and any write drops the cache).

Write tools run on an account where the write happens (make_payment pays an open bill,
create_payment_arrangement opens a loan, ...), so each cold sample includes the writes.

Run: .venv/bin/python benchmarks/tools.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vamos_env.envs.energy.seed import SeedReport, default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tools import TOOL_NAMES
from vamos_env.envs.energy.world import Account

Arguments = Callable[[Account, SeedReport], dict[str, Any]]


def _open_bill(account: Account, report: SeedReport) -> str:
    bill = next(b for b in reversed(account.bills) if b.status == "open")
    return report.accounts[account.account_number].invoices[bill.number_suffix]


def _two_bills(account: Account, report: SeedReport) -> dict[str, Any]:
    invoices = report.accounts[account.account_number].invoices
    newest, older = account.bills[-1], account.bills[-2]
    return {
        "bill_id": invoices[older.number_suffix],
        "compare_to_bill_id": invoices[newest.number_suffix],
    }


def _payment(account: Account, report: SeedReport) -> dict[str, Any]:
    bill = next(b for b in reversed(account.bills) if b.status == "open")
    card = next(c for c in account.cards if not c.declines)
    seeded = report.accounts[account.account_number]
    return {
        "bill_id": seeded.invoices[bill.number_suffix],
        "payment_method_id": seeded.payment_methods[card.stripe_test_token],
        "amount_cents": bill.total_cents,
    }


def _verify(account: Account, _: SeedReport) -> dict[str, Any]:
    return {
        "account_number": account.account_number,
        "name_on_account": account.full_name,
        "second_factor": account.mailing_address.postal_code,
    }


@dataclass(frozen=True)
class Case:
    tool: str
    slot: str
    arguments: Arguments
    writes: bool = False


CASES = (
    Case("verify_caller", "A04", _verify),
    Case("get_account", "A10", lambda a, r: {}),
    Case("list_bills", "A10", lambda a, r: {}),
    Case("get_bill", "A10", lambda a, r: {"bill_id": _open_bill(a, r)}),
    Case("explain_bill", "A10", lambda a, r: {"bill_id": _open_bill(a, r)}),
    Case("compare_bills", "A10", _two_bills),
    Case("get_payment_history", "A16", lambda a, r: {}),
    Case("make_payment", "A04", _payment, writes=True),
    Case("quote_payment_arrangement", "A04", lambda a, r: {"installments": 6}),
    Case("create_payment_arrangement", "A04", lambda a, r: {"installments": 6}, writes=True),
    Case("get_payment_arrangement", "A16", lambda a, r: {}),
    Case("modify_payment_arrangement", "A16", lambda a, r: {"amount_cents": 5000}, writes=True),
    Case(
        "request_due_date_extension",
        "A14",
        lambda a, r: {"bill_id": _open_bill(a, r), "days": 10},
        writes=True,
    ),
    Case("set_paperless_billing", "A01", lambda a, r: {"enabled": False}, writes=True),
    Case("get_supplier_info", "A06", lambda a, r: {}),
    Case("transfer_to_human", "A07", lambda a, r: {"reason": "shutoff process"}),
)


def measure(case: Case, repeat: int) -> tuple[float, float | None, bool]:
    snapshot = default_snapshot()
    report = snapshot.report
    account = report.manifest.by_slot(case.slot)
    arguments = case.arguments(account, report)
    cold: list[float] = []
    warm: list[float] = []
    ok = True
    for _ in range(repeat):
        clients = snapshot.clone().clients()
        session = CallSession(clients)
        if case.tool != "verify_caller":
            session.call("verify_caller", _verify(account, report))
        started = time.perf_counter()
        result = session.call(case.tool, arguments)
        cold.append(time.perf_counter() - started)
        ok = ok and "error" not in result
        if not case.writes and case.tool not in ("verify_caller", "transfer_to_human"):
            started = time.perf_counter()
            session.call(case.tool, arguments)
            warm.append(time.perf_counter() - started)
        clients.close()
    return (
        statistics.median(cold) * 1e3,
        statistics.median(warm) * 1e3 if warm else None,
        ok,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    repeat = parser.parse_args().repeat
    default_snapshot()  # build once, outside the timings
    assert {c.tool for c in CASES} == set(TOOL_NAMES)
    print(f"median in-process latency per tool call, {repeat} samples each (milliseconds)")
    print(f"{'tool':<30} {'account':<8} {'cold':>8} {'warm':>8}  result")
    for case in CASES:
        cold, warm, ok = measure(case, repeat)
        warm_text = f"{warm:8.3f}" if warm is not None else f"{'-':>8}"
        outcome = "ok" if ok else "refusal (expected for this account)"
        print(f"{case.tool:<30} {case.slot:<8} {cold:8.3f} {warm_text}  {outcome}")


if __name__ == "__main__":
    main()
