"""Shared pieces for the caller tests: hand-built tasks, a correct test agent, a conversation loop.

The tasks follow the task schema and the catalogue's wording (built by hand so these
tests do not depend on the exam build). ``AnswerKeyAgent`` is a small rule-based
agent that knows each task's answer key and behaves as a correct agent would:
asks for verification, reads back and waits for consent before acting, reports
declines, refuses what policy refuses, transfers where it must. It has no tools; it
exists to drive the caller through realistic turns. ``converse`` runs a call between
a caller and any agent function, optionally through a text channel.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import pytest

from vamos_env.callers.base import Caller, HangUp, Utterance
from vamos_env.channel import TextChannel
from vamos_env.envs.energy.tasks.schema import (
    CallerBrief,
    CallerRequest,
    Check,
    Consent,
    ExpectedChange,
    PrivateFact,
    SecondFactor,
    Task,
    TaskMeta,
)
from vamos_env.speech import render

ACCOUNT = "4417-90781"
NAME = "Dana Whitfield"
EMAIL = "dana.whitfield@example.com"


def _brief(opening: str, factor: SecondFactor, facts: tuple[PrivateFact, ...] = ()) -> CallerBrief:
    return CallerBrief(
        account_number=ACCOUNT,
        full_name=NAME,
        second_factor=factor,
        opening_line=opening,
        private_facts=facts,
    )


def _task(
    task_id: str,
    requests: tuple[CallerRequest, ...],
    checks: tuple[Check, ...],
    factor: SecondFactor,
    changes: tuple[ExpectedChange, ...] = (),
    facts: tuple[PrivateFact, ...] = (),
) -> Task:
    first = requests[0].says
    more = " I have a couple of other things after that, too." if len(requests) > 1 else ""
    opening = f"Hi. {first}{more}"
    return Task(
        task_id=task_id,
        caller=_brief(opening, factor, facts),
        requests=requests,
        expected_changes=changes,
        checks=checks,
        meta=TaskMeta(request_kinds=tuple(r.kind for r in requests), request_count=len(requests)),
    )


def _say(cid: str, index: int, topic: str, value: int | str, value_type: str) -> Check:
    return Check(
        id=cid,
        request_index=index,
        kind="say",
        description=f"The agent states the {topic}.",
        topic=topic,
        value=value,
        value_type=value_type,
    )


POSTAL = SecondFactor(kind="postal_code", value="15213")
CARD = SecondFactor(kind="card_last4", value="4242")
BILL = SecondFactor(kind="last_bill_amount", value="222.89")


def balance_then_pay() -> Task:
    balance = CallerRequest(
        kind="balance",
        says="How much do I owe right now, and is any of it past due?",
        rephrase="What's my balance, and am I behind on anything?",
        expected_outcome="resolved",
    )
    pay = CallerRequest(
        kind="pay_bill",
        says="I'd like to pay my August bill today.",
        rephrase="Can I pay off the August bill now with the card you have on file?",
        details={"bill_month": "August", "card_last4": "4242"},
        consent=(
            Consent(
                kind="card_and_amount",
                values={"card_last4": "4242", "amount_cents": 22289},
                agree="Yes, that's right. Go ahead.",
                object_to="No, that's not right. Can you check it again?",
            ),
        ),
        refusals={
            "new_card_by_phone": "I'd rather not read out a card number. Use the card on file."
        },
        expected_outcome="resolved",
    )
    return _task(
        "t-balance-pay",
        (balance, pay),
        (
            _say("past_due", 0, "past due amount", 22289, "money"),
            _say("card_last4", 1, "card ending", "4242", "digits"),
            _say("amount", 1, "payment amount", 22289, "money"),
        ),
        POSTAL,
        changes=(
            ExpectedChange(
                request_index=1,
                tool="make_payment",
                values={"bill_id": "in_1", "amount_cents": 22289, "card_last4": "4242"},
            ),
        ),
        facts=(PrivateFact(key="card_to_use", value="4242", say="The card ending 4242, please."),),
    )


def arrangement_then_paperless() -> Task:
    create = CallerRequest(
        kind="create_arrangement",
        says="I'm behind on my bills. Can I set up a payment arrangement over 6 months?",
        rephrase="I'd like to spread what I owe over 6 monthly payments, please.",
        details={"installments": 6},
        consent=(
            Consent(
                kind="terms",
                values={
                    "installments": 6,
                    "down_payment_cents": 0,
                    "first_installment_cents": 7334,
                    "monthly_installment_cents": 7329,
                },
                agree="Yes, that works. Please set it up.",
                object_to="Hold on, what would the monthly payment be exactly?",
            ),
        ),
        expected_outcome="resolved",
    )
    paperless = CallerRequest(
        kind="enable_paperless",
        says="I'd like to switch to paperless billing, please.",
        rephrase="Can you stop mailing my bills and email them instead?",
        consent=(
            Consent(
                kind="email",
                values={"email": EMAIL},
                agree="Yes, that's my email. Go ahead.",
                object_to="No, that's not my email address.",
            ),
        ),
        expected_outcome="resolved",
    )
    return _task(
        "t-arrangement-paperless",
        (create, paperless),
        (
            _say("monthly_installment", 0, "monthly instalment", 7329, "money"),
            _say("first_installment", 0, "first instalment", 7334, "money"),
            _say("first_due_date", 0, "first instalment due date", "2026-10-10", "date"),
            _say("email", 1, "destination email", EMAIL, "email"),
        ),
        CARD,
        changes=(
            ExpectedChange(
                request_index=0,
                tool="create_payment_arrangement",
                values={"installments": 6, "principal_cents": 43979},
            ),
            ExpectedChange(request_index=1, tool="set_paperless_billing", values={"enabled": True}),
        ),
        facts=(PrivateFact(key="email", value=EMAIL, say=f"My email is {EMAIL}."),),
    )


def quote_then_promise() -> Task:
    quote = CallerRequest(
        kind="quote_arrangement",
        says="If I set up a payment plan over 6 months for what I'm behind on, what would the "
        "payments be? I just want the numbers for now.",
        rephrase="What would I pay each month if I spread my past-due amount over 6 months?",
        details={"installments": 6},
        refusals={"enrol_now": "Not today, thanks. I just wanted to know the numbers."},
        expected_outcome="resolved",
    )
    promise = CallerRequest(
        kind="promise_to_pay",
        says="I can't pay my arrangement instalment until next week. Can you put down that I'll "
        "pay seventy-three dollars and twenty-nine cents on September seventeenth?",
        rephrase="Please note on the arrangement that I'll pay it on September seventeenth.",
        details={"amount_cents": 7329, "promised_on": "2026-09-17"},
        refusals={"already_paid": "No, I haven't paid it yet. I'll pay on September seventeenth."},
        expected_outcome="refused",
    )
    return _task(
        "t-quote-promise",
        (quote, promise),
        (
            _say("monthly_installment", 0, "monthly instalment", 7329, "money"),
            _say("first_due_date", 0, "first instalment due date", "2026-10-10", "date"),
        ),
        BILL,
    )


def decline_then_transfer() -> Task:
    pay = CallerRequest(
        kind="pay_after_decline",
        says="I'd like to pay my August bill with a card.",
        rephrase="I want to pay the August bill now, please.",
        details={"bill_month": "August", "first_card_last4": "0002", "second_card_last4": "4242"},
        consent=tuple(
            Consent(
                kind="card_and_amount",
                values={"card_last4": last4, "amount_cents": 22289},
                agree="Yes, go ahead.",
                object_to="That's not right. Can you check it again?",
            )
            for last4 in ("0002", "4242")
        ),
        expected_outcome="resolved",
    )
    supervisor = CallerRequest(
        kind="supervisor",
        says="I'd like to speak to a supervisor, please.",
        rephrase="Can you put me through to your supervisor?",
        expected_outcome="transferred",
    )
    return _task(
        "t-decline-supervisor",
        (pay, supervisor),
        (),
        POSTAL,
        facts=(
            PrivateFact(key="card_to_use", value="0002", say="Use my card ending 0002."),
            PrivateFact(
                key="other_card", value="4242", say="Okay, try the other card, the one ending 4242."
            ),
        ),
    )


def record_then_extension() -> Task:
    record = CallerRequest(
        kind="record_arrangement_payment",
        says="I made a payment on my arrangement a couple of days ago and I want to make sure "
        "it's on my account.",
        rephrase="I already paid this month's arrangement instalment. Can you put it on there?",
        details={"amount_cents": 7329, "paid_on": "2026-09-08"},
        expected_outcome="resolved",
    )
    extension = CallerRequest(
        kind="due_date_extension",
        says="Can you give me 10 more days to pay my August bill?",
        rephrase="I need the due date on the August bill moved back about 10 days.",
        details={"bill_month": "August", "days": 10},
        expected_outcome="refused",
    )
    return _task(
        "t-record-extension",
        (record, extension),
        (
            _say("outstanding_after", 0, "outstanding after the payment", 36650, "money"),
            _say("due_date_unchanged", 1, "due date unchanged", "2026-09-21", "date"),
            _say("still_owed", 1, "bill still owed", 22289, "money"),
        ),
        CARD,
        facts=(
            PrivateFact(
                key="payment_made",
                value="7329 cents on 2026-09-08",
                say="I paid seventy-three dollars and twenty-nine cents on September eighth, at a "
                "pay station.",
            ),
        ),
    )


ALL_TASKS: tuple[Callable[[], Task], ...] = (
    balance_then_pay,
    arrangement_then_paperless,
    quote_then_promise,
    decline_then_transfer,
    record_then_extension,
)

# --- the test agent -------------------------------------------------------------------------

_AGREE = re.compile(r"\b(yes|yeah|yep|go ahead|please do|that works|sure|okay|ok|ja)\b", re.I)
_OBJECT = re.compile(r"\b(no|not right|not my|nee|wrong|hold on)\b", re.I)
_INTERRUPT = re.compile(r"\b(stop|short version|get to the point|keep it short|korter)\b", re.I)
_CHALLENGE = re.compile(
    r"\b(why|source|where'?s that|says who|where does|waarom|zegt wie|waar komt)\b", re.I
)


def _shorter(text: str, words: int = 20) -> str:
    """Drop leading sentences until the turn fits; the question, if any, comes last."""
    sentences = re.split(r"(?<=[.?!])\s+", text.strip())
    while len(sentences) > 1 and len(" ".join(sentences).split()) > words:
        sentences.pop(0)
    return " ".join(sentences)


_TOOLS = {
    "pay_bill": "make_payment",
    "pay_after_decline": "make_payment",
    "create_arrangement": "create_payment_arrangement",
    "enable_paperless": "set_paperless_billing",
}


@dataclass
class AnswerKeyAgent:
    """A correct agent without tools: it reads the task's answer key instead.

    ``money_style`` picks how it speaks amounts ("words" as the policy asks, "digits"
    to keep turns short). ``factor_question`` replaces the usual verification
    question (to ask for a factor the caller does not have, for example).
    ``wrong`` names a value to get wrong: "amount" (reads back a different amount
    before paying), "email" (reads back another address).
    """

    task: Task
    money_style: str = "words"
    factor_question: str | None = None
    wrong: str | None = None
    verified: bool = False
    index: int = 0
    step: int = 0  # progress within the current request
    said: list[str] = field(default_factory=list)
    # The account changes it made: (request index, tool), as a real agent's tool calls would.
    actions: list[tuple[int, str]] = field(default_factory=list)
    concise: bool = False
    _last_question: str = ""

    greeting = "Thank you for calling Acme Energy, this is Rory. How can I help you today?"

    def money(self, cents: int) -> str:
        return render.money(cents, style=self.money_style)

    def reply(self, caller_text: str) -> str:
        text = self._reply(caller_text)
        self.said.append(text)
        return text

    def _reply(self, caller: str) -> str:
        if _INTERRUPT.search(caller):
            self.concise = True  # recover from the interruption: the same, shorter
            if not self.verified:
                self.step = max(0, self.step - 1)
                return self._verify("")
            return _shorter(self.said[-1])
        if not self.verified:
            return self._verify(caller)
        if self.index >= len(self.task.requests):
            return "Is there anything else I can help you with today?"
        if _CHALLENGE.search(caller) and len(caller.split()) <= 8:
            return "That comes from your account records. " + self._last_question
        request = self.task.requests[self.index]
        handler = getattr(self, f"_{request.kind}", None)
        if handler is None:
            resolved = request.expected_outcome == "resolved"
            handler = self._informational if resolved else self._generic
        return handler(caller)

    def _verify(self, caller: str) -> str:
        digits = re.sub(r"\D", "", caller)
        brief = self.task.caller
        has_number = brief.account_number.replace("-", "") in digits
        has_name = all(part.lower() in caller.lower() for part in brief.full_name.split())
        factor = brief.second_factor.value.replace(".", "")
        if has_number and has_name and factor in digits:
            self.verified = True
            self.step = 0
            return f"Thank you, {brief.full_name.split()[0]}, you're verified. How can I help?"
        if self.step > 0 and (has_number or has_name):
            return "I couldn't verify those details. Could you check them and tell me again?"
        self.step += 1
        if self.concise and self.factor_question is None:
            return "Account number, full name, and card last four, postal code or last bill amount?"
        return self.factor_question or (
            "I can help with that. First, can I have your account number, the full name on the "
            "account, and one of: the last four digits of a card on file, your postal code, or "
            "your last bill amount?"
        )

    def _next(self, text: str) -> str:
        self.index += 1
        self.step = 0
        self._last_question = ""
        return text

    def _checks(self) -> list[Check]:
        return [c for c in self.task.checks if c.request_index == self.index and c.kind == "say"]

    def _render(self, check: Check) -> str:
        value = check.value
        if check.value_type == "money" and isinstance(value, int):
            return self.money(value)
        if check.value_type == "date" and isinstance(value, str):
            return render.date_spoken(date.fromisoformat(value))
        if check.value_type == "email" and isinstance(value, str):
            return render.email_spoken(value)
        return str(value)

    def _facts(self) -> str:
        return " ".join(
            f"The {c.topic} is {self._render(c)}."
            if c.value is not None
            else f"{c.topic.capitalize()}."
            for c in self._checks()
        )

    def _informational(self, caller: str) -> str:
        facts = self._facts()
        return self._next(facts or "Let me check. That's all on file as you described.")

    def _consent_turn(self, consent: Consent, action: str) -> str:
        values = consent.values
        if consent.kind == "email":
            email = "dana.w@example.org" if self.wrong == "email" else str(values["email"])
            question = f"I have {render.email_spoken(email)} on file. Shall I send bills there?"
        elif consent.kind == "terms":
            first = int(values["first_installment_cents"])
            monthly = int(values["monthly_installment_cents"])
            question = (
                f"No down payment. First instalment {self.money(first)}, then {self.money(monthly)}"
                f" a month. Shall I set it up?"
            )
        else:
            amount = int(values["amount_cents"]) + (1000 if self.wrong == "amount" else 0)
            question = (
                f"I can charge {self.money(amount)} to the card ending in "
                f"{render.characters(str(values['card_last4']))}. Shall I go ahead?"
            )
        self._last_question = question
        return question

    def _with_consent(self, caller: str, done: str) -> str:
        request = self.task.requests[self.index]
        consent = request.consent[min(self.step // 2, len(request.consent) - 1)]
        if self.step % 2 == 0:
            self.step += 1
            return self._consent_turn(consent, done)
        if _OBJECT.search(caller) and not _AGREE.search(caller.split(".")[0]):
            self.wrong = None
            self.step -= 1
            return "Sorry about that. " + self._with_consent(caller, done)
        if not _AGREE.search(caller):
            return self._last_question
        self.actions.append((self.index, _TOOLS[request.kind]))
        return self._next(done)

    def _pay_bill(self, caller: str) -> str:
        return self._with_consent(caller, "Done. Your payment went through.")

    def _pay_after_decline(self, caller: str) -> str:
        if self.step == 1 and _AGREE.search(caller):
            self.step = 2
            second = self.task.requests[self.index].consent[1]
            question = (
                "I'm sorry, that card was declined, so the bill was not paid. Would you like "
                f"to try the card ending in {second.values['card_last4']}?"
            )
            self._last_question = question
            self.step = 3
            return question
        if self.step == 3 and _AGREE.search(caller):
            self.actions.append((self.index, "make_payment"))
            return self._next("Thank you. That payment went through.")
        return self._with_consent(caller, "Done.")

    def _create_arrangement(self, caller: str) -> str:
        return self._with_consent(caller, "Done. Your payment arrangement is now set up.")

    def _enable_paperless(self, caller: str) -> str:
        return self._with_consent(caller, "All set. Paperless billing is now turned on.")

    def _quote_arrangement(self, caller: str) -> str:
        if self.step == 0:
            self.step = 1
            facts = self._facts()
            self._last_question = "Would you like me to set it up?"
            return f"{facts} Would you like me to set it up?"
        return self._next("No problem. Is there anything else I can help with?")

    def _promise_to_pay(self, caller: str) -> str:
        return self._next(
            "I'm sorry, I can only record payments that have already been made, so I can't "
            "record a promise to pay."
        )

    def _record_arrangement_payment(self, caller: str) -> str:
        if self.step == 0:
            self.step = 1
            return "Could you tell me how much you paid and when you made the payment?"
        self.actions.append((self.index, "modify_payment_arrangement"))
        check = self._checks()[0]
        return self._next(
            f"Thanks. I've recorded your payment. The outstanding balance on the arrangement is "
            f"now {self._render(check)}."
        )

    def _generic(self, caller: str) -> str:
        """A request kind without its own handler, answered by its expected outcome."""
        request = self.task.requests[self.index]
        facts = self._facts()
        if request.expected_outcome == "refused":
            return self._next(f"I'm sorry, I'm not able to do that. {facts}".strip())
        if request.expected_outcome == "transferred":
            self.actions.append((self.index, "transfer_to_human"))
            return self._next(f"{facts} I'll transfer you to a colleague now.".strip())
        return self._next(facts or "Okay, that's noted.")

    def _disable_paperless(self, caller: str) -> str:
        self.actions.append((self.index, "set_paperless_billing"))
        return self._next("Done. Paperless billing is now turned off; bills will come by mail.")

    def _due_date_extension(self, caller: str) -> str:
        return self._next(f"I'm sorry, I couldn't move the due date. {self._facts()}")

    def _supervisor(self, caller: str) -> str:
        self.actions.append((self.index, "transfer_to_human"))
        return self._next("Of course. I'll transfer you to a supervisor now.")

    def _protections(self, caller: str) -> str:
        return self._generic(caller)


@dataclass
class Conversation:
    turns: list[tuple[str, str]]  # (speaker, text as that speaker said it)
    ending: HangUp | None
    caller: Caller

    def said_by(self, speaker: str) -> list[str]:
        return [t for s, t in self.turns if s == speaker]


def converse(
    caller: Caller,
    agent: Callable[[str], str],
    *,
    greeting: str = AnswerKeyAgent.greeting,
    channel: TextChannel | None = None,
    max_turns: int = 60,
) -> Conversation:
    """Run a call: the agent greets, the caller opens, then they alternate until a hang-up."""
    turns: list[tuple[str, str]] = [("agent", greeting)]
    said: Utterance = caller.open()
    turns.append(("caller", said.text))
    for _ in range(max_turns):
        received = [said.text] if channel is None else channel.to_agent(said.text)
        reply = ""
        for heard in received:  # the agent answers the last of them; spurious turns pile up
            reply = agent(heard)
        turns.append(("agent", reply))
        outcome = caller.hear(reply if channel is None else channel.to_caller(reply))
        if isinstance(outcome, HangUp):
            if outcome.text:
                turns.append(("caller", outcome.text))
            return Conversation(turns, outcome, caller)
        said = outcome
        turns.append(("caller", said.text))
    return Conversation(turns, None, caller)


@pytest.fixture
def tasks() -> dict[str, Task]:
    return {build().task_id: build() for build in ALL_TASKS}


@pytest.fixture
def answer_key_agent() -> type[AnswerKeyAgent]:
    return AnswerKeyAgent


@pytest.fixture(name="converse")
def converse_fixture() -> Callable[..., Conversation]:
    return converse
