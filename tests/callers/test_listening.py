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
        ("your passed due amount is $47.59.", "past_due"),  # as Whisper writes it
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


# --- what a recogniser does to an agent's words ---------------------------------------------
# The scripted caller in a duplex call hears the agent through Whisper, which drops question
# marks and commas, changes capitals, and writes digits as numerals. Its understanding of
# what was asked and said must not depend on any of those.

RECOGNISED_ASKS = [
    "Thank you for calling Acme Energy, this is Rory. Your account number and full name, please?",
    "To confirm: account four nine four four dash two nine eight seven five, name Kwame Novak. "
    "Is that right?",
    "Thanks. And one of: last four of a card on file, your postal code, or last bill amount?",
    "Sorry, could you give me your full name?",
    "Sorry, I didn't catch that. The card's last four, postal code or last bill?",
    "Which card on file would you like to use?",
    "I have cards ending five five five six or four four four four. Which one?",
    "Shall I charge one hundred ninety-nine dollars and sixteen cents to the card ending four "
    "four four four?",
    "Just to confirm: 10 more days?",
    "And that's four two four two. Is that right?",
    "I'm sorry, I couldn't verify those details. Could you give me the account number, the full "
    "name and one second factor again?",
    "Thank you, you're verified.",
    "Your postal code is on file, so you're all set.",
]


def _numerals(text: str) -> str:
    from vamos_env.speech import find_digit_strings

    for mention in reversed(find_digit_strings(text)):
        text = text[: mention.start] + mention.value + text[mention.end :]
    return text


RECOGNISER_WAYS = {
    "question mark as a full stop": lambda t: t.replace("?", "."),
    "no commas or colons": lambda t: t.replace(",", "").replace(":", ""),
    "lower case": str.lower,
    "digits as numerals": _numerals,
    "all of them": lambda t: _numerals(t).replace("?", ".").replace(",", "").lower(),
}


def _understood(text: str) -> dict[str, object]:
    heard = listen(text)
    return {
        "is_question": heard.is_question,
        "asks": heard.asks,
        "asks_second_factor": heard.asks_second_factor,
        "readback": heard.readback,
        "offer": heard.offer,
        "verified": heard.verified,
        "digits": [m.value.replace("-", "") for m in heard.asking().digits],
        "money": [m.value for m in heard.asking().money],
    }


@pytest.mark.parametrize("way", sorted(RECOGNISER_WAYS))
@pytest.mark.parametrize("text", RECOGNISED_ASKS)
def test_understanding_survives_what_a_recogniser_does(text: str, way: str) -> None:
    assert _understood(RECOGNISER_WAYS[way](text)) == _understood(text)


def test_the_second_factor_ask_without_its_question_mark() -> None:
    # Whisper tiny.en's rendering of the reference's ask, as the caller heard it.
    heard = listen(
        "Thanks and one of last four of the card on file your postal code or last bill amount"
    )
    assert heard.is_question
    assert heard.asks == ("card_last4", "postal_code", "last_bill_amount")


@pytest.mark.parametrize(
    "text",
    [
        "Your postal code is on file.",
        "That account number and name don't match our records.",
        "I have your account number as 4944-29875.",
        "Thanks, I've found your account.",
    ],
)
def test_a_statement_about_identity_items_asks_nothing(text: str) -> None:
    heard = listen(text)
    assert heard.asks == ()
    assert not heard.is_question or heard.readback


def test_a_read_back_ending_the_turn_is_a_check_even_unmarked() -> None:
    heard = listen("Just to confirm 10 more days.")
    assert heard.is_question and heard.readback
    # Not when a question follows it: that question is the one asked.
    heard = listen("To confirm, account 4944-29875. Is that right?")
    assert heard.asked.startswith("To confirm") and heard.digits[0].value == "4944-29875"


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("To confirm, account for 9, 4, 4, dash, 2, 9, 8, 7, 5. Is that right?", "4944-29875"),
        ("And that's 4, 2, for, 2. Is that right?", "4242"),
        ("The card ending oh, 0, 2, 7.", "0027"),
    ],
)
def test_paced_digits_heard_as_words_that_sound_like_them(text: str, digits: str) -> None:
    heard = listen(text)
    assert [m.value for m in heard.digits] == [digits]
    assert heard.digits[0].text == text[heard.digits[0].start : heard.digits[0].end]


@pytest.mark.parametrize(
    "text", ["I can set that up for 10 months.", "Thanks for 2 payments, to 3 accounts."]
)
def test_for_and_to_are_words_outside_a_paced_code(text: str) -> None:
    assert listen(text).digits == ()


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("to confirm count 9 to 9 7 dash 6 1 8 1 9 name", "9297-61819"),
        ("a count 4, 9, 4, 4, Dash, Free, 9, 8, 7, 5. Name", "4944-39875"),
    ],
)
def test_digit_sounds_inside_an_unpaced_run(text: str, digits: str) -> None:
    assert [m.value for m in listen(text).digits] == [digits]


def test_a_range_of_two_numbers_is_not_a_code() -> None:
    assert listen("It takes 2 to 3 business days.").digits == ()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("To confirm: account 4944-29875, name Kwame Novak. Is that right?", ("kwame", "novak")),
        ("to confirm the count 9 2 9 7 name queen novick is that right", ("queen", "novick")),
        ("Name Rosa O'Malley. Is that right?", ("rosa", "o'malley")),
        ("I have the name on the account as Dana Whitman, correct?", ("dana", "whitman")),
        ("Your account number and full name, please?", None),
        ("What is the name on the account?", None),
        ("Sorry, could you give me your full name again?", None),
    ],
)
def test_the_name_read_back_does_not_depend_on_capitals(
    text: str, name: tuple[str, ...] | None
) -> None:
    from vamos_env.callers.listening import read_back_name

    assert read_back_name(text) == name
    assert read_back_name(text.lower()) == name


def test_eight_heard_as_a_letter_inside_a_code() -> None:
    assert [
        m.value.replace("-", "") for m in listen("And that's 1-A-1-0-4. Is that right?").digits
    ] == ["18104"]
    assert [m.value for m in listen("The card ending in a 4 4 4 4.").digits] == ["4444"]


@pytest.mark.parametrize(
    ("text", "offer"),
    [
        # Piper's "Shall I charge ..." as the caller's ear wrote it in duplex calls.
        ("cell i charge two hundred twenty four dollars to the card ending zero zero two.", True),
        ("Chill I charge $224.97 to the card ending 0, 0, 0, 2.", True),
        ("Thanks. Kell I set up that plan for you?", True),
        # An opener, or no offered action after "I", is no offer.
        ("Then I charge the card you choose.", False),
        ("Your payment went through. Today I charge nothing else.", False),
        ("Maybe I misheard that.", False),
    ],
)
def test_a_garbled_shall_before_an_offered_action_is_still_the_offer(
    text: str, offer: bool
) -> None:
    heard = listen(text)
    assert heard.offer is offer
    assert heard.is_question is offer
