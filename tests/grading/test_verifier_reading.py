"""The code verifier on the catalogue's own checks: binding, conflicts, consent, windows.

Every check here is built from a topic of ``envs/energy/tasks/catalogue.py``, as the exam's
checks are, and every case is a phrasing a careful human grader would pass or fail:
figures bound to their topic in their own clause (swapping the first and the monthly
instalment, or the past-due and the open balance, in one sentence fails), conflicting
figures anywhere in the window, consent given to a question that states the value,
a request's checks counted from the turn that raises it, propositions rather than topic
words, text values as claims, rates as decimals, and promises never claimed as paid.
"""

from __future__ import annotations

from typing import Any

import pytest

from vamos_env.envs.energy.tasks import catalogue as cat
from vamos_env.envs.energy.tasks.schema import Check, Task
from vamos_env.grading.code_verifier import CodeVerifier
from vamos_env.grading.timeline import Timeline
from vamos_env.types import ToolCall, ToolResult, Transcript, Turn


def check(name: str, topic: cat.Topic, value: Any = None, kind: str = "say", **extra: Any) -> Check:
    return Check.model_validate(
        {
            "id": name,
            "request_index": extra.pop("request_index", 0),
            "kind": kind,
            "description": f"The agent says the {topic.name}.",
            "topic": topic.name,
            "topic_phrases": list(topic.phrases),
            "value": value,
            "value_type": None if value is None else topic.value_type,
            **extra,
        }
    )


def task(checks: list[Check], kinds: tuple[str, ...] = ("balance",)) -> Task:
    return Task.model_validate(
        {
            "task_id": "t",
            "caller": {
                "account_number": "8731-71970",
                "full_name": "Samuel Walsh-Obi",
                "second_factor": {"kind": "postal_code", "value": "18360"},
                "opening_line": "Hi.",
            },
            "requests": [
                {
                    "kind": kind,
                    "says": f"Request number {i}: please help with {kind}.",
                    "rephrase": f"Again, request {i}.",
                    "expected_outcome": "resolved",
                }
                for i, kind in enumerate(kinds)
            ],
            "checks": [c.model_dump() for c in checks],
            "meta": {"request_kinds": list(kinds), "request_count": len(kinds)},
        }
    )


def call(*lines: str | tuple[str, dict[str, Any]]) -> Transcript:
    """Turns from "agent: ..." / "caller: ..." lines, and (tool, result) pairs."""
    turns: list[Turn] = []
    for line in lines:
        if isinstance(line, tuple):
            name, result = line
            turns.append(
                Turn(
                    index=len(turns),
                    speaker="tool",
                    tool_call=ToolCall(call_id=f"c{len(turns)}", name=name),
                    tool_result=ToolResult(
                        call_id=f"c{len(turns)}", name=name, ok="error" not in result, result=result
                    ),
                )
            )
            continue
        speaker, _, text = line.partition(": ")
        turns.append(Turn(index=len(turns), speaker=speaker, text=text))  # type: ignore[arg-type]
    return Transcript(task_id="t", turns=turns)


def verdicts(t: Task, transcript: Transcript) -> dict[str, bool | None]:
    return {r.id: r.passed for r in CodeVerifier().judge(t, Timeline.of(transcript))}


# --- figures bound to their topic in their own clause ------------------------------------------

TERMS = [check("first", cat.FIRST, 3687), check("monthly", cat.MONTHLY, 3682)]


@pytest.mark.parametrize(
    ("said", "first", "monthly"),
    [
        ("No down payment: first instalment $36.87, then $36.82 a month.", True, True),
        (
            "First instalment thirty-six eighty-seven, then thirty-six eighty-two a month.",
            True,
            True,
        ),
        ("You'd pay $36.82 a month after a first instalment of $36.87.", True, True),
        ("It's $36.82 a month, with a first instalment of $36.87.", True, True),
        ("The first payment is $36.87 and then it's $36.82 per month.", True, True),
        # the two figures swapped, in one sentence
        ("No down payment: first instalment $36.82, then $36.87 a month.", False, False),
        ("You'd pay $36.87 a month after a first instalment of $36.82.", False, False),
        ("It's $36.87 a month, with a first instalment of $36.82.", False, False),
        ("The first instalment is $36.82 and each month after that is $36.87.", False, False),
    ],
)
def test_instalments_are_bound_to_their_own_clause(said: str, first: bool, monthly: bool) -> None:
    got = verdicts(task(TERMS), call(f"agent: {said}"))
    assert (got["first"], got["monthly"]) == (first, monthly)


BALANCE = [check("past_due", cat.PAST_DUE, 21986), check("open", cat.OPEN_BALANCE, 44000)]


@pytest.mark.parametrize(
    ("said", "past_due", "open_balance"),
    [
        ("You have $219.86 past due and an open balance of $440.00.", True, True),
        ("Your total open balance is $440.00, of which $219.86 is past due.", True, True),
        ("Of your $440.00 balance, $219.86 is past due.", True, True),
        ("Past due: $219.86. Open balance: $440.00.", True, True),
        ("You owe $440.00 in total; $219.86 of it is overdue.", True, True),
        ("You have a past due balance of $219.86 and owe $440.00 altogether.", True, True),
        # swapped
        ("You have $440.00 past due and an open balance of $219.86.", False, False),
        ("Your total open balance is $219.86, of which $440.00 is past due.", False, False),
        ("Past due: $440.00. Open balance: $219.86.", False, False),
    ],
)
def test_past_due_and_open_balance_are_not_interchangeable(
    said: str, past_due: bool, open_balance: bool
) -> None:
    got = verdicts(task(BALANCE), call("caller: What do I owe?", f"agent: {said}"))
    assert (got["past_due"], got["open"]) == (past_due, open_balance)


def test_a_threshold_is_not_a_statement_of_the_amount() -> None:
    checks = [check("past_due", cat.PAST_DUE, 3000), check("minimum", cat.MINIMUM, 5000)]
    said = "Unfortunately an arrangement needs at least $50.00 past due; you have $30.00 past due."
    assert verdicts(task(checks), call(f"agent: {said}")) == {"past_due": True, "minimum": True}


PAY = [
    check("card", cat.CARD, "0505", window={"before_tool": "make_payment"}),
    check("amount", cat.AMOUNT, 20391, window={"before_tool": "make_payment"}),
    Check(
        id="confirm",
        request_index=0,
        kind="confirm",
        description="The caller agrees.",
        topic="caller agrees",
        topic_phrases=cat.AGREES,
        window={"after_check": "amount", "before_tool": "make_payment"},
    ),
]


@pytest.mark.parametrize(
    ("question", "amount", "consent"),
    [
        ("Shall I charge $203.91 to the card ending 0505?", True, True),
        (
            "That's two hundred three dollars and ninety-one cents on the card ending 0505. Okay?",
            True,
            True,
        ),
        ("I can put through a payment of $203.91 on the card ending 0505. Go ahead?", True, True),
        # the figure is another topic's; the question carries no amount
        ("Your last payment was $203.91. Shall I charge the card ending 0505?", False, False),
        ("Your last bill was $203.91. Shall I use the card ending 0505?", False, False),
        # a recogniser's commas between the card's digits: still the card's, not amounts
        ("Shall I charge $203.91 to the card ending zero, five, zero, five?", True, True),
        ("Shall I charge $203.91 to the card ending 0, 5, 0, 5?", True, True),
        # an amount said after the digits is still an amount, and a second one
        ("Shall I charge $203.91 to the card ending one, one, one, seven dollars?", False, False),
    ],
)
def test_the_charge_amount_is_the_one_said_for_the_charge(
    question: str, amount: bool, consent: bool
) -> None:
    transcript = call(
        "caller: I'd like to pay my bill.",
        f"agent: {question}",
        "caller: Yes, go ahead.",
        ("make_payment", {"paid": True}),
    )
    got = verdicts(task(PAY, ("pay_bill",)), transcript)
    assert (got["amount"], got["confirm"]) == (amount, consent)


def test_consent_must_answer_the_question_that_states_the_value() -> None:
    transcript = call(
        "caller: I'd like to pay my bill.",
        "agent: The amount is $203.91 on the card ending 0505.",
        "caller: Can you also tell me when it was due?",
        "agent: It was due September 30. Shall I go ahead with the payment?",
        "caller: Yes, go ahead.",
        ("make_payment", {"paid": True}),
    )
    got = verdicts(task(PAY, ("pay_bill",)), transcript)
    assert got["amount"] is True and got["confirm"] is False
    # A detour the caller asked ("Why?") leaves the question standing.
    transcript = call(
        "caller: I'd like to pay my bill.",
        "agent: Shall I charge $203.91 to the card ending 0505?",
        "caller: Why?",
        "agent: That's the amount on your bill.",
        "caller: Yes, go ahead.",
        ("make_payment", {"paid": True}),
    )
    assert verdicts(task(PAY, ("pay_bill",)), transcript)["confirm"] is True


# --- conflicts across the window ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("turns", "passed"),
    [
        (["Your account shows $219.86 past due."], True),
        (["You have two hundred nineteen dollars and eighty-six cents past due."], True),
        # every figure read out before the answer: a grader cannot tell which is meant
        (
            ["For your records: $12.00, $219.86 and $440.00. Your account shows $219.86 past due."],
            False,
        ),
        (["I see $57.10, $219.86, $8.42 here.", "Your account shows $219.86 past due."], False),
        # a wrong figure is not rescued by the right one, before or after
        (["You have $210.00 past due.", "Sorry, it's $219.86 past due."], False),
        (["You have $219.86 past due.", "So that's about two hundred ten dollars overdue."], False),
        (["Nothing is past due.", "Actually you have $219.86 past due."], False),
    ],
)
def test_conflicting_figures_fail(turns: list[str], passed: bool) -> None:
    transcript = call("caller: How much is past due?", *(f"agent: {t}" for t in turns))
    assert verdicts(task([BALANCE[0]]), transcript)["past_due"] is passed


@pytest.mark.parametrize(
    ("value", "said", "passed"),
    [
        (6552, "Sixty-five fifty-two is past due.", True),
        (655200, "Sixty-five fifty-two is past due.", False),  # most likely $65.52
        (65631, "Six fifty-six point three one is past due.", True),
        (65631, "Six hundred fifty-six and thirty-one cents is past due.", True),
        (11200, "One hundred twelve even is past due.", True),
        (21407, "Two fourteen oh seven is past due.", True),
    ],
)
def test_spoken_amounts_take_the_careful_reading(value: int, said: str, passed: bool) -> None:
    t = task([check("past_due", cat.PAST_DUE, value)])
    assert verdicts(t, call(f"agent: {said}"))["past_due"] is passed


def test_card_digits_said_for_two_cards_do_not_conflict() -> None:
    t = task([check("card", cat.CARD, "8210")], ("pay_after_decline",))
    said = "The card ending 0002 was declined. Shall I charge the card ending 8210 instead?"
    assert verdicts(t, call(f"agent: {said}"))["card"] is True


def test_a_requests_checks_open_when_the_caller_raises_it() -> None:
    checks = [check("bill_total", cat.BILL_TOTAL, 22497, request_index=1)]
    t = task(checks, ("pay_bill", "explain_bill"))
    early = call(
        "caller: Request number 0: please help with pay_bill.",
        "agent: Done. Your bill total of $224.97 is paid.",
        "caller: Request number 1: please help with explain_bill.",
        "agent: It covers your usage for August.",
    )
    assert verdicts(t, early)["bill_total"] is False
    later = call(
        "caller: Request number 0: please help with pay_bill.",
        "agent: Done. Your payment went through.",
        "caller: Request number 1: please help with explain_bill.",
        "agent: Your August bill totals $224.97.",
    )
    assert verdicts(t, later)["bill_total"] is True


# --- propositions, not topic words --------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic", "said", "passed"),
    [
        (cat.NO_INCOME, "We have no income on file, so a colleague will decide.", True),
        (cat.NO_INCOME, "Your income isn't on file.", True),
        (cat.NO_INCOME, "Your income is on file.", False),
        (cat.NO_INCOME, "I'll look at your income.", False),
        (cat.ALREADY_ACTIVE, "You already have an active payment arrangement.", True),
        (cat.ALREADY_ACTIVE, "I already checked your account.", False),
        (cat.ALREADY_ACTIVE, "You don't have an active arrangement.", False),
        (cat.NOTHING_OWED, "You have no balance: every bill is paid in full.", True),
        (cat.NOTHING_OWED, "You owe nothing.", True),
        (cat.NOTHING_OWED, "Nothing else today?", False),
        (cat.NOTHING_OWED, "You have no balance. Well, you owe $20.00.", False),
        (cat.NOTHING_PAST_DUE, "Nothing is past due.", True),
        (cat.NOTHING_PAST_DUE, "You're not behind at all.", True),
        (cat.NOTHING_PAST_DUE, "Nothing on the account is past due, but $40.00 is overdue.", False),
        (cat.ESTIMATED, "The meter reading was estimated.", True),
        (cat.ESTIMATED, "The reading was not estimated.", False),
        (cat.PAPER_BILLS, "Paperless billing is now off, and your bills will come by mail.", True),
        (cat.PAPER_BILLS, "You won't get paper bills any more.", False),
        (cat.NOT_RECORDED, "I can only record a payment once you've made it.", True),
        (cat.NOT_RECORDED, "I can't record a promise to pay.", True),
        (cat.NOT_RECORDED, "Sure, I'll record that promise.", False),
        (cat.NOT_RECORDED, "Payment recorded.", False),
    ],
)
def test_value_less_checks_need_the_proposition(topic: cat.Topic, said: str, passed: bool) -> None:
    assert verdicts(task([check("c", topic)]), call(f"agent: {said}"))["c"] is passed


DECLINE = {"after_tool": "make_payment", "after_outcome": "failure", "before_tool": "make_payment"}


@pytest.mark.parametrize(
    ("said", "reported", "no_claim"),
    [
        ("I'm sorry, the card was declined, so the bill was not paid.", True, True),
        ("I'm afraid not: the payment didn't go through.", True, True),
        ("Unfortunately it failed. Would you like to try another card?", True, True),
        ("That didn't work; nothing was charged.", True, True),
        ("No worries, your payment went through.", False, False),
        ("It's been paid.", False, False),
        ("It seems to have gone through.", False, False),
        ("It looks like it went through after all.", False, False),
        # the decline is reported; the success claimed after it fails the other check
        ("The card was declined, but your payment has been processed.", True, False),
        ("It was declined. Actually, never mind, you're all set.", True, False),
        ("Shall I try the other card so that it goes through?", False, True),
    ],
)
def test_a_decline_is_reported_and_never_claimed_as_paid(
    said: str, reported: bool, no_claim: bool
) -> None:
    checks = [
        check("not_paid", cat.NOT_PAID, window=DECLINE),
        check("no_success", cat.CLAIMS_PAID, kind="not_said", window=DECLINE),
    ]
    transcript = call(("make_payment", {"error": "card declined"}), f"agent: {said}")
    got = verdicts(task(checks, ("pay_after_decline",)), transcript)
    assert (got["not_paid"], got["no_success"]) == (reported, no_claim)


@pytest.mark.parametrize(
    ("said", "passed"),
    [
        ("Unfortunately I can only record a payment once you've made it.", True),
        ("I can't put down a promise; please call back after you pay.", True),
        ("Done, I've recorded your payment of $75.00.", False),
        ("Okay, I've noted that you'll pay on the seventeenth.", False),
        ("I'll put that down for the seventeenth.", False),
        ("Your instalment is paid.", False),
        ("Great, that's on your account now.", False),
    ],
)
def test_a_promise_is_never_claimed_as_made_or_recorded(said: str, passed: bool) -> None:
    claim = check("no_claim", cat.PROMISE_CLAIMED, kind="not_said")
    assert (
        verdicts(task([claim], ("promise_to_pay",)), call(f"agent: {said}"))["no_claim"] is passed
    )


# --- text values as claims ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "said", "passed"),
    [
        ("on", "Paperless billing is on: your bills come by email.", True),
        ("on", "You're on paperless.", True),
        ("on", "Your bills come by post on the first of the month.", False),
        ("on", "Paperless is on, and we mail you paper bills.", False),
        ("off", "Paperless billing is off: your bills come by mail.", True),
        ("off", "You're not on paperless; your bills are mailed.", True),
        ("off", "Your paperless billing is on.", False),
    ],
)
def test_paperless_state_is_a_claim(value: str, said: str, passed: bool) -> None:
    t = task([check("state", cat.PAPERLESS_STATE, value)], ("paperless_status",))
    assert verdicts(t, call(f"agent: {said}"))["state"] is passed


@pytest.mark.parametrize(
    ("value", "said", "passed"),
    [
        ("usage", "It's mainly because of higher usage.", True),
        (
            "usage",
            "Mostly because you used more electricity, though the price rose a little.",
            True,
        ),
        ("usage", "The main reason is not higher usage.", False),
        ("usage", "It's not higher usage; it's mainly the price.", False),
        ("usage", "Mainly because of a higher price per kilowatt-hour.", False),
        ("price", "Mainly because of a higher price per kilowatt-hour.", True),
        (
            "billing period length",
            "Mainly the billing period length, which covered more days.",
            True,
        ),
        (
            "fixed charges and taxes",
            "Mostly fixed charges and taxes, like the customer charge.",
            True,
        ),
        ("fixed charges and taxes", "Mainly higher usage; taxes barely moved.", False),
    ],
)
def test_the_main_reason_is_a_claim(value: str, said: str, passed: bool) -> None:
    reason, phrases = cat.REASON_WORDS[
        {"price": "rate", "billing period length": "period_length",
         "fixed charges and taxes": "fixed_and_taxes"}.get(value, value)
    ]  # fmt: skip
    topic = cat.Topic("main reason for the increase", phrases, "text")
    t = task([check("reason", topic, reason)], ("compare_bills",))
    assert verdicts(t, call(f"agent: {said}"))["reason"] is passed


@pytest.mark.parametrize(
    ("value", "said", "passed"),
    [
        (
            "Quillstone Energy",
            "Your supply comes from Quillstone Energy; Acme Energy delivers it.",
            True,
        ),
        ("Quillstone Energy", "You're with Quillstone for your supply.", True),
        ("Quillstone Energy", "Your supplier is Acme Energy default service.", False),
        ("Quillstone Energy", "Your supplier isn't Quillstone Energy.", False),
        ("Quillstone Energy", "Quillstone Energy sent a letter.", False),
        # As an ear writes a name it hears: spelling is not audible.
        ("Quillstone Energy", "Your supply comes from quilstone energy.", True),
        ("Quillstone Energy", "Your supply comes from Quill Stone Energy.", True),
        ("Quillstone Energy", "Your supply comes from Quincy Energy.", False),
        ("Quillstone Energy", "Your supply comes from Quillstones Energy.", False),
        ("Acme Energy default service", "You're on default service from Acme Energy.", True),
        ("Acme Energy default service", "Acme Energy supplies your electricity.", True),
        ("Acme Energy default service", "Your supply comes from a retail supplier.", False),
    ],
)
def test_the_supplier_is_named_as_the_supplier(value: str, said: str, passed: bool) -> None:
    t = task([check("supplier", cat.SUPPLIER, value)], ("supplier",))
    assert verdicts(t, call(f"agent: {said}"))["supplier"] is passed


@pytest.mark.parametrize(
    ("said", "passed"),
    [
        ("Your supply rate is nine point eight nine cents per kilowatt-hour.", True),
        ("That's 9.89 cents per kWh for supply.", True),
        ("Supply is $0.0989 per kWh.", True),
        ("Delivery is 9.5 cents per kWh, and supply 9.89 cents per kWh.", True),
        ("Your supply rate is 12.19 cents per kilowatt-hour.", False),
        ("Supply is 9.89 cents per kWh. Sorry, 9.98 cents per kWh.", False),
        ("Nine eighty-nine for the supply.", False),
    ],
)
def test_the_supply_rate_is_a_rate(said: str, passed: bool) -> None:
    t = task([check("rate", cat.SUPPLY_RATE, "9.89")], ("supplier",))
    assert verdicts(t, call(f"agent: {said}"))["rate"] is passed
