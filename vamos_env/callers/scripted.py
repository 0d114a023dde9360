"""The scripted caller: plays a task's brief faithfully, offline, deterministic from its seed.

It answers verification from the brief (only the second factor the brief names;
asked for another one it says it does not have that and offers its own), corrects
a wrong read-back, raises the requests in order, agrees to an action only when
the agent has said what the consent condition requires (the amount within
tolerance, the card's last four, the email read back) and objects otherwise,
turns down the offers its brief refuses, waits while the agent checks, repeats
and then rephrases when not understood, gives private facts only when asked, and
moves on when a request is answered, done or refused. It hangs up after the last
request, after a transfer, and after ``stall_limit`` turns without progress.

Persona changes only wording and the sceptic's behaviours. The values it says
(account number, name, second factor, private facts) and those it listens for
all come from the brief. It hears only the agent's words; ``goal_met`` is its
belief from those words.

What counts as a sceptic's wrong "yes" (``false_yes_rate``): only an answer to an
offer outside the brief, or to "anything else?" when nothing is left. Never to a
consent question, a read-back, a transfer offer, or an offer the brief refuses,
because a wrong yes there would change the account or the task's outcome, and
the failure would no longer be the agent's to avoid. The next turn takes it back.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Literal, TypeVar

import numpy as np

from vamos_env.callers.base import CUT_OFF, Deviation, HangUp, Utterance
from vamos_env.callers.brief import card_fact, fact_named, matching_refusal
from vamos_env.callers.deviation import BriefMonitor
from vamos_env.callers.listening import (
    TRANSFER,
    Heard,
    Question,
    listen,
    read_back_name,
    topic_of,
)
from vamos_env.callers.persona import Persona, load_persona
from vamos_env.envs.energy.tasks.schema import (
    CallerRequest,
    Consent,
    PrivateFact,
    RequestKind,
    SecondFactorKind,
    Task,
)
from vamos_env.speech import (
    Mention,
    find_counts,
    name_part,
    normalise,
    number,
    ordinal,
    spelled,
)

T = TypeVar("T")

HeardOutcome = Literal["resolved", "refused", "transferred"]
_FACTORS: dict[str, SecondFactorKind] = {
    "card_last4": "card_last4",
    "postal_code": "postal_code",
    "last_bill_amount": "last_bill_amount",
}
DEFAULT_STALL_LIMIT = 4


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")", re.IGNORECASE)


# What an answer to each kind of request sounds like: topic words, and whether a
# money amount (or a "nothing owed" phrase) must come with them.
_NOTHING_OWED = _rx(
    r"nothing (past )?(due|owed|outstanding)",
    r"no (past[- ]due |outstanding )?balance",
    r"(don'?t|do not) owe",
    r"paid in full",
    r"up to date",
    r"all paid",
    r"zero",
)
_ANSWERS: dict[RequestKind, tuple[re.Pattern[str], bool]] = {
    "balance": (_rx("balance|owe|past due|overdue|due|outstanding"), True),
    "explain_bill": (
        _rx("charge|supply|delivery|generation|distribution|tax|kwh|kilowatt|usage|used"),
        True,
    ),
    "compare_bills": (
        _rx(
            "higher|lower|more|less|increase|decrease|difference|because|went (up|down)|usage|rate"
        ),
        True,
    ),
    "payment_history": (_rx("paid|payment"), False),
    "quote_arrangement": (_rx("month|instal|payment"), True),
    "arrangement_status": (
        _rx("outstanding|remaining|left|owe|instal|overdue|next|balance"),
        True,
    ),
    "paperless_status": (_rx("paperless|paper|e-?mail|electronic"), False),
    "supplier": (
        _rx("supplier|suppl(y|ied)|default service|generation|price to compare|electricity from"),
        False,
    ),
    "protections": (_rx("medical|certificate|winter|protect|terminat|shut ?off"), False),
}
# Requests that end with the agent doing something; the answer is "done".
_ACTIONS: dict[RequestKind, re.Pattern[str]] = {
    "pay_bill": _rx(r"pa(y|id)", r"payment", r"charge"),
    "pay_after_decline": _rx(r"pa(y|id)", r"payment", r"charge"),
    "create_arrangement": _rx(r"arrangement", r"plan", r"set up", r"enrol", r"instal"),
    "record_arrangement_payment": _rx(r"record", r"appl", r"post", r"payment", r"credit"),
    "due_date_extension": _rx(r"due", r"extend", r"extension", r"moved", r"date"),
    "enable_paperless": _rx(r"paperless", r"e-?mail", r"paper", r"electronic"),
    "disable_paperless": _rx(r"paperless", r"e-?mail", r"paper", r"mail"),
}
# An offer to take a payment, and the requests that ask for one.
_CHARGE = _rx(r"charge", r"take (a|the) payment")
_PAYMENTS = frozenset({"pay_bill", "pay_after_decline"})
# Acts that move a call forward (the first time in a row they are said).
_PROGRESS_ACTS = frozenset(
    {"identity", "lacks_factor", "readback_right", "readback_wrong", "retry_identity", "agree",
     "object", "refuse", "private_fact", "request", "next_request", "why", "source",
     "accept_offer", "decline_offer", "transfer_ok", "take_back"}
)  # fmt: skip
# Capitalised words that sit next to a name without being part of it.
_NOT_NAMES = frozenset({"I", "Is", "Thanks", "Thank", "So", "Mr", "Mrs", "Ms", "Dr", "And", "Okay"})
_TITLES = frozenset({"mr", "mrs", "ms", "dr"})
# "Could you spell your last name?", "how do you spell your first name": which part is asked.
# "... your last name, spelled out?" names the part first.
_SPELL = re.compile(
    r"\bspell(?:ing|ed)?\b.{0,25}?\b(?:(?P<which>first|middle|last|sur|family)\s*)?name\b"
    r"|\b(?:(?P<before>first|middle|last|sur|family)\s*)?name\b.{0,12}?\bspell(?:ing|ed)?\b"
    # "And your middle name, a word for each letter?" (after the first and last were spelled)
    # ("award for each letter": the ear runs "a word" together)
    r"|\b(?P<part>first|middle|last)\s+name\b.{0,6}\b(?:a\s*ward|words?)\b.{0,12}\bletters?\b",
    re.IGNORECASE,
)
_SPELL_WITH_WORDS = re.compile(
    r"\bas in\b|\b(?:a\s*ward|words?)\b.{0,12}\bletters?\b", re.IGNORECASE
)
_ORDINALS = {ordinal(n): n for n in range(1, 21)}
# "What's the second letter of your last name?"
_LETTER_OF_NAME = re.compile(
    rf"\b(?P<nth>{'|'.join(_ORDINALS)})\s+letter\s+of\s+your\s+(?P<part>first|middle|last)"
    r"\s+name\b",
    re.IGNORECASE,
)
# "Could you say those digits one at a time?", "... digit by digit?"
_ONE_AT_A_TIME = re.compile(r"\bone (?:digit |number )?at a time\b|\bdigit by digit\b", re.I)
_GO_AHEAD = _rx(r"go ahead", r"proceed", r"confirm", r"set (it|that|this) up", r"do (it|that)")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _digit_by_digit(value: str) -> str:
    """The digits of ``value`` said one by one: "Zero, zero, zero, five."."""
    words = ", ".join(number(int(d)) for d in value if d.isdigit())
    return words[:1].upper() + words[1:] + "."


def _letters_of(words: list[str]) -> str:
    """A name's letters alone, lower-cased: "O'Malley" and "Omalley" are one name."""
    return "".join(c for w in words for c in w.lower() if c.isalpha())


@dataclass(frozen=True)
class CallerAct:
    """One thing the caller did, for traces and tests: the act's name and the words."""

    turn: int
    act: str
    text: str


@dataclass
class _RequestState:
    raised: bool = False
    agreed: set[int] = field(default_factory=set)
    # The agent turn the caller last said yes to (asked again word for word, the yes was
    # lost on the line: the caller says yes again).
    agreed_to: str | None = None
    refused_offer: bool = False
    # An answer heard but not yet acted on (the sceptic asked "why?" first, or the
    # caller turned down an offer that came with it): it closes the request next.
    candidate: HeardOutcome | None = None
    outcome: HeardOutcome | None = None
    # Agent turns heard while this request was open: where consent values are looked up.
    heard: list[Heard] = field(default_factory=list)


class ScriptedCaller:
    """The offline caller. ``rng`` (a generator or a seed) picks wording and the sceptic's slips."""

    def __init__(
        self,
        task: Task,
        persona: Persona | str = "calm",
        *,
        rng: np.random.Generator | int | None = 0,
        stall_limit: int = DEFAULT_STALL_LIMIT,
    ) -> None:
        if stall_limit < 1:
            raise ValueError(f"stall_limit: expected at least 1, got {stall_limit}")
        self.task = task
        self.brief = task.caller
        self.persona = load_persona(persona) if isinstance(persona, str) else persona
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.stall_limit = stall_limit
        # Its own words are held to its brief too: a misunderstanding is a benchmark fault.
        self.monitor = BriefMonitor(task, self.persona)
        self.deviations: list[Deviation] = self.monitor.deviations  # one list, shared
        self.acts: list[CallerAct] = []
        self.turn = 0
        self.current = 0
        self.requests = [_RequestState() for _ in task.requests]
        self.verified = False
        self.identity_given = False
        self.ended: HangUp | None = None
        self._stall = 0
        self._recent: deque[tuple[str, int, int] | None] = deque(maxlen=stall_limit)
        self._last_text = ""
        self._misunderstood = 0
        self._transfer_heard = False
        self._owe_take_back = False
        self._asked_why = False
        self._sourced: set[int] = set()
        self._facts: dict[tuple[str, int | None], int] = {}
        self._pending: Heard | None = None
        self._last_heard: Heard | None = None  # the agent's previous turn, as understood
        self._own_money, self._own_dates = self._own_values()
        self._spells_with_words = False

    # --- protocol ---------------------------------------------------------------------------

    def open(self) -> Utterance:
        text = self._say("open", opening_line=self.brief.opening_line)
        self.monitor.caller_said(text, 0)
        return Utterance(text)

    def hear(self, text: str) -> Utterance | HangUp:
        return self._take_turn("hear", self._hear, text)

    def interrupt(self, text: str) -> Utterance | HangUp:
        """The caller cut in on the agent, which is still talking; ``text`` is what it heard
        so far. What it heard counts; it answers with its interruption, not as if it had
        heard a whole turn (a read-back cut in half is no read-back to dispute)."""
        return self._take_turn("interrupt", self._cut_in, text)

    def _take_turn(
        self, name: str, respond: Callable[[str], Utterance | HangUp], text: str
    ) -> Utterance | HangUp:
        if self.ended is not None:
            raise RuntimeError(f"{name}() after the caller hung up")
        self.turn += 1
        reply = respond(text)
        if reply.text:
            self.monitor.caller_said(reply.text, self.turn)
        return reply

    def _cut_in(self, text: str) -> Utterance | HangUp:
        # It knows it cut the agent off: the last sentence it heard is open, whatever full
        # stop a recogniser put after it.
        text = text.rstrip().removesuffix(".")
        heard = listen(text)
        # A question heard before it cut in is answered ("... your account number and full
        # name"); otherwise it tells the agent to get on with it.
        if heard.is_question and not heard.cut_digits:
            return self._hear(text)
        return self._interrupted(text, None)

    def holds_cut_in(self, text: str) -> bool:
        """Whether the caller lets the agent finish rather than cut in, having heard ``text``
        of a turn still going on: a person listens to its own details being read back to
        it (a code being read out), lets an offer it is asked to agree to finish, and
        listens to figures and to an answer to what it asked: it interrupts a monologue,
        not a confirmation or the answer it called for."""
        heard = listen(text.rstrip().removesuffix("."))
        if heard.readback or heard.offer or heard.digits or heard.cut_digits:
            return True
        if heard.money or heard.dates:
            return True
        return self.verified and self._outcome(heard) is not None

    def _interrupted(self, text: str, limit: int | None) -> Utterance | HangUp:
        # Cut in, but what was heard before cutting in still counts.
        heard = listen(text)
        self._last_heard = heard
        self.monitor.agent_said(heard.text, heard)
        if self._contradicted(heard) and self.persona.behaviours.hangs_up_on_contradiction:
            return self._hang_up("contradiction", "contradiction_goodbye")
        state = self._state
        if state is not None and self.verified:
            state.heard.append(heard)
            state.candidate = self._outcome(heard) or state.candidate
        self._progress(None)
        if self._stalled():
            return self._hang_up("stall", "stall_goodbye")
        return Utterance(self._say("interrupt"), cut_in_after_words=limit)

    def _hear(self, text: str) -> Utterance | HangUp:
        if text.endswith(CUT_OFF):
            return self._cut_off(text[: -len(CUT_OFF)].rstrip())
        words = text.split()
        limit = self.persona.behaviours.interrupt_after_words
        if limit is not None and len(words) > limit:
            return self._interrupted(" ".join(words[:limit]), limit)
        heard = listen(text)
        self.monitor.agent_said(text, heard)
        if self._contradicted(heard) and self.persona.behaviours.hangs_up_on_contradiction:
            return self._hang_up("contradiction", "contradiction_goodbye")
        reply = self._respond(heard)
        if isinstance(reply, HangUp):
            return reply
        if self._stalled():
            return self._hang_up("stall", "stall_goodbye")
        return reply

    def _cut_off(self, text: str) -> Utterance | HangUp:
        """The line cut the agent off mid-reply: what came through counts, then the caller
        asks for the rest. The line's fault, not the agent's: no turn towards a stall."""
        heard = listen(text)
        self.monitor.agent_said(text, heard)
        self._last_heard = heard
        state = self._state
        if state is not None and self.verified:
            state.heard.append(heard)
            state.candidate = self._outcome(heard) or state.candidate
        words = self._pick("cut_out")
        self._record("cut_out", words)
        return Utterance(words)

    def goal_met(self) -> bool:
        """Every request heard answered or done, or ending the way the brief expects."""
        return all(
            state.outcome is not None
            and (state.outcome == "resolved" or state.outcome == request.expected_outcome)
            for state, request in zip(self.requests, self.task.requests, strict=True)
        )

    @property
    def outcomes(self) -> list[HeardOutcome | None]:
        return [state.outcome for state in self.requests]

    # --- the decision ---------------------------------------------------------------------

    def _respond(self, heard: Heard) -> Utterance | HangUp:
        prefix = ""
        if self._owe_take_back and not heard.silent:
            self._owe_take_back = False
            prefix = self._say("take_back") + " "
            if self.current >= len(self.requests):
                return self._hang_up("done", "goodbye", prefix=prefix)

        if heard.silent:
            return self._utter("hello", progress=False)

        if self._transfer_heard:
            return self._hang_up("transferred", None)

        if self._last_heard is not None:
            heard = heard.after(self._last_heard)
        self._last_heard = heard
        heard = self._focus(heard)
        chat = heard.says_nothing_asked
        if chat is not None:  # "How are you today?" and nothing else: a courtesy, then go on
            prefix += self._pick("still_here" if chat.presence else "small_talk") + " "

        state = self._state
        if state is not None and (self.verified or state.raised):
            state.heard.append(heard)

        if heard.transfer and not heard.offer:
            return self._transfer()

        if heard.not_understood and not heard.quotes_values:
            return self._misheard(prefix)
        self._misunderstood = 0

        if not self.verified:
            reply = self._verification(heard, prefix)
            if reply is not None:
                return reply

        outcome = self._outcome(heard)
        if state is not None and outcome is not None:
            state.candidate = outcome

        sceptic = self._sceptic(heard, prefix)
        if sceptic is not None:
            return sceptic
        heard = self._with_pending(heard)

        if heard.is_question or heard.readback:
            reply = self._question(heard, prefix, answered=outcome is not None)
            if reply is not None:
                return reply

        if state is not None and state.candidate is not None:
            self.verified = True
            return self._close(state.candidate, prefix)

        if heard.verified:
            self.verified = True
            return self._raise(prefix)

        if heard.anything_else:
            if self.current >= len(self.requests):
                if self._false_yes():
                    return self._utter("affirm", prefix=prefix)
                return self._hang_up("done", "goodbye", prefix=prefix)
            if state is not None and state.refused_offer:
                return self._close("refused", prefix)
            if self.identity_given:
                self.verified = True
            return self._raise(prefix)

        if heard.checking:
            return self._utter("wait", prefix=prefix, progress=False)

        if heard.closing and self.current >= len(self.requests):
            return self._hang_up("done", "goodbye", prefix=prefix)

        if heard.is_question:
            return self._utter("dont_know", prefix=prefix, progress=False)
        if self.verified and state is not None and not state.raised:
            return self._raise(prefix)
        return self._nudge(prefix)

    # --- verification ---------------------------------------------------------------------

    def _verification(self, heard: Heard, prefix: str) -> Utterance | None:
        question = heard.asking()
        spelled = self._spelled(question.text) or self._letter_of_name(question.text)
        if spelled is not None:  # "Could you spell your first name for me?"
            return self._utter("identity", prefix=prefix, key=f"spell:{spelled}", text=spelled)
        one_by_one = self._one_digit_at_a_time(question.text)
        if one_by_one is not None:  # "Could you say those digits one at a time?"
            key = f"digits:{one_by_one}"
            return self._utter("identity", prefix=prefix, key=key, text=one_by_one)
        # "Is your account number 4417-...?", "Is the name Dana Whitman?" read a detail back.
        named = question.yes_no and any(self._name_readback(question.text))
        checks = heard.readback or named or (question.yes_no and _carries_values(question))
        if checks:  # a read-back with nothing to compare is a question: answer below
            wrong, compared = self._check_readback(heard)
            if wrong is not None:
                # Correcting a new guess moves the call on; correcting the same one again
                # does not (the agent is going round in circles).
                return self._utter(
                    "readback_wrong", prefix=prefix, value=wrong, key=_readback_key(question)
                )
            if compared:
                return self._utter("readback_right", prefix=prefix)
        if heard.verify_failed:
            return self._utter(
                "retry_identity", prefix=prefix, key="identity:all", identity=self._identity()
            )
        if heard.asks or heard.asks_second_factor:
            self.identity_given = True
            own = self.brief.second_factor.kind
            factors = [_FACTORS[a] for a in heard.asks if a in _FACTORS]
            given = ",".join(a for a in heard.asks if a in ("account_number", "name"))
            parts = []
            if "account_number" in heard.asks:
                parts.append(self._pick("account_number", account_number=self.brief.account_number))
            if "name" in heard.asks:
                parts.append(self._pick("name", full_name=self.brief.full_name))
            if factors and own not in factors:
                asked = self.persona.wording.factor_names[factors[0]]
                parts.append(self._pick("lacks_factor", asked=asked, offered=self._factor_line()))
                key = f"identity:{given},factor"
                return self._utter("lacks_factor", prefix=prefix, key=key, text=" ".join(parts))
            if factors or heard.asks_second_factor:
                parts.append(self._factor_line())
                given += ",factor"
            key = "identity:all" if given == "account_number,name,factor" else f"identity:{given}"
            return self._utter("identity", prefix=prefix, key=key, text=" ".join(parts))
        return None

    def _check_readback(self, heard: Heard) -> tuple[str | None, bool]:
        """The correct value when the agent read one back wrong; and whether it read any back."""
        compared = False
        account_digits = self.brief.account_number.replace("-", "")
        factor = self.brief.second_factor
        asked = heard.asking()
        for mention in asked.digits:
            digits = re.sub(r"\D", "", mention.value)
            if len(digits) >= 8:
                compared = True
                if digits != account_digits:
                    return self.brief.account_number, True
            elif (
                len(digits) >= 3
                and digits in account_digits
                and digits != _digits(factor.value)
                and "account" in asked.text.lower()
            ):
                # A piece of its account number read back, the rest lost to the ear
                # ("account 4944-29a75" for "nine eight seven"): what it heard agrees, and
                # it is no second factor to correct ("No, it's 4242").
                compared = True
            elif factor.kind != "last_bill_amount" and len(digits) >= 3:
                compared = True
                if digits != factor.value:
                    return factor.value, True
            elif factor.kind == "last_bill_amount" and len(digits) >= 3 and not asked.money:
                # "two twenty-six thirty-five" with no money word reads as figures
                compared = True
                if digits != _digits(factor.value):
                    return f"${factor.value}", True
        for mention in heard.cut_digits:
            # Cut off mid-code: wrong if what was heard cannot start the true value.
            digits = _digits(mention.value)
            known = (account_digits, _digits(factor.value))
            if len(digits) >= 4 and not any(k.startswith(digits) for k in known):
                compared = True
                account = len(digits) > 4 or "account" in asked.text.lower()
                wrong = self.brief.account_number if account else factor.value
                return wrong, True
        if factor.kind == "last_bill_amount":
            for money in asked.money:
                compared = True
                if money.value != _cents(factor.value):
                    return f"${factor.value}", True
        wrong_name, said_name = self._name_readback(asked.text)
        if wrong_name:
            return self.brief.full_name, True
        return None, compared or said_name

    def _spelled(self, text: str) -> str | None:
        """The name spelled letter by letter when the agent asks for it ("K W A M E.", or
        "K as in Kilo, ..." when asked for a word for each letter):
        the first name, the last name, or all of it, as asked; None when not asked."""
        match = _SPELL.search(text)
        if match is None:
            return None
        full = self.brief.full_name
        which = match.group("which") or match.group("before") or match.group("part")
        parts = full.split()
        if which == "first":
            parts = [name_part(full, 0)]
        elif which in ("last", "sur", "family"):
            parts = [name_part(full, -1)]  # "Van Horn", particles and all
        elif which == "middle":
            parts = name_part(full, 1).split()
            if not parts:
                return "I don't have a middle name."
        # Asked for "a word for each letter" ("like A as in Alfa"), it spells with words,
        # and goes on so for the rest of the call (a line that lost "a word for each
        # letter" from the next ask does not make it spell bare letters again).
        self._spells_with_words |= _SPELL_WITH_WORDS.search(text) is not None
        with_words = self._spells_with_words
        return " ".join(spelled(part, with_words=with_words) for part in parts)

    def _letter_of_name(self, text: str) -> str | None:
        """One letter of the name when the agent asks for it ("What's the second letter
        of your last name?" -> "A.", or "A as in Alfa." when asked with a word for it);
        None when not asked so."""
        match = _LETTER_OF_NAME.search(text)
        if match is None:
            return None
        index = {"first": 0, "middle": 1, "last": -1}[match["part"].lower()]
        part = name_part(self.brief.full_name, index)
        letters = [c for c in part if c.isalpha()]
        position = _ORDINALS[match["nth"].lower()]
        if position > len(letters):
            return f"There are only {number(len(letters))} letters in it."
        letter = letters[position - 1].upper()
        return spelled(letter) if _SPELL_WITH_WORDS.search(text) else letter + "."

    def _one_digit_at_a_time(self, text: str) -> str | None:
        """The account number (when the question names it) or the card's or postal code's
        digits said one by one, "Zero, zero, zero, five."; None when not asked so."""
        if not _ONE_AT_A_TIME.search(text):
            return None
        factor = self.brief.second_factor
        if re.search(r"\baccount\b", text, re.IGNORECASE):
            value = self.brief.account_number
        elif factor.kind != "last_bill_amount":
            value = factor.value
        else:
            return None  # an amount is said as an amount
        return _digit_by_digit(value)

    def _name_readback(self, text: str) -> tuple[bool, bool]:
        """(read back wrong, read back right) for the caller's name in ``text``.

        Wrong when a part of the name sits next to a capitalised word that is not
        part of it ("Dana Whitman"), or when the agent reads back the name with a part
        missing ("name Victor Marie" for Victor Marie Kowalski); right when every part
        is there. "Thanks, Dana." alone is neither: a first name is a courtesy, not a
        read-back.
        """
        parts = self.brief.full_name.split()
        # "name Vactor Morie Colosky", "name Dana Dana Whitfield": the words read back as the
        # name are the name, each part once and in order, or they are wrong. Compared by
        # their letters ("Rosa Omalley" as a spelling gives it is "Rosa O'Malley"), from
        # the words, not capitals ("name queen novick" as a recogniser writes it).
        said = read_back_name(text)
        words = [w for w in said or () if w not in _TITLES]
        if words:
            letters = _letters_of(words)
            same = letters == _letters_of(parts)
            return not same, same
        known = {p.lower() for p in parts}
        present = 0
        for part in parts:
            name = re.escape(part)
            if not re.search(rf"\b{name}\b", text, re.IGNORECASE):
                continue
            present += 1
            for pattern in (rf"(?i:\b{name})\s+([A-Z][\w'-]+)", rf"([A-Z][\w'-]+)\s+(?i:{name}\b)"):
                for neighbour in re.findall(pattern, text):
                    if neighbour.lower() not in known and neighbour not in _NOT_NAMES:
                        return True, False
        if 0 < present < len(parts) and re.search(r"\bname\b", text, re.IGNORECASE):
            return True, False
        return False, present == len(parts)

    def _identity(self) -> str:
        return " ".join(
            (
                self._pick("account_number", account_number=self.brief.account_number),
                self._pick("name", full_name=self.brief.full_name),
                self._factor_line(),
            )
        )

    def _factor_line(self) -> str:
        factor = self.brief.second_factor
        return self._pick_from(self.persona.wording.second_factor[factor.kind], value=factor.value)

    # --- the sceptic -----------------------------------------------------------------------

    def _contradicted(self, heard: Heard) -> bool:
        """Whether the agent gave a different amount for something it stated before."""
        contradiction = False
        if not heard.text.rstrip().endswith((".", "?", "!")):
            return False  # a turn cut short is no ground for calling the agent inconsistent
        since = 0
        for mention in heard.money:
            topic = topic_of(heard.text, mention, since)
            since = mention.end
            if topic is None:
                continue
            terms = {c.value.n for c in heard.counts}
            key = (topic, next(iter(terms)) if len(terms) == 1 else None)
            before = self._facts.get(key)
            if before is not None and abs(before - mention.value) > 1 and not heard.state_change:
                contradiction = True
            self._facts[key] = mention.value
        return contradiction

    def _sceptic(self, heard: Heard, prefix: str) -> Utterance | None:
        b = self.persona.behaviours
        if not (b.asks_why_first_fact or b.demands_source_for_numbers):
            return None
        new_money = {m.value for m in heard.money} - self._own_money
        new_dates = {m.value for m in heard.dates} - self._own_dates
        if heard.source_named:
            self._sourced |= new_money
        if b.asks_why_first_fact and not self._asked_why and (new_money or new_dates):
            self._asked_why = True
            self._sourced |= new_money
            self._defer(heard)
            return self._utter("why", prefix=prefix)
        unsourced = new_money - self._sourced
        if b.demands_source_for_numbers and unsourced:
            self._sourced |= unsourced
            self._defer(heard)
            return self._utter("source", prefix=prefix)
        return None

    def _defer(self, heard: Heard) -> None:
        """Park a question the sceptic's challenge put off, to answer on the next turn."""
        self._pending = heard if (heard.offer or heard.readback) else None

    def _with_pending(self, heard: Heard) -> Heard:
        pending, self._pending = self._pending, None
        if pending is None or heard.is_question:
            return heard
        if heard.withdrawn or heard.refusal or heard.failed or heard.done or heard.transfer:
            return heard  # not an answer to "Why?": the question it put off is gone
        return replace(
            heard,
            focus=pending.focus,
            offer=pending.offer,
            readback=pending.readback,
            is_question=True,
        )

    def _false_yes(self) -> bool:
        rate = self.persona.behaviours.false_yes_rate
        if rate and self.rng.random() < rate:
            self._owe_take_back = True
            return True
        return False

    # --- requests --------------------------------------------------------------------------

    @property
    def _request(self) -> CallerRequest | None:
        if self.current < len(self.task.requests):
            return self.task.requests[self.current]
        return None

    @property
    def _state(self) -> _RequestState | None:
        return self.requests[self.current] if self.current < len(self.requests) else None

    def _raise(self, prefix: str, act: str = "request") -> Utterance | HangUp:
        request, state = self._request, self._state
        if request is None or state is None:
            return self._hang_up("done", "goodbye", prefix=prefix)
        state.raised = True
        return self._utter(act, prefix=prefix, says=self._request_words(request, "says"))

    def _request_words(self, request: CallerRequest, which: Literal["says", "rephrase"]) -> str:
        own = self.persona.wording.requests.get(request.kind)
        if own:
            index = 0 if which == "says" else min(1, len(own) - 1)
            return own[index].format(says=request.says, rephrase=request.rephrase)
        return request.says if which == "says" else request.rephrase

    def _close(self, outcome: HeardOutcome, prefix: str) -> Utterance | HangUp:
        state = self._state
        if state is None:
            return self._hang_up("done", "goodbye", prefix=prefix)
        state.outcome = outcome
        self.current += 1
        self._pending = None
        if self._request is None:
            return self._hang_up("done", "goodbye", prefix=prefix)
        return self._raise(prefix, act="next_request")

    def _transfer(self) -> Utterance:
        state = self._state
        if state is not None:
            state.outcome = "transferred"
        self._transfer_heard = True
        return self._utter("transfer_ok")

    def _outcome(self, heard: Heard) -> HeardOutcome | None:
        """What this turn tells the caller about its current request, if anything."""
        request, state = self._request, self._state
        if request is None or state is None or heard.verify_failed:
            return None
        if heard.transfer and not heard.offer:
            return "transferred"
        kind = request.kind
        if kind in _ACTIONS:
            if heard.failed or (heard.refusal and not heard.offer):
                # A decline with another card still to try is not the end of the request.
                more_to_try = state.agreed and len(state.agreed) < len(request.consent)
                return None if more_to_try and not state.refused_offer else "refused"
            # After a consent, "that went through" needs no topic words to be about it.
            about_it = bool(state.agreed) or _ACTIONS[kind].search(heard.text) is not None
            consented = not request.consent or bool(state.agreed)
            if heard.done and consented and about_it:
                if kind == "due_date_extension" and not heard.dates:
                    return None
                return "resolved"
            return None
        if kind in _ANSWERS:
            topic, needs_money = _ANSWERS[kind]
            says_it = bool(topic.search(heard.text)) and (
                not needs_money or bool(heard.money) or bool(_NOTHING_OWED.search(heard.text))
            )
            if says_it and not (heard.is_question and not (heard.money or heard.dates)):
                return "resolved"
        if heard.refusal and not heard.offer:
            return "refused"
        return None

    def _focus(self, heard: Heard) -> Heard:
        """Answer the last question the brief has an answer to; else the turn's last question.

        "Which card would you like to use? Can I also tell you about autopay?" is
        answered with the card: the offer after it is one the brief knows nothing of.
        """
        asking = [q for q in heard.questions if not q.says_nothing]
        if len(asking) < 2:
            return heard
        for question in reversed(asking):
            if self._can_answer(question):
                return heard if question is heard.focus else heard.focused(question)
        return heard

    def _can_answer(self, question: Question) -> bool:
        if question.anything_else or question.not_understood or question.readback:
            return True
        if not self.verified and (question.identity or question.second_factor):
            return True
        request, state = self._request, self._state
        if request is None or state is None:
            return False
        if question.offer and TRANSFER.search(question.text):
            return True
        if matching_refusal(request, question.text) is not None:
            return True
        pending = len(state.agreed) < len(request.consent)
        if pending and question.offer and self._about_action(request, question):
            return True
        if _own_detail_asked(request, question.text) is not None:
            return True
        return self._private_fact(question) is not None

    def _question(self, heard: Heard, prefix: str, *, answered: bool) -> Utterance | None:
        """A question after verification: a transfer offer, an offer the brief refuses,
        consent to the request's action, a private fact, or an offer outside the brief."""
        request, state = self._request, self._state
        if request is None or state is None:
            return None
        asked = heard.asking()
        if heard.offer and TRANSFER.search(asked.text):
            if request.expected_outcome == "transferred":
                self._transfer_heard = True
                state.outcome = "transferred"
                return self._utter("accept_offer", text=self._pick("affirm"), prefix=prefix)
            return self._utter("decline_offer", prefix=prefix)
        refusal = matching_refusal(request, asked.text)
        if refusal is not None:
            state.refused_offer = True
            return self._utter("refuse", prefix=prefix, refusal=refusal)
        pending = [k for k in range(len(request.consent)) if k not in state.agreed]
        # A read-back of this request's own figures ("over 36 months?", "you paid $40 on
        # September 8?") is answered as one; a question with terms to agree to is a consent.
        consent_terms = bool(pending) and bool(asked.money or asked.digits)
        if (asked.yes_no or heard.readback) and not consent_terms:
            wrong, compared = self._check_own_figures(request, asked)
            if wrong is not None:
                return self._utter(
                    "readback_wrong", prefix=prefix, value=wrong, key=_readback_key(asked)
                )
            if compared:
                return self._utter("readback_right", prefix=prefix)
        # A yes/no question that carries a value ("Is <email> still the best one?") asks
        # the caller to confirm it, as a read-back does.
        asks_consent = heard.offer or heard.readback
        confirms = asks_consent or (asked.yes_no and _carries_values(asked))
        again = len(state.heard) >= 2 and state.heard[-2].text == heard.text
        if state.agreed and again and heard.text == state.agreed_to and confirms:
            # The question it just said yes to, asked again word for word: its yes was
            # lost on the line, and it says yes again.
            return self._utter(
                "agree", prefix=prefix, agree=request.consent[max(state.agreed)].agree
            )
        if pending and confirms and self._about_action(request, asked):
            # The brief's consents come in order (the first card, then the other one).
            k = pending[0]
            consent = request.consent[k]
            if self._consent_met(consent, heard, state):
                state.agreed.add(k)
                state.agreed_to = heard.text
                return self._utter("agree", prefix=prefix, agree=consent.agree)
            if asks_consent:
                wanted = card_fact(self.brief, request, k)
                offered = {_digits(m.value)[-4:] for m in asked.digits}
                objection = self._pick("object", object_to=consent.object_to)
                if wanted is not None and offered and wanted.value not in offered:
                    # Offered another card than the one it means to use: it says which one.
                    objection = f"{objection} {wanted.say}"
                return self._utter("object", prefix=prefix, text=objection)
        own = _own_detail_asked(request, asked.text)
        if own is not None:  # "Would you like it over how many months?" asks, not offers
            return self._utter("private_fact", prefix=prefix, say=own[0], value=own[1])
        fact = self._private_fact(asked) if heard.focus is not None else None
        if fact is not None and _ONE_AT_A_TIME.search(asked.text) and re.search(r"\d", fact.value):
            # "Could you say the card's last four digits one at a time?"
            say = _digit_by_digit(fact.value)
            return self._utter("private_fact", prefix=prefix, say=say, value=fact.value)
        if not heard.offer:
            if fact is not None:
                return self._utter("private_fact", prefix=prefix, say=fact.say, value=fact.value)
            return None
        if answered:
            return None  # an answer with a courtesy question attached: take the answer
        if fact is not None:  # "Would you like to try another card?"
            return self._utter("private_fact", prefix=prefix, say=fact.say, value=fact.value)
        acts = request.kind in _ACTIONS or request.kind == "supervisor"
        if acts and self._about_action(request, asked):
            return self._utter("accept_offer", text=self._pick("affirm"), prefix=prefix)
        if self._false_yes():
            return self._utter("affirm", prefix=prefix)
        return self._utter("decline_offer", prefix=prefix)

    def _check_own_figures(
        self, request: CallerRequest, question: Question
    ) -> tuple[str | None, bool]:
        """A read-back of the figures this request gave ("you paid $40 on September 8?",
        "over 36 months?"): (the right figures when one is wrong, whether any was compared).

        Only the request's own figures are compared: its amount and date, its term in
        months, the days it asked for. A question carrying none of them is not a read-back.
        """
        details = request.details
        cents = details.get("amount_cents")
        day = details.get("paid_on") or details.get("promised_on")
        term, days = details.get("installments"), details.get("days")
        right: list[str] = []
        compared = wrong = False
        if isinstance(cents, int) and question.money:
            compared = True
            wrong |= any(m.value != cents for m in question.money)
        if isinstance(day, str) and question.dates:
            compared = True
            wrong |= any(m.value != date.fromisoformat(day) for m in question.dates)
        paid = []
        if isinstance(cents, int) and (question.money or question.dates):
            paid.append(f"${cents // 100}.{cents % 100:02d}")
        if isinstance(day, str) and (question.money or question.dates):
            when = date.fromisoformat(day)
            paid.append(f"{when:%B} {when.day}, {when.year}")
        if paid:
            right.append(" on ".join(paid))
        for counted in find_counts(question.text):
            unit, n = counted.value.unit, counted.value.n
            if unit in ("months", "payments") and isinstance(term, int):
                compared, wrong = True, wrong or n != term
                right.append(f"{term} months")
            elif unit == "days" and isinstance(days, int):
                compared, wrong = True, wrong or n != days
                right.append(f"{days} days")
        return (" and ".join(dict.fromkeys(right)) if wrong else None), compared

    def _about_action(self, request: CallerRequest, question: Question) -> bool:
        """Whether a question is about doing what this request asks (not some other offer:
        "Shall I charge $219.67 to the card ending 9995?" is no answer to a caller who
        asked for more days to pay)."""
        if _CHARGE.search(question.text) and request.kind not in _PAYMENTS:
            return False
        if question.money or question.digits or question.emails:
            return True
        if _GO_AHEAD.search(question.text):
            return True
        action = _ACTIONS.get(request.kind)
        return action is not None and bool(action.search(question.text))

    def _consent_met(self, consent: Consent, heard: Heard, state: _RequestState) -> bool:
        """Whether the agent has said what this consent rests on.

        Each value is looked for in the question asked, else in the rest of the
        turn, else in the request's earlier turns: a wrong amount in the question
        itself is objected to even after the right one was said before.
        """
        asked = heard.asking()
        history = state.heard
        for key, value in consent.values.items():
            if isinstance(value, bool):
                continue
            if isinstance(value, int) and _is_count_key(key):
                continue  # the term shows in the amounts; "followed by five payments" is not 5
            elif isinstance(value, int):
                if value == 0:
                    continue  # "no down payment" has no figure to hold the agent to
                said = _said(asked.money, heard.money, [h.money for h in history])
                if not any(abs(m.value - value) <= consent.tolerance_cents for m in said):
                    return False
            elif "@" in value:
                said_emails = _said(asked.emails, heard.emails, [h.emails for h in history])
                if value.lower() not in {m.value.lower() for m in said_emails}:
                    return False
            elif _ISO_DATE.fullmatch(value):
                said_dates = _said(asked.dates, heard.dates, [h.dates for h in history])
                if date.fromisoformat(value) not in {m.value for m in said_dates}:
                    return False
            elif value.isdigit():
                said_digits = _said(asked.digits, heard.digits, [h.digits for h in history])
                if not any(_digits(m.value).endswith(value) for m in said_digits):
                    return False
        return True

    def _private_fact(self, question: Question) -> PrivateFact | None:
        """The fact a question asks about: every word of its key in the question's own words
        (or, failing that, its whole sentence), the most specific key winning.

        A fact naming a card the request's consents name is the card for the consent
        now due: asked "which card?" before the first card was tried, it names the
        first one; after that one was agreed to (and declined), the other one.
        """
        fact = fact_named(self.brief, question.text) or fact_named(self.brief, question.context)
        request, state = self._request, self._state
        if fact is None or request is None or state is None:
            return fact
        cards = {card_fact(self.brief, request, k) for k in range(len(request.consent))} - {None}
        if fact in cards:
            due = next((k for k in range(len(request.consent)) if k not in state.agreed), None)
            return card_fact(self.brief, request, due) if due is not None else fact
        return fact

    # --- misunderstanding and stalls ------------------------------------------------------

    def _misheard(self, prefix: str) -> Utterance:
        self._misunderstood += 1
        request = self._request
        last = self._last_text or self.brief.opening_line
        if self._misunderstood == 1 or request is None:
            return self._utter("repeat", prefix=prefix, progress=False, last=last)
        says = self._request_words(request, "says")
        if self.persona.behaviours.forceful_when_misunderstood and self._misunderstood > 2:
            return self._utter(
                "forceful_repeat", prefix=prefix, progress=False, last=last, says=says
            )
        return self._utter(
            "rephrase",
            prefix=prefix,
            progress=False,
            rephrase=self._request_words(request, "rephrase"),
            says=says,
        )

    def _nudge(self, prefix: str) -> Utterance | HangUp:
        request = self._request
        if request is None:
            return self._hang_up("done", "goodbye", prefix=prefix)
        return self._utter(
            "nudge",
            prefix=prefix,
            progress=False,
            says=self._request_words(request, "says"),
            rephrase=self._request_words(request, "rephrase"),
        )

    def _progress(self, signature: tuple[str, int, int] | None) -> None:
        """Count a turn towards a stall unless it moved the call on with something new.

        Saying again what was said in the last few turns is no progress, so an agent
        that leads the caller round in circles stalls the call as surely as silence.
        """
        if signature is not None and signature not in self._recent:
            self._stall = 0
        else:
            self._stall += 1
        self._recent.append(signature)

    def _stalled(self) -> bool:
        return self._stall >= self.stall_limit

    # --- words -----------------------------------------------------------------------------

    def _pick_from(self, templates: tuple[str, ...], **values: str) -> str:
        template = (
            templates[int(self.rng.integers(len(templates)))]
            if len(templates) > 1
            else (templates[0])
        )
        return template.format(**values)

    def _pick(self, act: str, **values: str) -> str:
        return self._pick_from(getattr(self.persona.wording, act), **values)

    def _say(self, act: str, **values: str) -> str:
        text = self._pick(act, **values)
        self._record(act, text)
        return text

    def _utter(
        self,
        act: str,
        *,
        prefix: str = "",
        progress: bool | None = None,
        text: str | None = None,
        key: str | None = None,
        **values: str,
    ) -> Utterance:
        words = text if text is not None else self._pick(act, **values)
        moved = act in _PROGRESS_ACTS if progress is None else progress
        # What the turn did, not its wording (which varies with the seed): giving all of
        # one's details again, however phrased, is the same move.
        state = self._state
        signature = (key or act, self.current, len(state.agreed) if state is not None else 0)
        self._progress(signature if moved else None)
        full = prefix + words
        self._record(act, full)
        return Utterance(full)

    def _hang_up(self, reason: str, act: str | None, *, prefix: str = "") -> HangUp:
        words = self._pick(act) if act is not None else ""
        full = (prefix + words).strip()
        self._record(f"hang_up:{reason}", full)
        hang_up = HangUp(reason, full)  # type: ignore[arg-type]
        self.ended = hang_up
        return hang_up

    def _record(self, act: str, text: str) -> None:
        self.acts.append(CallerAct(self.turn, act, text))
        if text:
            self._last_text = text

    def _own_values(self) -> tuple[set[int], set[date]]:
        """Amounts and dates the caller itself knows and says: hearing them is not news."""
        money: set[int] = set()
        dates: set[date] = set()
        factor = self.brief.second_factor
        if factor.kind == "last_bill_amount":
            money.add(_cents(factor.value))
        for request in self.task.requests:
            for key, value in request.details.items():
                if isinstance(value, bool):
                    continue
                if isinstance(value, int) and key.endswith("cents"):
                    money.add(value)
                elif isinstance(value, str) and _ISO_DATE.fullmatch(value):
                    dates.add(date.fromisoformat(value))
        return money, dates


def _cents(dollars: str) -> int:
    whole, _, frac = dollars.strip().lstrip("$").partition(".")
    return int(whole.replace(",", "")) * 100 + int((frac + "00")[:2] or 0)


def _is_count_key(key: str) -> bool:
    if key.endswith("_cents"):
        return False  # "monthly_installment_cents" is an amount the agent must say
    return any(part in key for part in ("install", "instal", "count", "days", "months", "term"))


def _said(
    asked: tuple[Mention[T], ...],
    turn: tuple[Mention[T], ...],
    earlier: list[tuple[Mention[T], ...]],
) -> list[Mention[T]]:
    """Values of one type a consent rests on: the question's, else the turn's, else earlier."""
    if asked:
        return list(asked)
    if turn:
        return list(turn)
    return [m for mentions in earlier for m in mentions]


# "Over how many months?", "How many more days do you need?": the agent asks for a count
# this request names (the caller asked for it, so it knows it).
_HOW_MANY = re.compile(
    r"\bhow many (?:more )?(?:(?P<term>months|monthly payments|payments|instal+ments)|"
    r"(?P<days>days|extra days))\b",
    re.IGNORECASE,
)


# "Which bill would you like to pay: the August bill or the September bill?"
_WHICH_BILL = re.compile(r"\bwhich (?:month'?s )?bill\b|\bwhich month\b|\bwhat bill\b", re.I)


def _own_detail_asked(request: CallerRequest, text: str) -> tuple[str, str] | None:
    """The caller's answer (words, value) when the agent asks for the term, the days or
    the bill this request is about, else None."""
    month = request.details.get("bill_month")
    if isinstance(month, str) and _WHICH_BILL.search(text):
        return f"The {month} bill.", month
    match = _HOW_MANY.search(text)
    if match is None:
        return None
    term, days = request.details.get("installments"), request.details.get("days")
    if match.group("term") and isinstance(term, int):
        return f"Over {term} months.", f"{term} months"
    if match.group("days") and isinstance(days, int):
        return f"{days} more days, please.", f"{days} days"
    return None


def _readback_key(question: Question) -> str:
    """What a read-back offered: its figures and words, so a new guess is a new move."""
    return "readback_wrong:" + " ".join(normalise(question.text).split()[-24:])


def _carries_values(question: Question) -> bool:
    return bool(question.money or question.digits or question.emails or question.dates)


def _digits(code: str) -> str:
    return re.sub(r"\D", "", code)
