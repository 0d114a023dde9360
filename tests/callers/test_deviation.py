"""The deviation check holds any caller to its brief, the scripted one included.

Each signal is shown on a call that has it and on the faithful call next to it,
which must stay clean. Then a caller that misunderstands the agent the old way
(a synonym anywhere in the turn) is caught: its call becomes a benchmark fault.
"""

from __future__ import annotations

import pytest

from vamos_env.callers.brief import fact_named
from vamos_env.callers.deviation import BriefMonitor
from vamos_env.callers.listening import Question
from vamos_env.callers.persona import load_persona
from vamos_env.callers.scripted import ScriptedCaller
from vamos_env.envs.energy.tasks.schema import PrivateFact


def verified(task) -> list[tuple[str, str]]:
    brief = task.caller
    return [
        ("agent", "Can I have your account number, full name, and one second factor?"),
        ("caller", f"It's {brief.account_number}. {brief.full_name}. {brief.second_factor.value}."),
        ("agent", "Thank you, you're verified."),
    ]


def kinds(task, turns: list[tuple[str, str]], persona: str = "calm") -> list[str]:
    monitor = BriefMonitor(task, load_persona(persona))
    monitor.caller_said(task.caller.opening_line, 0)
    for turn, (speaker, text) in enumerate([*verified(task), *turns], start=1):
        if speaker == "agent":
            monitor.agent_said(text)
        else:
            monitor.caller_said(text, turn)
    return [d.kind for d in monitor.deviations]


FAITHFUL_DECLINE = [
    ("caller", "I'd like to pay my August bill with a card."),
    ("agent", "Which card would you like to use?"),
    ("caller", "Use my card ending 0002."),
    ("agent", "Shall I charge $222.89 to the card ending 0002?"),
    ("caller", "Yes, go ahead."),
    ("agent", "I'm sorry, the card ending 0002 was declined. Which other card would you like?"),
    ("caller", "Okay, try the other card, the one ending 4242."),
    ("agent", "Shall I charge $222.89 to the card ending 4242?"),
    ("caller", "Yes, go ahead."),
]


def test_cards_in_the_brief_order_are_clean(tasks) -> None:
    assert kinds(tasks["t-decline-supervisor"], FAITHFUL_DECLINE) == []


def test_naming_the_other_card_first_is_out_of_order(tasks) -> None:
    turns = [
        ("agent", "One second. Which card would you like to use?"),
        ("caller", "Okay, try the other card, the one ending 4242."),
    ]
    assert kinds(tasks["t-decline-supervisor"], turns) == ["out_of_order"]


def test_agreeing_to_the_other_card_first_is_out_of_order(tasks) -> None:
    turns = [
        ("agent", "Shall I charge $222.89 to the card ending 4242?"),
        ("caller", "Yes, go ahead."),
    ]
    assert kinds(tasks["t-decline-supervisor"], turns) == ["out_of_order"]


def test_a_yes_to_a_charge_without_digits_counts_for_the_card_due(tasks) -> None:
    turns = [
        ("agent", "Which card would you like to use?"),
        ("caller", "Use my card ending 0002."),
        ("agent", "Shall I charge $222.89 to that card?"),
        ("caller", "Yes, go ahead."),
        ("agent", "That card was declined. Do you have another one?"),
        ("caller", "Okay, try the other card, the one ending 4242."),
    ]
    assert kinds(tasks["t-decline-supervisor"], turns) == []


def test_a_yes_to_an_offer_the_brief_refuses(tasks) -> None:
    task = tasks["t-quote-promise"]
    offer = ("agent", "It's $73.29 a month. Would you like me to set that up for you now?")
    assert kinds(task, [offer, ("caller", "Yes, please do.")]) == ["accepted_refused"]
    refusal = task.requests[0].refusals["enrol_now"]
    assert kinds(task, [offer, ("caller", refusal)]) == []


@pytest.mark.parametrize(
    "statement",
    [
        "I can see which card you used last time.",
        "Your second card on file is a Visa.",
        "Thanks for waiting.",
    ],
)
def test_a_private_fact_given_when_nothing_was_asked(tasks, statement) -> None:
    turns = [("agent", statement), ("caller", "Use my card ending 0002.")]
    assert kinds(tasks["t-decline-supervisor"], turns) == ["unasked_answer"]


def test_a_fact_may_answer_a_question_put_off_by_the_callers_why(tasks) -> None:
    turns = [
        ("agent", "Which card would you like to use?"),
        ("caller", "Why?"),
        ("agent", "I need a card on file to take the payment."),
        ("caller", "Use my card ending 0002."),
        ("agent", "Sorry, I didn't catch that."),
        ("caller", "Use my card ending 0002."),
    ]
    assert kinds(tasks["t-decline-supervisor"], turns) == []


def test_a_value_the_task_does_not_hold_is_invented(tasks) -> None:
    task = tasks["t-balance-pay"]
    question = ("agent", "Is there a phone number I can reach you on?")
    invented = kinds(task, [question, ("caller", "Sure, it's 412-555-0199.")])
    assert invented == ["invented_value"]
    assert kinds(task, [question, ("caller", "I'm not sure, sorry.")]) == []
    told = ("agent", "Your reference number is 88412.")
    assert kinds(task, [told, ("caller", "Okay, 88412.")]) == []  # said by the agent first


class SynonymCaller(ScriptedCaller):
    """The old misunderstanding, on purpose: a fact's words anywhere in the turn ask for it."""

    def _private_fact(self, question: Question) -> PrivateFact | None:
        return fact_named(self.brief, self._turn)

    def hear(self, text: str):  # type: ignore[no-untyped-def]
        self._turn = text
        return super().hear(text)


def test_a_caller_that_misunderstands_is_a_benchmark_fault(tasks) -> None:
    lines = [
        "Can I have your account number, full name, and your postal code?",
        "Thank you, you're verified.",
        "One second. Which card would you like to use?",
    ]
    faithful = ScriptedCaller(tasks["t-decline-supervisor"], rng=0)
    confused = SynonymCaller(tasks["t-decline-supervisor"], rng=0)
    for caller in (faithful, confused):
        caller.open()
        for line in lines:
            reply = caller.hear(line)
    assert "0002" in faithful.acts[-1].text and faithful.deviations == []
    assert "4242" in reply.text  # "second" read as "the other card"
    assert [d.kind for d in confused.deviations] == ["out_of_order"]
