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
"""

from __future__ import annotations

import re
from datetime import date

from vamos_env.callers.base import Deviation, HangUpReason
from vamos_env.callers.listening import CHECKING
from vamos_env.callers.persona import Persona
from vamos_env.envs.energy.tasks.schema import CallerRequest, RequestKind, Task
from vamos_env.speech import find_dates, find_money


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
        brief_words = " ".join(
            [task.caller.opening_line]
            + [f"{r.says} {r.rephrase} {' '.join(r.refusals.values())}" for r in task.requests]
        )
        self._forbidden = [
            (rule.rule, re.compile(rule.pattern, re.IGNORECASE))
            for rule in persona.forbidden
            if rule.pattern is not None and not re.search(rule.pattern, brief_words, re.I)
        ]

    def agent_said(self, text: str) -> None:
        self._last_agent = text
        self._agent_money.update(m.value for m in find_money(text))
        self._agent_dates.update(m.value for m in find_dates(text))

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

    def call_ended(self, reason: HangUpReason, turn: int) -> None:
        """Judge the ending; only a caller's own decision to end can skip a request."""
        if reason != "caller_ended":
            return
        if CHECKING.search(self._last_agent):
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
