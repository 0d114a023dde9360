"""The request catalogue: validity from the policy model, values, checks and windows."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env.envs.energy import policy
from vamos_env.envs.energy.tasks.catalogue import (
    KIND_ORDER,
    BuiltRequest,
    Invalid,
    RequestSpec,
    build_request,
    candidates,
)
from vamos_env.envs.energy.tasks.state import AccountState


def built(state: AccountState, step: str, index: int = 0) -> BuiltRequest:
    result = build_request(state, RequestSpec.parse(step), index)
    assert isinstance(result, BuiltRequest), result
    return result


def checks(request: BuiltRequest) -> dict[str, object]:
    return {c.id: c.value for c in request.checks}


def test_every_kind_is_valid_somewhere_in_the_world(states: dict[str, AccountState]) -> None:
    seen = {b.spec.kind for state in states.values() for b in candidates(state)}
    assert seen == set(KIND_ORDER)


def test_arrangement_values_come_from_the_policy_quote(states: dict[str, AccountState]) -> None:
    a04 = states["A04"]
    request = built(a04, "create_arrangement-6")
    quote = policy.quote_arrangement(a04.facts(), 6)
    assert quote.monthly_installment_cents == 3664 and quote.first_installment_cents == 3666
    assert checks(request)["r0_monthly_installment"] == 3664
    assert checks(request)["r0_first_installment"] == 3666
    (change,) = request.changes
    assert change.tool == "create_payment_arrangement"
    assert change.values == {"installments": 6, "principal_cents": 21986}
    confirm = next(c for c in request.checks if c.kind == "confirm")
    assert confirm.window.after_check == "r0_monthly_installment"
    assert confirm.window.before_tool == "create_payment_arrangement"


def test_pay_after_decline_tries_the_declining_card_first(states: dict[str, AccountState]) -> None:
    a04 = states["A04"]
    request = built(a04, "pay_after_decline-aug")
    declining, good = a04.declining_cards[0], a04.good_cards[0]
    assert request.request.details["first_card_last4"] == declining.last4 == "0002"
    (change,) = request.changes
    assert change.values["payment_method_id"] == good.payment_method_id
    assert change.values["card_last4"] == "8210"
    not_said = next(c for c in request.checks if c.kind == "not_said")
    assert not_said.window.after_tool == "make_payment"
    assert not_said.window.after_outcome == "failure"
    assert not_said.window.before_outcome == "success"


def test_a_report_after_a_write_opens_after_that_write(states: dict[str, AccountState]) -> None:
    a04 = states["A04"]
    paid = built(a04, "pay_bill-aug").after
    balance = built(paid, "balance", 1)
    assert all(c.window.after_tool == "make_payment" for c in balance.checks)
    september = a04.bill("sep")
    assert september is not None
    assert checks(balance) == {"r1_open_balance": september.total_cents}
    fresh = built(a04, "balance")
    assert all(c.window.after_tool is None for c in fresh.checks)


@pytest.mark.parametrize(
    ("slot", "step", "reason"),
    [
        ("A04", "enable_paperless", "already on"),
        ("A02", "disable_paperless", "already off"),
        ("A01", "record_arrangement_payment", "no active arrangement"),
        ("A01", "pay_bill-sep", "not open"),
        ("A04", "arrangement_down_payment-6", "the quote is quote"),
        ("A11", "create_arrangement-6", "quote_then_transfer"),
        ("A07", "create_arrangement-6", "transfer (shutoff_process)"),
        ("A03", "create_arrangement-6", "below_minimum"),
        ("A05", "payment_history", "no card payment"),
        ("A04", "compare_bills-aug", "did not go up"),
    ],
)
def test_invalid_requests_say_why(
    states: dict[str, AccountState], slot: str, step: str, reason: str
) -> None:
    result = build_request(states[slot], RequestSpec.parse(step), 0)
    assert isinstance(result, Invalid)
    assert reason in result.reason


def test_extensions_are_refused_and_never_expect_a_change(states: dict[str, AccountState]) -> None:
    service = built(states["A02"], "due_date_extension-sep")
    assert service.changes == () and service.request.expected_outcome == "refused"
    unchanged = next(c for c in service.checks if c.id == "r0_due_date_unchanged")
    assert unchanged.value == "2026-09-29"
    assert unchanged.window.after_outcome == "failure"
    recent = built(states["A13"], "due_date_extension-sep")
    # Extended on 2026-04-21: the next one is possible 366 days later.
    assert checks(recent)["r0_next_eligible"] == date(2027, 4, 22).isoformat()


def test_transfers_end_the_call(states: dict[str, AccountState]) -> None:
    for slot, step in [
        ("A01", "supervisor"),
        ("A07", "arrangement_shutoff"),
        ("A11", "arrangement_down_payment-6"),
        ("A08", "protections"),
    ]:
        request = built(states[slot], step)
        assert request.ends_call and request.after.transferred
        assert any(c.kind == "called" and c.tool == "transfer_to_human" for c in request.checks)
        assert request.request.expected_outcome == "transferred"


def test_a_promise_is_never_recorded(states: dict[str, AccountState]) -> None:
    promise = built(states["A16"], "promise_to_pay")
    assert promise.changes == ()
    assert promise.not_called == {"modify_payment_arrangement"}
    assert promise.request.details["promised_on"] == "2026-09-17"


def test_spec_parse_names_what_it_expected() -> None:
    assert RequestSpec.parse("pay_bill-aug") == RequestSpec("pay_bill", "aug")
    assert RequestSpec.parse("balance").step == "balance"
    with pytest.raises(ValueError, match=r"expected a request kind .* got 'pay_everything'"):
        RequestSpec.parse("pay_everything")
