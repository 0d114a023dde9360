"""The scripted caller plays its brief: verification, consent, refusals, waits, stalls, hang-ups."""

from __future__ import annotations

import numpy as np
import pytest

from vamos_env.callers.base import Caller, HangUp, Utterance
from vamos_env.callers.scripted import ScriptedCaller
from vamos_env.channel import TextChannel
from vamos_env.speech import find_digit_strings, number


def acts(caller: ScriptedCaller) -> list[str]:
    return [a.act for a in caller.acts]


def verify(caller: ScriptedCaller) -> None:
    caller.open()
    caller.hear("Can I have your account number, full name, and your postal code?")
    caller.hear("Thank you, you're verified. How can I help?")


def test_is_a_caller(tasks) -> None:
    assert isinstance(ScriptedCaller(tasks["t-balance-pay"]), Caller)


TASK_IDS = [
    "t-balance-pay",
    "t-arrangement-paperless",
    "t-quote-promise",
    "t-decline-supervisor",
    "t-record-extension",
]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_completes_each_task_with_a_correct_agent(
    tasks, answer_key_agent, converse, task_id
) -> None:
    task = tasks[task_id]
    caller = ScriptedCaller(task, "calm", rng=3)
    agent = answer_key_agent(task)
    call = converse(caller, agent.reply)
    expected = [r.expected_outcome for r in task.requests]
    assert caller.outcomes == expected
    assert caller.goal_met()
    assert call.ending is not None
    assert call.ending.reason == ("transferred" if "transferred" in expected else "done")
    assert caller.deviations == []


def test_silent_agent_gets_a_hang_up_within_the_stall_limit(tasks) -> None:
    for limit in (2, 4, 6):
        caller = ScriptedCaller(tasks["t-balance-pay"], rng=0, stall_limit=limit)
        caller.open()
        replies = []
        for _ in range(limit + 5):
            reply = caller.hear("")
            replies.append(reply)
            if isinstance(reply, HangUp):
                break
        assert isinstance(replies[-1], HangUp) and replies[-1].reason == "stall"
        assert len(replies) == limit
        assert not caller.goal_met()


def test_an_agent_that_keeps_checking_forever_stalls_too(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    verify(caller)
    first = caller.hear("One moment, let me check that for you.")
    assert isinstance(first, Utterance) and acts(caller)[-1] == "wait"
    ending = [caller.hear("Just a moment please.") for _ in range(3)][-1]
    assert isinstance(ending, HangUp) and ending.reason == "stall"


def test_wrong_second_factor_asked_offers_its_own(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)  # its factor: postal code 15213
    caller.open()
    reply = caller.hear("For security, what are the last four digits of the card on file?")
    assert isinstance(reply, Utterance)
    assert "don't have" in reply.text and "15213" in reply.text and "4242" not in reply.text
    menu = caller.hear(
        "Could I have the account number, the name, and one of: the last four of a card, your "
        "postal code or your last bill amount?"
    )
    assert "4417-90781" in menu.text and "Dana Whitfield" in menu.text and "15213" in menu.text


def test_gives_only_the_second_factor_its_brief_names(tasks, answer_key_agent, converse) -> None:
    task = tasks["t-quote-promise"]  # last bill amount
    call = converse(ScriptedCaller(task, rng=0), answer_key_agent(task).reply)
    said = " ".join(call.said_by("caller"))
    assert "222.89" in said and "15213" not in said and "4242" not in said


def test_corrects_wrong_read_backs(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    caller.open()
    wrong = caller.hear(
        "Just to confirm, that's account four four one seven, nine zero seven eight two?"
    )
    assert "4417-90781" in wrong.text and acts(caller)[-1] == "readback_wrong"
    right = caller.hear("Thanks. So account 4417-90781, is that right?")
    assert acts(caller)[-1] == "readback_right" and "yes" in right.text.lower()
    name = caller.hear("And the name is Dana Whitman, correct?")
    assert "Dana Whitfield" in name.text and acts(caller)[-1] == "readback_wrong"
    postal = caller.hear("I heard the postal code one five two one four, is that right?")
    assert "15213" in postal.text


def test_a_garbled_account_read_back_is_not_taken_for_the_second_factor(tasks) -> None:
    """The ear turned "eight" into "a": "4417-90a81" is heard as two digit groups, and the
    six digits before the letter are the account's own, not a wrong postal code."""
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    caller.open()
    reply = caller.hear("To confirm: account 4417-90a81, name Dana Whitfield. Is that right?")
    assert "15213" not in reply.text
    assert acts(caller)[-1] == "readback_right" and "yes" in reply.text.lower()
    # Digits that are no part of the account are still checked against the factor.
    wrong = caller.hear("To confirm: account 4417-90781, postal code 15214. Is that right?")
    assert "15213" in wrong.text and acts(caller)[-1] == "readback_wrong"


def test_a_name_read_back_with_no_part_right_is_wrong(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    caller.open()
    # A recogniser's "Dina Whitfeld" read back shares no part with Dana Whitfield.
    reply = caller.hear("To confirm: account 4417-90781, name Dina Whitfeld. Is that right?")
    assert "Dana Whitfield" in reply.text and acts(caller)[-1] == "readback_wrong"
    right = caller.hear("To confirm: account 4417-90781, name Dana Whitfield. Is that right?")
    assert acts(caller)[-1] == "readback_right" and "yes" in right.text.lower()


def test_spells_its_name_when_asked(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    caller.open()
    assert caller.hear("Could you spell your first name for me?").text == "D A N A."
    assert caller.hear("And could you spell your last name?").text == "W H I T F I E L D."
    assert caller.hear("How do you spell your name?").text == "D A N A. W H I T F I E L D."
    # Asked for a word for each letter, as an agent on a noisy line asks.
    assert caller.hear("Could you spell your first name, like A as in Alfa?").text == (
        "D as in Delta, A as in Alfa, N as in November, A as in Alfa."
    )
    words = caller.hear("And your last name, spelled with a word for each letter?").text
    assert words.startswith("W as in Whiskey, H as in Hotel, I as in India,")


def test_says_digits_one_at_a_time_when_asked(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    caller.open()
    account = caller.hear("Sorry, could you say the account number one digit at a time?").text
    digits = caller.brief.account_number.replace("-", "")
    assert account.lower().rstrip(".").split(", ")[0] == number(int(digits[0]))
    assert len(account.split(", ")) == 9, account
    factor = caller.brief.second_factor
    said = caller.hear("Sorry, I didn't catch all of it. Could you say those digits one at a time?")
    if factor.kind == "last_bill_amount":
        assert "one at a time" not in said.text
    else:
        spoken = said.text.lower().rstrip(".").split(", ")
        assert spoken == [number(int(d)) for d in factor.value], said.text


@pytest.mark.parametrize(
    ("task_id", "question", "answer"),
    [
        ("t-arrangement-paperless", "Over how many months should the arrangement run?", "6"),
        ("t-arrangement-paperless", "Sure. How many monthly payments would you like?", "6"),
        ("t-quote-promise", "Would you like that over how many months?", "6"),
    ],
)
def test_tells_the_count_its_request_named_when_asked(tasks, task_id, question, answer) -> None:
    caller = ScriptedCaller(tasks[task_id], rng=0)
    verify(caller)
    reply = caller.hear(question)
    assert answer in reply.text and "month" in reply.text
    assert acts(caller)[-1] == "private_fact"


def test_a_count_it_never_named_is_not_invented(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    verify(caller)
    reply = caller.hear("Over how many months should the arrangement run?")
    assert acts(caller)[-1] != "private_fact" and "month" not in reply.text.lower()


def test_agrees_only_to_the_right_amount_and_card(tasks, answer_key_agent, converse) -> None:
    task = tasks["t-balance-pay"]
    agent = answer_key_agent(task, wrong="amount")
    caller = ScriptedCaller(task, rng=0)
    call = converse(caller, agent.reply)
    kinds = acts(caller)
    assert kinds.index("object") < kinds.index("agree")
    texts = [t for _, t in call.turns]
    objected = texts[texts.index(caller.acts[kinds.index("object")].text) - 1]
    assert "two hundred thirty-two dollars" in objected  # $10 too much was read back
    assert caller.goal_met()


def test_objects_to_a_wrong_card(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    verify(caller)
    caller.hear("The past due amount is two hundred twenty-two dollars and eighty-nine cents.")
    reply = caller.hear(
        "I can charge two hundred twenty-two dollars and eighty-nine cents to the "
        "card ending in one one one one. Shall I go ahead?"
    )
    assert acts(caller)[-1] == "object" and "not right" in reply.text


def test_objects_to_a_wrong_email_then_agrees(tasks, answer_key_agent, converse) -> None:
    task = tasks["t-arrangement-paperless"]
    caller = ScriptedCaller(task, rng=0)
    call = converse(caller, answer_key_agent(task, wrong="email").reply)
    assert "No, that's not my email address." in call.said_by("caller")
    assert caller.outcomes == ["resolved", "resolved"]


def test_refuses_where_scripted(tasks) -> None:
    caller = ScriptedCaller(tasks["t-quote-promise"], rng=0)
    verify(caller)
    reply = caller.hear(
        "Over six months it's seventy-three dollars and twenty-nine cents a month. "
        "Would you like me to set that up for you now?"
    )
    assert reply.text == "Not today, thanks. I just wanted to know the numbers."
    caller.hear("Okay, no problem. Anything else?")
    assert caller.outcomes[0] == "resolved"


def test_private_facts_only_when_asked(tasks) -> None:
    task = tasks["t-record-extension"]
    caller = ScriptedCaller(task, rng=0)
    verify(caller)
    before = " ".join(a.text for a in caller.acts)
    assert "pay station" not in before
    reply = caller.hear("Sure. How much did you pay, and when did you make the payment?")
    assert "pay station" in reply.text


def test_repeats_then_rephrases_when_not_understood(tasks) -> None:
    task = tasks["t-balance-pay"]
    caller = ScriptedCaller(task, rng=0)
    verify(caller)
    request = caller.acts[-1].text
    again = caller.hear("Sorry, I didn't catch that. Could you repeat it?")
    assert request in again.text
    rephrased = caller.hear("I'm sorry, I'm not sure what you mean.")
    assert task.requests[0].rephrase in rephrased.text


def test_angry_gets_more_forceful_when_misunderstood(tasks) -> None:
    task = tasks["t-balance-pay"]
    caller = ScriptedCaller(task, "angry", rng=0)
    verify(caller)
    for _ in range(3):
        reply = caller.hear("Sorry, could you say that again?")
    assert acts(caller)[-1] == "forceful_repeat" and task.requests[0].says in reply.text


def test_hangs_up_after_a_transfer(tasks) -> None:
    task = tasks["t-decline-supervisor"]
    caller = ScriptedCaller(task, rng=0)
    verify(caller)
    caller.hear("I'm sorry, I'll transfer you to a colleague now.")
    assert caller.outcomes[0] == "transferred"
    ending = caller.hear("Are you still there?")
    assert isinstance(ending, HangUp) and ending.reason == "transferred"
    assert not caller.goal_met()  # the payment was wanted, not a transfer


def test_believes_what_it_hears(tasks) -> None:
    # An agent that never verifies and never looks anything up still satisfies the caller.
    caller = ScriptedCaller(tasks["t-record-extension"], rng=0)
    caller.open()
    caller.hear("Sure, I've recorded your payment; the arrangement balance is now $10.00.")
    ending = caller.hear("Done. I've extended the due date to October first.")
    assert isinstance(ending, HangUp) and ending.reason == "done"
    assert caller.goal_met()


def test_goal_not_met_when_a_resolvable_request_is_refused(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    verify(caller)
    caller.hear("The past due amount is two hundred twenty-two dollars and eighty-nine cents.")
    ending = caller.hear("I'm sorry, I can't take payments today.")
    assert isinstance(ending, HangUp) and caller.outcomes == ["resolved", "refused"]
    assert not caller.goal_met()


def test_deterministic_from_its_seed(tasks, answer_key_agent, converse) -> None:
    task = tasks["t-arrangement-paperless"]

    def said(seed: int) -> list[str]:
        call = converse(ScriptedCaller(task, rng=seed), answer_key_agent(task).reply)
        return call.said_by("caller")

    assert said(1) == said(1)
    assert len({tuple(said(s)) for s in range(8)}) > 1  # wording varies with the seed


def test_completes_through_a_noisy_channel(tasks, answer_key_agent, converse) -> None:
    task = tasks["t-balance-pay"]
    finished = 0
    for seed in range(10):
        channel = TextChannel("street", np.random.default_rng(seed), 25)
        caller = ScriptedCaller(task, rng=seed)
        call = converse(caller, answer_key_agent(task).reply, channel=channel)
        assert call.ending is not None  # every call ends
        finished += caller.goal_met()
    assert finished >= 5


def test_speaks_codes_as_a_recogniser_writes_them(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    caller.open()
    reply = caller.hear("What's your account number?")
    assert [m.value for m in find_digit_strings(reply.text)] == ["4417-90781"]


def test_hear_after_hang_up_is_a_programming_error(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0, stall_limit=1)
    caller.open()
    assert isinstance(caller.hear(""), HangUp)
    with pytest.raises(RuntimeError, match="after the caller hung up"):
        caller.hear("Hello?")


def test_spells_a_middle_name_and_says_one_letter_when_asked(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=0)
    caller.open()
    # Dana Whitfield has no middle name.
    assert caller.hear("And your middle name, a word for each letter?").text == (
        "I don't have a middle name."
    )
    # The ear runs "a word" together: the ask is the same.
    assert caller.hear("and your middle name award for each letter").text == (
        "I don't have a middle name."
    )
    assert (
        caller.hear("Sorry, I missed a letter. What's the third letter of your last name?").text
        == "I."
    )
    assert "only nine letters" in caller.hear("What's the tenth letter of your last name?").text
    # Asked for it with its word (a letter alone is what a line loses), it says the word.
    assert (
        caller.hear(
            "Sorry, I missed a letter. What's the first letter of your last name, with a word "
            "for it, like A as in Alfa?"
        ).text
        == "W as in Whiskey."
    )


def test_a_charge_offered_for_another_request_is_not_agreed_to(
    tasks, answer_key_agent, converse
) -> None:
    # Asked for more days to pay, the caller does not say yes to a charge on its card (an
    # agent that took "10 moru days to pay my bill" for a payment offered one).
    task = tasks["t-record-extension"]
    key = answer_key_agent(task)
    replies: list[str] = []

    def agent(heard: str) -> str:
        if "more days" in heard and not replies:
            replies.append(heard)
            return "Shall I charge two hundred twenty-two dollars to the card ending 4242?"
        return key.reply(heard)

    caller = ScriptedCaller(task, "calm", rng=3)
    call = converse(caller, agent)
    said = [text for who, text in call.turns]
    offer = said.index("Shall I charge two hundred twenty-two dollars to the card ending 4242?")
    assert not said[offer + 1].startswith(("Yes", "Sure", "Okay", "Go ahead")), said[offer + 1]
    assert caller.outcomes == [r.expected_outcome for r in task.requests]


# --- cutting in on a duplex line -------------------------------------------------------------


@pytest.mark.parametrize(
    "so_far",
    [
        "To confirm: account four four one seven dash nine zero",  # its details read back
        "To confirm, account 4, 4, 1, 7, dash, 9, 0, 7.",  # a recogniser's full stop
        "Your balance is $222.89, and the",  # figures being given
        "Shall I charge $222.89 to the card ending",  # an offer it is to agree to
    ],
)
def test_it_lets_the_agent_finish_reading_its_details_figures_and_offers(
    tasks, so_far: str
) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], "angry", rng=0)
    caller.open()
    assert caller.holds_cut_in(so_far)


def test_it_cuts_in_on_a_monologue(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], "angry", rng=0)
    caller.open()
    assert not caller.holds_cut_in(
        "Thank you for calling Acme Energy, we value your business and we are always"
    )


def test_a_cut_in_answers_a_question_heard_before_it(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], "angry", rng=0)
    caller.open()
    reply = caller.interrupt(
        "Thank you for calling Acme Energy, this is Rory. Your account number and full name"
    )
    assert isinstance(reply, Utterance)
    digits = "".join(m.value for m in find_digit_strings(reply.text)).replace("-", "")
    assert "441790781" in digits, reply.text


def test_a_cut_in_on_a_half_heard_read_back_disputes_nothing(tasks) -> None:
    # "No, it's 19382" to a read-back of the account number cut off before its last digit
    # was how an angry caller lost every duplex call: half a code is no code to correct.
    caller = ScriptedCaller(tasks["t-balance-pay"], "angry", rng=0)
    caller.open()
    reply = caller.interrupt("To confirm: account four four one seven dash nine zero seven.")
    assert isinstance(reply, Utterance)
    assert reply.text == "Get to the point."
    assert "no" not in [a.act for a in caller.acts][-1:]


def test_asked_once_for_a_word_for_each_letter_it_spells_with_words_from_then_on(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], "calm", rng=0)
    caller.open()
    first = caller.hear("Could you spell your first name for me, a word for each letter?")
    assert isinstance(first, Utterance) and "as in" in first.text, first.text
    # The next ask came through without its "a word for each letter".
    last = caller.hear("And could you spell your last name?")
    assert isinstance(last, Utterance) and "W as in Whiskey" in last.text, last.text
