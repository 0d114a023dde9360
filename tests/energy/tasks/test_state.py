"""The simulated account: built from the manifest and seeded ids, changed by the writes."""

from __future__ import annotations

from datetime import date

from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.tasks.state import AccountState
from vamos_env.twins.snapshot import Snapshot


def test_seeded_state_matches_the_manifest(
    states: dict[str, AccountState], snapshot: Snapshot[SeedReport]
) -> None:
    manifest = snapshot.report.manifest
    for slot, state in states.items():
        account = manifest.by_slot(slot)
        seeded = snapshot.report.accounts[account.account_number]
        assert state.past_due_cents == account.past_due_cents()
        assert state.open_balance_cents == account.open_balance_cents()
        assert state.facts().days_past_due == account.days_past_due()
        assert [b.bill_id for b in state.bills] == [
            seeded.invoices[b.number_suffix] for b in account.bills
        ]
        assert {c.payment_method_id for c in state.cards} == set(seeded.payment_methods.values())


def test_paying_a_bill_clears_it(states: dict[str, AccountState]) -> None:
    a04 = states["A04"]
    august, september = a04.bill("aug"), a04.bill("sep")
    assert august is not None and september is not None
    assert a04.past_due_cents == august.total_cents
    paid = a04.pay("aug")
    assert paid.past_due_cents == 0
    assert paid.open_balance_cents == september.total_cents
    assert paid.writes == ("make_payment",) and paid.last_write == "make_payment"
    assert paid.card_payments()[-1].bill_id == august.bill_id
    assert paid.key != a04.key and a04.pay("aug").key == paid.key


def test_opening_an_arrangement_follows_the_loan_engine(states: dict[str, AccountState]) -> None:
    a04 = states["A04"]
    opened = a04.open_arrangement(6)
    plan = opened.arrangement
    assert plan is not None and plan.opened_in_call
    assert plan.principal_cents == 21986 == a04.past_due_cents
    # The engine: equal instalments rounded half-even, the last absorbs the remainder.
    assert [i.amount_cents for i in plan.instalments] == [3664] * 5 + [3666]
    assert plan.instalments[0].due_on == date(2026, 10, 10)
    assert plan.instalments[-1].due_on == date(2027, 3, 10)
    assert opened.past_due_cents == 0
    assert opened.facts().arrangement_active
    assert [b.settled_by for b in opened.bills if b.code == "aug"] == ["arrangement"]


def test_recording_a_repayment_settles_the_oldest_instalment(
    states: dict[str, AccountState],
) -> None:
    a16 = states["A16"]
    plan = a16.arrangement
    assert plan is not None
    overdue = plan.overdue(a16.today)
    assert [i.due_on for i in overdue] == [date(2026, 8, 16)]
    after = a16.record_repayment(8000, date(2026, 9, 8)).arrangement
    assert after is not None
    assert after.overdue(a16.today) == ()
    assert after.outstanding_cents == plan.outstanding_cents - 8000 == 8000
    assert after.next_unsettled() == after.instalments[5]
