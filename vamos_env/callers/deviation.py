"""The deviation check: did the caller keep to its brief?

A model-driven caller can drift: skip a request, say a figure it was meant to ask
for (so the agent merely repeats it), or hang up while the agent was still
checking. Any of these makes the call a benchmark fault: excluded from the
agent's score and reported. ``BriefMonitor`` watches both sides of a call and
compares what the caller said with its brief:

- **volunteered_figure**: the caller said an amount or a date the agent should
  state (a consent figure or a checked value) before the agent said it. Figures
  the caller knows as its own (its last bill amount, a payment it made, a date it
  promises) are allowed.
- **skipped_request**: the caller ended the call itself with a request of its
  brief never raised. A request counts as raised when the caller's words carry
  its topic or share most content words with the brief's wording.
- **hung_up_while_waiting**: the caller ended the call right after the agent said
  it was checking.
- **forbidden**: the caller's words match one of its persona's forbidden
  patterns, when the brief's own words do not (a brief that asks for a
  supervisor may ask for one).

A caller can also misunderstand the agent: answer something it was not asked, or
answer from outside its brief. What shows it from the outside:

- **out_of_order**: its brief gives cards in an order (the first card, then after
  a decline the other one), and the caller named or agreed to a later card before
  it had agreed to try the earlier one.
- **accepted_refused**: the agent offered something the brief turns down (a new
  card by phone, enrolling when only the numbers were wanted) and the caller said
  yes.
- **unasked_answer**: the caller gave a private fact (its card, its email, the
  payment it made) when the agent's turn asked nothing (no question, no request,
  none still open after the caller's own "Why?"); "Sorry, I didn't catch that."
  may be answered by repeating.
- **invented_value**: the caller said a code, an amount or an email address that
  is nowhere in its task and that the agent never said.

The scripted caller runs this monitor over its own calls as well: its answers
come from its understanding of the agent's words, and a misunderstanding there
must show as a benchmark fault, not as the agent's failure.
"""

from __future__ import annotations

import re
from datetime import date

from vamos_env.callers.base import Deviation, HangUpReason
from vamos_env.callers.brief import matching_refusal
from vamos_env.callers.listening import Heard, Question, listen
from vamos_env.callers.persona import Persona
from vamos_env.envs.energy.tasks.schema import CallerRequest, RequestKind, Task
from vamos_env.speech import find_dates, find_digit_strings, find_email, find_money


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")", re.IGNORECASE)


_ARRANGEMENT = _rx(r"arrangement", r"payment plan", r"plan", r"instal", r"spread", r"monthly")
# Words that show the caller raised a request of each kind.
TOPIC_WORDS: dict[RequestKind, re.Pattern[str]] = {
    "balance": _rx(r"owe", r"balance", r"past due", r"behind", r"how much"),
    "explain_bill": _rx(r"explain", r"charges?", r"breakdown", r"understand", r"what.*bill"),
    "compare_bills": _rx(r"compare", r"higher", r"more than", r"went up", r"difference", r"why"),
    "payment_history": _rx(r"history", r"payments", r"paid", r"what i've paid"),
    "pay_bill": _rx(r"pay"),
    "pay_after_decline": _rx(r"pay"),
    "quote_arrangement": _ARRANGEMENT,
    "create_arrangement": _ARRANGEMENT,
    "arrangement_too_little_owed": _ARRANGEMENT,
    "arrangement_already_active": _ARRANGEMENT,
    "arrangement_down_payment": _ARRANGEMENT,
    "arrangement_shutoff": _ARRANGEMENT,
    "arrangement_status": _rx(r"arrangement", r"plan", r"instal", r"where.*stand", r"status"),
    "record_arrangement_payment": _rx(r"paid", r"payment", r"made", r"record", r"on my account"),
    "promise_to_pay": _rx(r"next week", r"will pay", r"i'?ll pay", r"promise", r"note", r"later"),
    "due_date_extension": _rx(r"extension", r"extend", r"more (time|days)", r"due date", r"later"),
    "paperless_status": _rx(r"paperless", r"e-?mail", r"by (post|mail)", r"paper"),
    "enable_paperless": _rx(r"paperless", r"e-?mail", r"paper"),
    "disable_paperless": _rx(r"paperless", r"paper", r"(by|in the) (post|mail)"),
    "supplier": _rx(r"suppl", r"who.*electricity", r"generation", r"rate"),
    "protections": _rx(r"medical", r"winter", r"protect", r"shut ?off", r"certificate"),
    "supervisor": _rx(r"supervisor", r"manager", r"someone else", r"a person"),
}
_WORD = re.compile(r"[a-z']+")
_COMMON = frozenset(
    {"i", "i'd", "i'm", "my", "the", "a", "an", "to", "and", "or", "can", "you", "is", "it",
     "of", "on", "for", "me", "do", "what", "please", "like", "would", "want", "just", "now",
     "that", "this", "be", "with", "in", "if", "how", "much", "are", "am", "have", "so"}
)  # fmt: skip
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A reply that says yes (and not "no", "not", "rather not").
_YES = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|sure|okay|ok|alright|all right|go ahead|please do|that works|"
    r"sounds good|fine|ja|prima)\b",
    re.IGNORECASE,
)
_NO = re.compile(r"\b(?:no|not|don'?t|nope|rather not|nee|niet)\b", re.IGNORECASE)
_CODE_DIGITS = 3  # shorter digit runs ("8", "30") are quantities, not codes


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON and len(w) > 2}


def answer_figures(task: Task) -> tuple[set[int], set[date]]:
    """Amounts (cents) and dates the agent must state and the caller must not volunteer."""
    money: set[int] = set()
    dates: set[date] = set()
    for request in task.requests:
        for consent in request.consent:
            for key, value in consent.values.items():
                if isinstance(value, int) and not isinstance(value, bool) and key.endswith("cents"):
                    money.add(value)
    for check in task.checks:
        if check.value_type == "money" and isinstance(check.value, int):
            money.add(check.value)
        elif check.value_type == "date" and isinstance(check.value, str):
            dates.add(date.fromisoformat(check.value))
    own_money, own_dates = own_figures(task)
    return money - own_money - {0}, dates - own_dates


def own_figures(task: Task) -> tuple[set[int], set[date]]:
    """Amounts and dates the caller knows itself: its last bill amount, request details."""
    money: set[int] = set()
    dates: set[date] = set()
    factor = task.caller.second_factor
    if factor.kind == "last_bill_amount":
        money.update(m.value for m in find_money(f"${factor.value}"))
    for request in task.requests:
        for key, value in request.details.items():
            if isinstance(value, bool):
                continue
            if isinstance(value, int) and key.endswith("cents"):
                money.add(value)
            elif isinstance(value, str) and _ISO.match(value):
                dates.add(date.fromisoformat(value))
    for fact in task.caller.private_facts:
        money.update(m.value for m in find_money(fact.say))
        dates.update(m.value for m in find_dates(fact.say))
    return money, dates


def task_values(task: Task) -> tuple[set[str], set[int], set[str]]:
    """Every code (as digits), amount (cents) and email the task holds, in any of its words."""
    texts = [task.caller.opening_line, task.caller.account_number, task.caller.second_factor.value]
    if task.caller.second_factor.kind == "last_bill_amount":
        texts.append(f"${task.caller.second_factor.value}")
    for fact in task.caller.private_facts:
        texts += [fact.value, fact.say]
    for request in task.requests:
        texts += [request.says, request.rephrase, *request.refusals.values()]
        for consent in request.consent:
            texts += [consent.agree, consent.object_to]
    digits: set[str] = set()
    money: set[int] = set()
    emails: set[str] = set()
    for text in texts:
        digits.update(_digits(m.value) for m in find_digit_strings(text))
        digits.update(re.findall(r"\d+", text))
        money.update(m.value for m in find_money(text))
        emails.update(m.value.lower() for m in find_email(text))
    for request in task.requests:
        values = [*request.details.values()]
        for consent in request.consent:
            values += consent.values.values()
        for value in values:
            if isinstance(value, bool):
                continue
            if isinstance(value, int):
                money.add(value)
                digits.add(str(value))
            elif "@" in value:
                emails.add(value.lower())
            else:
                digits.add(_digits(value))
    for check in task.checks:
        if isinstance(check.value, int) and not isinstance(check.value, bool):
            money.add(check.value)
        elif isinstance(check.value, str):
            digits.add(_digits(check.value))
            if "@" in check.value:
                emails.add(check.value.lower())
    return digits - {""}, money, emails


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


class BriefMonitor:
    """Watches a call and lists the caller's deviations from its brief."""

    def __init__(self, task: Task, persona: Persona) -> None:
        self.task = task
        self.persona = persona
        self.deviations: list[Deviation] = []
        self._figures, self._dates = answer_figures(task)
        self._agent_money: set[int] = set()
        self._agent_dates: set[date] = set()
        self._raised = [False] * len(task.requests)
        self._last_agent = ""
        self._heard: Heard | None = None  # the agent's last turn as understood
        self._open: Question | None = None  # the agent's question still awaiting an answer
        self._challenged = False  # the caller's last words were a question of its own ("Why?")
        self._verified = False
        self._digits, self._money, self._emails = task_values(task)
        self._agent_digits: set[str] = set()
        self._agent_emails: set[str] = set()
        # Per request: the card of each consent, in the brief's order, and those agreed to.
        self._cards = [
            [str(c.values["card_last4"]) for c in r.consent if "card_last4" in c.values]
            for r in task.requests
        ]
        self._agreed: list[set[int]] = [set() for _ in task.requests]
        self._identity = {
            _digits(task.caller.account_number),
            _digits(task.caller.second_factor.value),
        }
        brief_words = " ".join(
            [task.caller.opening_line]
            + [f"{r.says} {r.rephrase} {' '.join(r.refusals.values())}" for r in task.requests]
        )
        self._forbidden = [
            (rule.rule, re.compile(rule.pattern, re.IGNORECASE))
            for rule in persona.forbidden
            if rule.pattern is not None and not re.search(rule.pattern, brief_words, re.I)
        ]

    def agent_said(self, text: str, heard: Heard | None = None) -> None:
        """The agent's turn as the caller heard it (``heard``: already understood, if at hand)."""
        self._last_agent = text
        heard = heard if heard is not None else listen(text)
        self._heard = heard
        self._agent_money.update(m.value for m in find_money(text))
        self._agent_dates.update(m.value for m in find_dates(text))
        self._agent_digits.update(_digits(m.value) for m in heard.digits)
        self._agent_digits.update(re.findall(r"\d+", text))
        self._agent_emails.update(m.value.lower() for m in heard.emails)
        if heard.verified:
            self._verified = True
        if heard.focus is not None:
            self._open = heard.focus
        elif not self._challenged or heard.withdrawn or heard.refusal or heard.done:
            self._open = None  # a statement; after the caller's "Why?" the question stays open
        self._challenged = False

    def caller_said(self, text: str, turn: int) -> None:
        for i, request in enumerate(self.task.requests):
            if not self._raised[i] and self._raises(request, text):
                self._raised[i] = True
        for mention in find_money(text):
            if mention.value in self._figures and mention.value not in self._agent_money:
                self._flag(
                    "volunteered_figure",
                    f"said {mention.text!r} before the agent stated it",
                    turn,
                )
        for day in find_dates(text):
            if day.value in self._dates and day.value not in self._agent_dates:
                self._flag("volunteered_figure", f"said {day.text!r} before the agent", turn)
        for rule, pattern in self._forbidden:
            if pattern.search(text):
                self._flag("forbidden", f"{rule} (said {text!r})", turn)
        if self._heard is not None:  # the opening line answers nothing
            self._invented(text, turn)
            self._out_of_order(text, turn)
            self._accepted_refused(text, turn)
            self._unasked(text, turn)
        self._challenged = text.rstrip().endswith("?")

    def _invented(self, text: str, turn: int) -> None:
        for code in find_digit_strings(text):
            digits = _digits(code.value)
            known = self._digits | self._agent_digits
            if len(digits) >= _CODE_DIGITS and digits not in known:
                self._flag("invented_value", f"said {code.text!r}, which its brief lacks", turn)
        for amount in find_money(text):
            if amount.value not in self._money | self._agent_money:
                self._flag("invented_value", f"said {amount.text!r}, which its brief lacks", turn)
        for email in find_email(text):
            if email.value.lower() not in self._emails | self._agent_emails:
                self._flag("invented_value", f"said {email.text!r}, which its brief lacks", turn)

    def _out_of_order(self, text: str, turn: int) -> None:
        """A later card named or agreed to before the caller agreed to try the one before it."""
        heard = self._heard
        if heard is None or not self._verified:
            return
        named = {_digits(m.value)[-4:] for m in find_digit_strings(text)}
        if heard.asks or heard.asks_second_factor or heard.verify_failed:
            # Answering for verification: its second factor may be one of its cards.
            named -= {_digits(self.task.caller.second_factor.value)[-4:]}
        question = self._open
        yes = question is not None and (question.offer or question.readback) and _says_yes(text)
        offered = self._offered_cards(heard) if yes else set()
        for i, cards in enumerate(self._cards):
            if not self._raised[i] or len(cards) < 2:
                continue
            agreed = self._agreed[i]
            for k, card in enumerate(cards):
                earlier = [j for j in range(k) if j not in agreed and cards[j] != card]
                if card in named and earlier:
                    self._flag(
                        "out_of_order",
                        f"named the card ending {card} before agreeing to try the card "
                        f"ending {cards[earlier[0]]}",
                        turn,
                    )
                if yes and card in offered:
                    if earlier and not offered & {cards[j] for j in earlier}:
                        self._flag(
                            "out_of_order",
                            f"agreed to charge the card ending {card} before the card ending "
                            f"{cards[earlier[0]]}",
                            turn,
                        )
                    agreed.add(k)
            if yes and not offered:
                # A yes to "Shall I charge that card?" with no card named: the next one due.
                due = next((k for k in range(len(cards)) if k not in agreed), None)
                if due is not None:
                    agreed.add(due)

    def _offered_cards(self, heard: Heard) -> set[str]:
        question = self._open
        layers = [question.digits if question is not None else (), heard.digits]
        for layer in layers:
            found = {_digits(m.value)[-4:] for m in layer}
            if found:
                return found
        return set()

    def _accepted_refused(self, text: str, turn: int) -> None:
        question = self._open
        if question is None or not question.offer or not _says_yes(text):
            return
        for i, request in enumerate(self.task.requests):
            refusal = matching_refusal(request, question.text)
            if self._raised[i] and refusal is not None and refusal not in text:
                self._flag(
                    "accepted_refused",
                    f"said yes to {question.text!r}, which its brief turns down ({refusal!r})",
                    turn,
                )
                return

    def _unasked(self, text: str, turn: int) -> None:
        heard = self._heard
        if heard is None or self._open is not None or heard.not_understood or heard.silent:
            return
        for fact in self.task.caller.private_facts:
            if fact.say in text or self._gives(fact.say, text):
                self._flag(
                    "unasked_answer",
                    f"gave {fact.key.replace('_', ' ')} ({fact.say!r}) though the agent asked "
                    f"nothing ({self._last_agent!r})",
                    turn,
                )

    def _gives(self, say: str, text: str) -> bool:
        """Whether ``text`` carries every value of a fact's words (not an identity value)."""
        values = {_digits(m.value) for m in find_digit_strings(say)} - self._identity
        emails = {m.value.lower() for m in find_email(say)}
        if not values and not emails:
            return False
        said = {_digits(m.value) for m in find_digit_strings(text)}
        said_emails = {m.value.lower() for m in find_email(text)}
        return values <= said and emails <= said_emails

    def call_ended(self, reason: HangUpReason, turn: int) -> None:
        """Judge the ending; only a caller's own decision to end can skip a request."""
        if reason != "caller_ended":
            return
        if self._heard is not None and self._heard.checking:
            self._flag(
                "hung_up_while_waiting",
                f"ended the call while the agent was checking ({self._last_agent!r})",
                turn,
            )
        for i, raised in enumerate(self._raised):
            if not raised:
                request = self.task.requests[i]
                self._flag(
                    "skipped_request",
                    f"request {i} ({request.kind}: {request.says!r}) never raised",
                    turn,
                )

    @property
    def raised(self) -> list[bool]:
        return list(self._raised)

    def _raises(self, request: CallerRequest, text: str) -> bool:
        if TOPIC_WORDS[request.kind].search(text):
            return True
        wanted = _content_words(request.says) | _content_words(request.rephrase)
        said = _content_words(text)
        return bool(wanted) and len(wanted & said) >= max(2, len(wanted) // 2)

    def _flag(self, kind: str, detail: str, turn: int) -> None:
        self.deviations.append(Deviation(kind, detail, turn))  # type: ignore[arg-type]


def _says_yes(text: str) -> bool:
    return bool(_YES.search(text)) and not _NO.search(text)
