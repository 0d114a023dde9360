"""How the scripted caller hears an agent: cues in many phrasings, values as spoken."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env.callers.listening import listen, topic_of
from vamos_env.callers.scripted import ScriptedCaller

CUES = [
    ("To get started, could you please provide your account number?", "asks", ("account_number",)),
    ("Great, and could you confirm the full name on the account?", "asks", ("name",)),
    ("What's the name on the account?", "asks", ("name",)),
    ("And the last four digits of the card on file?", "asks", ("card_last4",)),
    ("What is your zip code?", "asks", ("postal_code",)),
    ("How much was your most recent bill?", "asks", ("last_bill_amount",)),
    ("Lastly, I'll need one more detail to verify your identity.", "asks_second_factor", True),
    ("Thank you, Dana. I've verified your identity.", "verified", True),
    ("Thanks, you're all verified.", "verified", True),
    ("I wasn't able to verify those details.", "verify_failed", True),
    ("Those details don't match our records.", "verify_failed", True),
    ("Let me pull up your account.", "checking", True),
    ("One moment while I look that up.", "checking", True),
    ("Bear with me a second.", "checking", True),
    ("Sorry, I didn't catch that. Could you say it again?", "not_understood", True),
    ("I'm not sure what you mean.", "not_understood", True),
    ("Let me connect you with a supervisor.", "transfer", True),
    ("I'm going to transfer you to a specialist.", "transfer", True),
    ("Would you like me to transfer you to a colleague?", "offer", True),
    ("Shall I go ahead with the payment?", "offer", True),
    ("Is it okay if I set that up now?", "offer", False),
    ("Does that work for you?", "offer", True),
    ("Is there anything else I can help you with?", "anything_else", True),
    ("I'm sorry, I'm not able to set up an arrangement.", "refusal", True),
    ("You already have an active payment arrangement.", "refusal", True),
    ("Our billing system doesn't allow changes to a finalized bill.", "refusal", True),
    ("I can only record payments that have already been made.", "refusal", True),
    ("Unfortunately the card was declined due to insufficient funds.", "failed", True),
    ("The bill has not been paid.", "failed", True),
    ("Done! Your payment has been processed successfully.", "done", True),
    ("Paperless billing is now turned on.", "done", True),
    ("I've set up your payment arrangement.", "done", True),
    ("According to your account, the balance is $222.89.", "source_named", True),
    ("Your latest bill shows a total of $180.10.", "source_named", True),
    ("The balance is $222.89.", "source_named", False),
    ("Just to confirm, is that account four four one seven?", "readback", True),
    ("Have a great day!", "closing", True),
]


@pytest.mark.parametrize(("text", "cue", "expected"), CUES)
def test_cues_in_many_phrasings(text, cue, expected) -> None:
    assert getattr(listen(text), cue) == expected


def test_values_as_spoken() -> None:
    heard = listen(
        "I can charge two hundred twenty-two dollars and eighty-nine cents to the card ending "
        "in four two four two, and your next payment is due October tenth."
    )
    assert [m.value for m in heard.money] == [22289]
    assert [m.value for m in heard.digits] == ["4242"]
    assert [m.value for m in heard.dates] == [date(2026, 10, 10)]
    email = listen("I have dana dot whitfield at example dot com on file.")
    assert [m.value for m in email.emails] == ["dana.whitfield@example.com"]
    short = listen("Your monthly payment would be seventy-three twenty-nine.")
    assert [m.value for m in short.money] == [7329]


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Your past due amount is $47.59.", "past_due"),
        ("The minimum past due for an arrangement is $50.00.", None),
        ("No down payment is needed, and it's $73.29 a month.", "monthly"),
        ("The first instalment is $73.34, then $73.29 a month.", "first_installment"),
        ("A down payment of $110.00 is required first.", "down_payment"),
        ("The outstanding balance on your arrangement is $366.50.", "outstanding"),
    ],
)
def test_topic_of_the_first_amount(text, topic) -> None:
    heard = listen(text)
    assert topic_of(text, heard.money[0]) == topic


def test_a_plainly_worded_agent_in_its_own_words(tasks) -> None:
    """A different agent's phrasing, turn by turn, and what the caller does with each."""
    caller = ScriptedCaller(tasks["t-decline-supervisor"], rng=0)
    caller.open()
    script = [
        ("To get started, could you please provide your account number?", "identity"),
        ("Thanks. Could you confirm the full name on the account?", "identity"),
        ("And for security, what's the zip code on the account?", "identity"),
        ("Thank you, Dana. I've verified your identity. How can I help?", "request"),
        ("Let me pull up your account.", "wait"),
        ("Which card would you like to use today?", "private_fact"),
        (
            "I'll charge $222.89 to the card ending in 0002. Is it okay to proceed?",
            "agree",
        ),
        (
            "Unfortunately the card ending in 0002 was declined, so the bill has not been "
            "paid. Do you have another card on file you'd like to use?",
            "private_fact",
        ),
        ("Okay. Shall I charge $222.89 to the card ending 4242?", "agree"),
        ("That went through successfully. Anything else?", "next_request"),
        ("Of course. Let me connect you with a supervisor.", "transfer_ok"),
    ]
    for line, act in script:
        caller.hear(line)
        assert caller.acts[-1].act == act, (line, caller.acts[-1])
    assert "4242" in caller.acts[-4].text  # it offered the other card, the one it was asked for
    assert caller.outcomes == ["resolved", "transferred"]
