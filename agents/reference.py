"""The reference agent: a scripted, policy-following solver of the Acme Energy billing line.

It is the exam's solvability proof, so it plays by the rules every agent plays by.
Its inputs are the environment's reset info (it reads only the persona, to keep its
turns short for a caller who interrupts) and the observations: the caller's words
and the tools' JSON results. It never reads the task, its checks or the seeded world.

How a call goes:

1. **Verification.** It greets, asks for the account number and the full name, then
   for one second factor, finds them in the caller's words (spoken numbers through
   ``vamos_env.speech.parse``, the name as the run of capitalised words), and calls
   ``verify_caller`` once. Before that it says nothing about any account.
2. **Requests.** Each caller turn that raises a request is read by ``understand``:
   ordered keyword rules over the phrasings callers of every persona use. Every
   arrangement request (a quote, a plan, one the policy refuses) is one intent: the
   quote tool, not the agent, decides whether it is a plain quote, a refusal, a down
   payment that needs a colleague, or the shutoff process.
3. **Speech.** Amounts in words, dates as spoken, card digits one by one, the email
   as read aloud (``vamos_env.speech.render``). Consent comes before every write:
   the card's last four and the amount before a payment, the terms before an
   arrangement, the email before paperless. A decline is said plainly, with another
   card on file offered. Transfers are announced before ``transfer_to_human`` and
   followed by closing words.

The conversation is one generator (``_call``): it yields actions and receives
observations, so each request reads top to bottom. The flawed baselines
(``vamos_env.agents.flawed``) override one hook each: ``_before_factor_question``,
``_ask_consent`` / ``_after_write``, ``_promise_to_pay`` / ``_decline_words``,
``_money``, ``_can_take_another``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypeVar

from vamos_env.clock import TODAY
from vamos_env.speech import (
    NAME_PARTICLES,
    find_counts,
    find_dates,
    find_digit_strings,
    find_letter,
    find_money,
    find_numbers,
    fits_spelling,
    name_part,
    ordinal,
    render,
    spelling_pattern,
)
from vamos_env.speech.spelling import LOST, name_cased

Action = dict[str, Any]
T = TypeVar("T")
Script = Generator[Action, str, T]

GREETING = "Thank you for calling Acme Energy, this is Rory."
FACTOR_AGAIN = "The card's last four, postal code or last bill?"
CLOSING = "Thank you for calling Acme Energy. A colleague will be with you in a moment."
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
)  # fmt: skip

Intent = Literal[
    "supervisor",
    "protections",
    "promise_to_pay",
    "record_payment",
    "arrangement_status",
    "arrangement",
    "due_date_extension",
    "paperless_status",
    "disable_paperless",
    "enable_paperless",
    "supplier",
    "compare_bills",
    "explain_bill",
    "payment_history",
    "pay_bill",
    "balance",
]


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


# --- what the caller asks for ----------------------------------------------------------------

# Ordered: the first rule that matches names the request. The order settles overlaps
# ("more days to pay my bill" is an extension, not a payment; "pay off my past-due
# balance over six months" is an arrangement, not a balance question).
_RULES: tuple[tuple[Intent, re.Pattern[str]], ...] = (
    ("supervisor", _rx(r"supervisor", r"manager", r"speak (to|with) (a|someone|a real) \w+")),
    ("protections", _rx(r"protect\w*", r"medical", r"certificate", r"winter")),
    (
        "promise_to_pay",
        _rx(
            r"i'?ll pay",
            r"i will pay",
            r"until next week",
            r"put down that",
            r"note (on|that)",
            r"promis\w* (?:to )?pay",
            r"i promise",
            r"haven'?t paid",
            r"can'?t pay",
        ),
    ),
    (
        "record_payment",
        _rx(
            r"made a payment",
            r"already paid",
            r"i (have )?paid",
            r"i'?ve paid",
            r"paid (this|last) month'?s",
            r"put it on (the|my) account",
            r"make sure it'?s on",
        ),
    ),
    (
        "arrangement_status",
        _rx(
            r"where do i stand",
            r"up to date on",
            r"how much is left",
            r"next (payment|instal+ment) (is )?due",
            r"status of my (payment )?(plan|arrangement)",
        ),
    ),
    (
        "arrangement",
        _rx(
            r"arrangement",
            r"payment plan",
            r"plan",
            r"instal+ments?",
            r"spread\w*",
            r"monthly payments",
            r"over (\w+[- ])?\w+ months",
        ),
    ),
    (
        "due_date_extension",
        _rx(
            r"more days",
            r"more time",
            r"extension",
            r"extend",
            r"due date",
            r"moved? back",
            r"days to pay",  # "10 moru days to pay": the "more" misheard
        ),
    ),
    (
        "paperless_status",
        _rx(r"am i on paperless", r"do (my )?bills come", r"still mail", r"how do my bills"),
    ),
    (
        "disable_paperless",
        _rx(
            r"turn off paperless",
            r"paper bills",
            r"in the mail again",
            r"mailed to me",
            r"stop (the )?paperless",
            r"off paperless",
        ),
    ),
    (
        "enable_paperless",
        _rx(
            r"paperless",
            r"stop mailing",
            r"e-?mail them",
            r"e-?mail(ed)? instead",
            r"go paperless",
        ),
    ),
    (
        "supplier",
        # Any word of "supply" ("supplies" heard as "supplios").
        _rx(r"suppl\w*", r"who \w+ (my )?electricity", r"another company"),
    ),
    (
        "compare_bills",
        _rx(
            r"go(ne)? up",
            r"went up",
            r"higher than",
            r"(?:bill|it)(?:'s| is| was| got| seems) higher",
            r"compared?",
            r"what changed",
            r"increase\w*",
            r"bigger",
        ),
    ),
    (
        "explain_bill",
        _rx(r"walk me through", r"explain", r"charges", r"paying for", r"break ?down"),
    ),
    (
        "payment_history",
        _rx(
            r"last payment",
            r"payment history",
            r"last paid",
            r"when did i (last )?pay",
            r"paid last",
        ),
    ),
    ("pay_bill", _rx(r"pay\b.{0,40}\bbill", r"pay (it|off|now|today)")),
    ("balance", _rx(r"owe", r"balance", r"past[- ]due", r"behind", r"late")),
)
_QUOTE_ONLY = _rx(
    r"just want(ed)? (the|to know the) numbers",
    r"not signing up",
    r"what would (the payments|i pay)",
    r"just (a )?quote",
    r"for now",
)


@dataclass(frozen=True)
class Request:
    """One request as the agent understood it from the caller's words."""

    intent: Intent
    text: str
    months: tuple[int, ...] = ()  # month numbers named, in the order said
    installments: int | None = None  # a term asked for ("over six months")
    days: int | None = None  # days asked for ("ten more days")
    quote_only: bool = False  # the caller wants the numbers, not a plan


def months_named(text: str) -> tuple[int, ...]:
    """The months ``text`` names (1-12), in the order said."""
    return tuple(month for word in re.findall(r"[A-Za-z]+", text) if (month := month_named(word)))


def month_named(word: str) -> int | None:
    """The month a word names (1-12), allowing one slipped letter in a long month name.

    A recogniser writes "Aagust", "Septembir" or "Joly"; a name of five letters or more
    one edit away is still that month, and one of four when capitalised ("may" must be
    exact).
    """
    lower = word.lower()
    if lower in MONTHS:
        return MONTHS.index(lower) + 1
    # Four letters one edit away are a month only when written as a name ("Joly", which
    # a recogniser capitalises as it would "July"; not "jury" or "duly").
    if len(lower) < 4 or (len(lower) == 4 and not word[:1].isupper()):
        return None
    for number, month in enumerate(MONTHS, start=1):
        if len(month) >= 4 and _one_edit(lower, month):
            return number
    return None


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one substitution, insertion or deletion."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


# The month a bill is compared with: up to two words after the cue, so that a misheard
# The caller says a bill rose.
_WENT_UP = re.compile(r"\b(?:go(?:ne)? up|went up|higher|increase\w*|bigger|more than)\b", re.I)
# "compared weth Joly" still names the earlier bill.
_EARLIER = re.compile(r"\b(?:compared|than|versus|vs)\b((?:\W+\w+){1,3})", re.I)


def understand(text: str) -> Request | None:
    """The request in a caller's turn, or None when no rule recognises one."""
    clean = text.replace("\u2019", "'")
    intent = next((name for name, pattern in _RULES if pattern.search(clean)), None)
    if intent is None:
        return None
    months = months_named(clean)
    counts = find_counts(clean)
    term = next((c.value.n for c in counts if c.value.unit in ("months", "payments")), None)
    days = next((c.value.n for c in counts if c.value.unit == "days"), None)
    return Request(
        intent=intent,
        text=clean,
        months=months,
        installments=term,
        days=days,
        quote_only=bool(_QUOTE_ONLY.search(clean)),
    )


# --- what a reply means ---------------------------------------------------------------------

_YES = _rx(
    r"yes", r"yeah", r"yep", r"sure", r"okay", r"ok", r"please do", r"go ahead", r"that works",
    r"sounds good", r"correct", r"that'?s right", r"fine", r"do it", r"set it up",
)  # fmt: skip
_NO = re.compile(
    r"^\W*(?:no|nope|not|hold on|hang on|wait|don'?t|that'?s not|sorry,? no)\b", re.IGNORECASE
)
_OBJECTION = _rx(r"not right", r"not my", r"wrong", r"exactly", r"check it", r"what would")
_CHALLENGE = re.compile(
    r"^\W*(?:why\b|where(?:'s| does| is| did)\b|says who\b|source\b|how do you know\b)",
    re.IGNORECASE,
)
_INTERRUPTION = _rx(r"keep it short", r"get to the point", r"short version", r"stop")
# Capitalised words that start a sentence or name a thing rather than a person.
_NOT_NAMES = frozenset(
    {
        "a", "again", "and", "account", "bill", "but", "card", "code", "fine", "hello", "hi",
        "i", "i'd", "i'm", "it", "it's", "its", "last", "let", "me", "mine", "my", "name",
        "name's", "no", "number", "okay", "please", "postal", "sorry", "sure", "that",
        "that's", "the", "thanks", "thank", "this", "use", "yeah", "yes", "you", "zip",
        "zip's", "mr", "mrs", "ms", "dr", "acme", "energy",
    }
)  # fmt: skip
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019\-]*[.,;:!?]?")


def caller_words(observation: str) -> str:
    """The caller's own words in an observation: its first line.

    The pipeline hands over the caller's turn first and then anything else the
    detector picked up in the room (a television, another table), one line each.
    """
    return next((line for line in observation.split("\n") if line.strip()), "")


def reply_kind(text: str) -> Literal["yes", "no", "other"]:
    """A reply to a yes/no question: agreement, refusal or objection, or something else."""
    if _NO.search(text):
        return "no"
    if _YES.search(text):
        return "yes"
    return "other"


def is_challenge(text: str) -> bool:
    """A short demand for a reason or a source ("Why?", "Where's that number from?")."""
    return bool(_CHALLENGE.search(text)) and len(text.split()) <= 10


# The caller asks for what it missed: "Sorry, you cut out there. Could you say that again?"
# Broad on purpose (a line garbles it too: "you cut eut there, could you sey that again"):
# taking an answer for a request to repeat only costs saying the turn again.
_REPEAT = re.compile(
    r"\b(?:cut|again|repeat|lost you|broke up|herhalen)\b|^\W*(?:sorry|pardon|what)\W*$",
    re.IGNORECASE,
)


def asks_to_repeat(text: str) -> bool:
    """Whether the caller asks for the turn again (or said nothing that came through)."""
    return not text.strip(" .,?!-") or bool(_REPEAT.search(text))


def is_interruption(text: str) -> bool:
    return bool(_INTERRUPTION.search(text)) and len(text.split()) <= 8


def find_name(text: str) -> str | None:
    """The longest run of capitalised words (with particles such as "van der") in ``text``."""
    best: list[str] = []
    run: list[str] = []

    def close() -> None:
        nonlocal best, run
        while run and run[-1].lower() in NAME_PARTICLES:
            run.pop()
        if len(run) > len(best):
            best = run
        run = []

    text = text.replace("\u2019", "'")
    gap_from = 0
    for match in _WORD.finditer(text):
        if re.search(r"\d", text[gap_from : match.start()]):
            close()  # "For 0 7 9 5 6 9 9 6 Preyah Brennan": digits end a name
        gap_from = match.end()
        token = match.group(0)
        word = token.rstrip(".,;:!?")
        ends = token != word
        capital = word[:1].isupper() and word.lower() not in _NOT_NAMES
        if capital or (run and word.lower() in NAME_PARTICLES):
            run.append(word)
        else:
            close()
        if ends:
            close()
    close()
    best = _without_repeats(best)
    if len(best) < 2 and (lowered := _LOWERCASE_MIDDLE.search(text)):
        # "Dimitri lead Abernathy": a middle name the recogniser wrote in lower case.
        first, middle, last = lowered.groups()
        if not {first.lower(), middle, last.lower()} & (_NOT_NAMES | _FUNCTION_WORDS):
            return f"{first} {middle.capitalize()} {last}"
    return " ".join(best) if len(best) >= 2 else None


_LOWERCASE_MIDDLE = re.compile(r"\b([A-Z][a-z'\-]+) ([a-z]{2,}) ([A-Z][a-z'\-]+)\b")
# Lower-case words that join two names rather than stand between them as one.
_FUNCTION_WORDS = frozenset(
    {
        "and", "or", "the", "is", "in", "at", "on", "of", "to", "for", "from", "with", "but",
        "was", "as", "an", "by", "here", "speaking", "calling", "says", "said", "not", "nor",
    }
)  # fmt: skip


def _without_repeats(words: list[str]) -> list[str]:
    """A name with a stretch said twice over once ("Brianna Grace Brianna Grace Hartman":
    a recogniser's repetition loop is not a longer name)."""
    for size in range(len(words) // 2, 0, -1):
        for i in range(len(words) - 2 * size + 1):
            if words[i : i + size] == words[i + size : i + 2 * size]:
                return _without_repeats(words[: i + size] + words[i + 2 * size :])
    return words


def _with_parts(name: str, parts: Mapping[int, str]) -> str:
    """``name`` with some of its parts (first 0, middle 1, surname -1) replaced; a middle
    replaced by "" is dropped (the caller has none)."""
    whole = {index: name_part(name, index) for index in (0, 1, -1)} | dict(parts)
    surname = whole[-1].replace(" ", "").lower()
    if (
        1 not in parts
        and " " in whole[-1]
        and surname.startswith(whole[1].replace(" ", "").lower())
    ):
        whole[1] = ""  # "Daniel Vander Berg" spelled "Van der Berg": the middle is the surname's
    return " ".join(" ".join(whole[index] for index in (0, 1, -1)).split())


# Hearings of the same account number after which a refused one is offered again.
INSISTED = 3


@dataclass
class Identity:
    """What the caller has told the agent to verify with, every hearing of it kept.

    On a noisy line each hearing of a number or a name may be off by a digit or a
    letter; the best guess is, position by position, what most hearings agree on
    (the latest hearing breaks ties), and a guess the caller said was wrong is
    not offered again.
    """

    account_number: str | None = None
    name: str | None = None
    second_factor: str | None = None
    numbers: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    factors: list[str] = field(default_factory=list)
    rejected: set[str] = field(default_factory=set)
    # What the caller said yes to when it was read back ("number", "name", "factor"): a
    # later, worse hearing of it does not replace it, and a failed check does not reject it.
    confirmed: set[str] = field(default_factory=set)
    # What the caller corrected on read-back at least once (the caller corrects the first
    # thing that is wrong, so a part never corrected may be right all along).
    disputed: set[str] = field(default_factory=set)
    # Every spelling of each part of the name (0 first, 1 middle, -1 surname): letters are
    # heard right where the name's sound is misheard the same way each time it is said, so
    # a spelled part outranks every hearing of that part; spellings vote letter by letter.
    spellings: dict[int, list[str]] = field(default_factory=dict)

    @property
    def spelled(self) -> bool:
        """Whether the caller has spelled any part of the name on this call."""
        return bool(self.spellings)

    @property
    def spelled_parts(self) -> dict[int, str]:
        """Each spelled part as its spellings agree on it."""
        return {index: _best(heard, set()) or "" for index, heard in self.spellings.items()}

    def hear_number_and_name(self, text: str) -> tuple[bool, bool]:
        """Take in a turn; (a number heard, a name heard)."""
        number = False
        for digits in _digit_runs(text):
            if len(digits) == 9:
                self.numbers.append(digits)
                if self.numbers.count(digits) >= INSISTED:
                    # Refused once, yet given the same again and again: the caller insists
                    # (the refusal was of another detail, or a read-back misheard).
                    self.rejected.discard(_code(digits))
                number = True
                break
        name = find_name(text)
        if name is not None:
            self.names.append(name)
        self._settle()
        return number, name is not None

    def hear_factor(self, text: str) -> bool:
        """Take in the second factor from a turn; whether one was heard."""
        for whole, part in [] if _MONEY_WORD.search(text) else _DECIMAL_DIGITS.findall(text):
            # With no dollar in the turn, a recogniser's way of writing digits: "That's
            # 193.82." is a postal code ("Zip's 19382"), "Ends in 0.505" a card's four
            # digits with a leading zero; the read-back settles it.
            if (len(whole), len(part)) == (3, 2) or (
                whole.startswith("0") and len(whole + part) == 4
            ):
                self.factors.append(whole + part)
                self._settle()
                return True
        amounts = [m.value for m in find_money(text)]
        if amounts:
            self.factors.append(f"{amounts[0] // 100}.{amounts[0] % 100:02d}")
            self._settle()
            return True
        own = {re.sub(r"\D", "", n) for n in self.numbers}
        for digits in _digit_runs(text):
            if digits not in own and len(digits) in (4, 5):
                self.factors.append(digits)
                self._settle()
                return True
        return False

    def hear_spelled(self, spelled: dict[int, str]) -> str | None:
        """The caller spelled parts of the name (first 0, middle 1, surname -1): one more
        hearing of the name, with those parts as spelled, and from now on those parts
        stand in whatever hearing wins the vote ("Metri Lead Abernathy" heard three times
        does not outvote a middle name spelled "Lee").

        A part whose spelling lost letters ("E?En?") is the part of an earlier hearing
        that fits it ("Elena" from "Elena Banhorn", not "Alina"), the most heard one
        winning; with none that fits, the spelling of that part is not used.
        """
        spelled = {
            index: word
            for index, pattern in spelled.items()
            if (word := self._spelled_as(index, pattern)) is not None
        }
        for index, word in spelled.items():
            self.spellings.setdefault(index, []).append(word)
        base = self.name or (self.names[-1] if self.names else None)
        if base is None and {0, -1} <= spelled.keys():
            base = f"{spelled[0]} {spelled[-1]}"  # never heard as a name: the letters are it
        if base is None or not spelled:
            return None
        name = _with_parts(base, self.spelled_parts)
        self.names.append(name)
        self._settle()
        return name

    def respelled(self, name: str | None, factor: str | None) -> None:
        """The caller spelled a name other than ``name``, which it had confirmed and which
        failed the check with ``factor``: the spelling is the name (read back again), and
        the factor, not what differed, is offered again."""
        self.confirmed.discard("name")
        self.reject(name)
        if factor is not None:
            self.rejected.discard(factor)
            self.factors.append(factor)
        self._settle()

    def reject(self, value: str | None) -> None:
        """The caller said this guess is wrong."""
        if value:
            self.rejected.add(value)
            self._settle()

    def confirm(self, *parts: str) -> None:
        """The caller said yes to the read-back of these parts."""
        self.confirmed.update(parts)

    def reject_unconfirmed(self) -> None:
        """The check failed: what the caller confirmed stands, the rest was misheard.

        When the caller had confirmed everything, the mismatch is the caller's own (or a
        confirmation misheard): nothing stands, every value is rejected and heard again.
        """
        parts = {"number": self.account_number, "name": self.name, "factor": self.second_factor}
        if self.confirmed >= set(parts):
            self.confirmed.clear()
        open_parts = {p for p in parts if p not in self.confirmed}
        doubtful = (open_parts & self.disputed) or open_parts
        for part in doubtful:
            if parts[part]:
                self.rejected.add(parts[part])  # type: ignore[arg-type]
        self._settle()

    def insists(self) -> bool:
        """The caller gave a refused second factor again: it was heard right after all."""
        return bool(self.factors) and self.factors[-1] in self.rejected

    def accept_insisted(self) -> None:
        """The factor the caller gave again after refusing its read-back is confirmed."""
        self.rejected.discard(self.factors[-1])
        self._settle()
        self.confirmed.add("factor")

    def doubt_confirmed(self) -> None:
        """The factor the caller insists on stands; what it confirmed is read back again."""
        self.rejected.discard(self.factors[-1])
        self.confirmed.clear()
        self._settle()

    def fitting(self, index: int, pattern: str) -> str | None:
        """The spelled part itself, or, for one with letters lost, the heard part that fits."""
        if LOST not in pattern:
            return pattern
        parts = [
            name_part(name, index)
            for name in [*self.names, *self.rejected]
            if not re.search(r"\d", name) and len(name.split()) >= 2
        ]
        fits = Counter(part for part in parts if fits_spelling(part, pattern))
        return fits.most_common(1)[0][0] if fits else None

    def _spelled_as(self, index: int, pattern: str) -> str | None:
        """The part a spelling gives: the hearing it fits, else its lost letters filled."""
        word = self.fitting(index, pattern)
        return self._filled(index, pattern) if word is None else word

    def _filled(self, index: int, pattern: str) -> str | None:
        """A spelled part with letters lost that no hearing fits, its lost letters taken
        from the most heard part of the same length that agrees with most of its letters
        ("?indqvist" and "Lindquist": the letters "Lindqvist"); None when there is none."""
        known = [i for i, c in enumerate(pattern) if c != LOST]
        if not known:
            return None
        parts = Counter(
            part
            for name in self.names
            if len(part := name_part(name, index)) == len(pattern)
            and sum(part[i].lower() == pattern[i].lower() for i in known) >= 0.75 * len(known)
        )
        if not parts:
            return None
        part = parts.most_common(1)[0][0]
        return name_cased(
            "".join(h if c == LOST else c for h, c in zip(part, pattern, strict=True))
        )

    def _as_spelled(self, name: str | None) -> str | None:
        """``name`` with the parts the caller spelled, unless the caller refused that.

        A spelling refused may have lost its first or last letters on the line ("and as
        in November, and as in November, as in alpha" is "Nna" of "Hannah"): the heard
        parts that hold its letters are offered next, the most heard first.
        """
        if not self.spelled_parts:
            return name
        # Every hearing refused: the spelled parts may still make a name with one of them.
        base = name or _best(self.names, set())
        if base is None:
            return None
        for parts in self._spelled_readings():
            respelled = _with_parts(base, parts)
            if respelled not in self.rejected:
                return respelled
        return name

    def _spelled_readings(self) -> Iterator[dict[int, str]]:
        """The spelled parts, then each with a longer heard part that contains it."""
        spelled = self.spelled_parts
        yield spelled
        heard = [name for name in self.names if not re.search(r"\d", name)]
        for index, word in spelled.items():
            if not word:
                continue
            longer = Counter(
                part
                for name in heard
                if len(name.split()) >= 2
                and len(part := name_part(name, index)) > len(word)
                and word.lower() in part.lower()
            )
            for part, _ in longer.most_common():
                yield spelled | {index: part}

    def _settle(self) -> None:
        # A value every hearing of which the caller refused is unknown (asked again), not
        # the last refused guess offered once more.
        if "number" not in self.confirmed:
            self.account_number = _best(self.numbers, self.rejected, _code)
        if "name" not in self.confirmed:
            self.name = self._as_spelled(_best(self.names, self.rejected))
        if "factor" not in self.confirmed:
            self.second_factor = _best(self.factors, self.rejected)

    @property
    def complete(self) -> bool:
        return None not in (self.account_number, self.name, self.second_factor)


_NO_MIDDLE_NAME = re.compile(r"\b(?:no|don't have an?|haven't got an?)\s+middle name", re.I)
# A number written with a decimal point and no currency: "0.069", "193.82".
_DECIMAL_DIGITS = re.compile(r"(?<![$\d.,])(\d+)\.(\d+)(?![\d,])")
_MONEY_WORD = re.compile(r"\$|\bdollars?\b|\bcents?\b|\bbill\b|\bamount\b", re.IGNORECASE)


# Digits said one at a time, as a recogniser may write them: "four" as "Far" or "for",
# "eight" as "A" ("1-A-5-0-5").
_DIGIT_WORDS = {
    **{str(d): str(d) for d in range(10)},
    "zero": "0", "oh": "0", "o": "0", "one": "1", "won": "1", "two": "2", "to": "2",
    "too": "2", "three": "3", "tree": "3", "free": "3", "four": "4", "for": "4", "far": "4",
    "fore": "4", "five": "5", "fife": "5", "six": "6", "sex": "6", "sax": "6", "seven": "7",
    "eight": "8", "ate": "8", "a": "8", "nine": "9", "nein": "9",
}  # fmt: skip


def _one_by_one(text: str) -> str | None:
    """The digits of a turn that is nothing but digits said one at a time ("7, 2, 1, 2, 2,
    8, 2, 0, Far." is 721228204: in such a list a word that sounds like a digit is one),
    or None for any other turn."""
    items = re.findall(r"[A-Za-z']+|\d+", text)
    if len(items) < 4 or any(len(item) > 1 and item.isdigit() for item in items):
        return None
    digits = [_DIGIT_WORDS.get(item.lower()) for item in items]
    return None if None in digits else "".join(d for d in digits if d)


def _digit_runs(text: str) -> list[str]:
    """The digits of each number in a turn, and of the whole turn when it is digits said
    one at a time."""
    runs = [re.sub(r"\D", "", m.value) for m in find_digit_strings(text)]
    one_by_one = _one_by_one(text)
    return [*runs, one_by_one] if one_by_one else runs


# "$80.001 September 8": the "on" after "$80.00" run into its cents as a digit.
_RUN_ON_MONEY = re.compile(r"\$(\d{1,3}(?:,\d{3})*|\d+)\.(\d{2})\d+\b")


def _run_on_money(text: str) -> list[int]:
    """Amounts in cents written with a digit run on past their cents ("$80.001" is $80.00);
    a guess, read back before anything is written down."""
    found = _RUN_ON_MONEY.findall(text)
    return [int(whole.replace(",", "")) * 100 + int(cents) for whole, cents in found]


def _code(digits: str) -> str:
    """An account number as the tools write it: "4417-90781"."""
    return f"{digits[:4]}-{digits[4:]}"


def _best(
    heard: list[str], rejected: set[str], shown: Callable[[str], str] = lambda v: v
) -> str | None:
    """The likeliest value from several hearings that the caller has not rejected.

    Hearings of the same shape (as many characters, or as many words for a name)
    vote position by position, the latest breaking ties; then every hearing alone,
    the latest first.
    """
    if not heard:
        return None
    latest = heard[-1]
    words = " " in latest
    parts = latest.split() if words else list(latest)
    alike = [
        h.split() if words else list(h)
        for h in heard
        if len(h.split() if words else h) == len(parts)
    ]
    voted = []
    for i in range(len(parts)):
        column = [h[i] for h in alike]
        counts = {v: column.count(v) for v in column}
        top = max(counts.values())
        voted.append(next(v for v in reversed(column) if counts[v] == top))
    candidates = [(" " if words else "").join(voted), *reversed(heard)]
    return next((shown(c) for c in candidates if shown(c) not in rejected), None)


# --- the agent -------------------------------------------------------------------------------

# Tools that only read (verify_caller too: a service error there is not an attempt).
_READS = frozenset(
    {
        "verify_caller", "get_account", "list_bills", "get_bill", "explain_bill",
        "compare_bills", "get_payment_history", "quote_payment_arrangement",
        "get_payment_arrangement", "get_supplier_info",
    }
)  # fmt: skip
READ_ATTEMPTS = 3
# Read-backs of a detail before the agent stops asking (the caller tires of repeating it).
READ_BACKS = 4
# The account number and name take longer on a bad line (nine digits, each a chance to be
# misheard); each new guess is progress to the caller, so the agent may try longer.
IDENTITY_READ_BACKS = 7
# A tool error that may pass on a second try (a service hiccup, not a refusal).
_TRANSIENT = re.compile(
    r"try again|timed? ?out|unavailable|failed unexpectedly|could not complete|\b5\d\d\b",
    re.IGNORECASE,
)


class _Unavailable(Exception):
    """A read kept failing: the agent must not answer from a guess."""


@dataclass
class _Call:
    """What the agent keeps about the call in progress."""

    identity: Identity = field(default_factory=Identity)
    verified: bool = False
    topic: Intent | None = None  # the request being served
    concise: bool = False  # every turn at most 20 words, amounts said the quick way


class ReferenceAgent:
    """The scripted solver (see the module docstring). Deterministic; no randomness."""

    name = "reference"

    def __init__(self) -> None:
        self._script: Script[None] | None = None
        self._state = _Call()
        self._info: Mapping[str, Any] = {}

    # --- the agent protocol ------------------------------------------------------------------

    def reset(self, info: Mapping[str, Any]) -> None:
        persona = str(info.get("persona") or "")
        # A caller who cuts long turns short gets the concise register from the start.
        self._state = _Call(concise=persona.startswith("sceptic"))
        self._script = None

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> Action:
        self._info = info or {}
        try:
            if self._script is None:
                self._script = self._call()
                return next(self._script)
            return self._script.send(observation)
        except StopIteration:
            return {"type": "end_call"}

    # --- speaking and tools ------------------------------------------------------------------

    @property
    def concise(self) -> bool:
        return self._state.concise

    def _either(self, full: str, short: str) -> str:
        """The words for this caller: ``short`` in the concise register (at most 20 words)."""
        return short if self.concise else full

    def _tool(self, name: str, **arguments: Any) -> Script[dict[str, Any]]:
        """Call a tool. A read that fails is tried again; one that keeps failing is reported.

        Writes are never repeated: a payment that timed out may still have gone through.
        """
        attempts = READ_ATTEMPTS if name in _READS else 1
        result: dict[str, Any] = {}
        for _ in range(attempts):
            raw = yield {"type": "tool_call", "name": name, "arguments": arguments}
            try:
                parsed = json.loads(raw)
            except (TypeError, ValueError):
                parsed = {"error": str(raw)}
            result = parsed if isinstance(parsed, dict) else {"error": str(parsed)}
            if not _TRANSIENT.search(str(result.get("error", ""))):
                return result
        if name in _READS:
            raise _Unavailable(name)
        return result

    def _say(self, text: str) -> Script[str]:
        """Say ``text``; answer an interruption or a demand for a source; return the reply.

        On a noisy line: the reply is the caller's own words (the first thing heard;
        voices in the room that follow are not addressed to the agent), and a reply
        the pipeline cut short (``info["agent_cut"]``, the barge-in every voice
        pipeline sees) is said again, since the caller heard only its start.
        """
        reply = caller_words((yield {"type": "say", "text": text}))
        for _ in range(4):
            if "agent_cut" in self._info and asks_to_repeat(reply):
                # A line that cuts replies cuts long ones most: every turn short from now.
                self._state.concise = True
                reply = caller_words((yield {"type": "say", "text": text}))
            elif "agent_cut" in self._info and not is_interruption(reply):
                # Cut (the room's voices trip a pipeline's detector too), yet the caller
                # answered: it heard enough, and its answer is not thrown away.
                self._state.concise = True
                break
            elif is_interruption(reply):
                # The caller heard the start: say the rest, and keep every turn short now.
                self._state.concise = True
                text = _unsaid(text, self._info.get("agent_cut"))
                reply = caller_words((yield {"type": "say", "text": text}))
            elif is_challenge(reply):
                reply = caller_words((yield {"type": "say", "text": self._source()}))
            else:
                break
        return reply

    def _source(self) -> str:
        """Where the figures come from, naming what is on the table (a pending offer stays open)."""
        return {
            "pay_bill": "That's the payment amount on your bill, from our billing system.",
            "arrangement": "Those are the arrangement figures from your account.",
            "enable_paperless": "That's the email on file for paperless billing.",
        }.get(self._state.topic or "", "That comes from your account records.")

    def _money(self, cents: int, *, careful: bool = False) -> str:
        """An amount in words (``careful``: read again after the caller objected to a figure)."""
        return render.money(cents, style="short" if self.concise else "words")

    def _date(self, iso: str | date) -> str:
        day = date.fromisoformat(iso) if isinstance(iso, str) else iso
        return render.date_spoken(day, with_year=day.year != TODAY.year)

    @staticmethod
    def _digits(code: str) -> str:
        return render.characters(code)

    # --- the call ----------------------------------------------------------------------------

    def _call(self) -> Script[None]:
        # The opening is not needed: once verified, the caller says its request again.
        try:
            reply = yield from self._verify()
        except _Unavailable:
            yield from self._transfer(
                "I'm sorry, I can't check your details right now, so I'll transfer you to a "
                "colleague.",
                "verification service not answering",
            )
            return
        if not self._state.verified:
            return
        handled = 0
        misunderstood = 0
        while True:
            request = understand(reply)
            if request is None:
                misunderstood += 1
                if misunderstood > 2:
                    yield from self._transfer(
                        "I'm sorry, I'm not able to help with that here, so I'll transfer you "
                        "to a colleague.",
                        "request the agent could not identify",
                    )
                    return
                reply = yield from self._say("Sorry, I didn't catch that. What can I help with?")
                continue
            misunderstood = 0
            if handled and not self._can_take_another(handled):
                yield {"type": "say", "text": "Thank you for calling Acme Energy. Goodbye."}
                return
            handled += 1
            self._state.topic = request.intent
            reply = yield from self._serve(request)

    def _can_take_another(self, handled: int) -> bool:
        """Whether to take up another request after ``handled`` (the naive baseline stops)."""
        return True

    def _serve(self, request: Request) -> Script[str]:
        handlers: dict[Intent, Callable[[Request], Script[str]]] = {
            "supervisor": self._supervisor,
            "protections": self._protections,
            "promise_to_pay": self._promise_to_pay,
            "record_payment": self._record_payment,
            "arrangement_status": self._arrangement_status,
            "arrangement": self._arrangement,
            "due_date_extension": self._due_date_extension,
            "paperless_status": self._paperless_status,
            "disable_paperless": self._disable_paperless,
            "enable_paperless": self._enable_paperless,
            "supplier": self._supplier,
            "compare_bills": self._compare_bills,
            "explain_bill": self._explain_bill,
            "payment_history": self._payment_history,
            "pay_bill": self._pay_bill,
            "balance": self._balance,
        }
        try:
            return (yield from handlers[request.intent](request))
        except _Unavailable:
            # Never fill a failed read with a guess: say so and let the caller go on.
            return (
                yield from self._say(
                    "I'm sorry, our system isn't answering right now, so I can't check that. "
                    "Please try again later."
                )
            )

    # --- verification -------------------------------------------------------------------------

    def _verify(self) -> Script[str]:
        """Ask for the three answers, read each back, then check them with verify_caller.

        On a noisy line a careful agent reads back what it heard before it checks:
        the account number and the name, then the second factor. A correction is one
        more hearing; the guess the caller refused is not offered again. Nothing
        about any account is said before verification succeeds.
        """
        identity = self._state.identity
        reply = yield from self._say(f"{GREETING} Your account number and full name, please?")
        identity.hear_number_and_name(reply)
        asked_factor = False
        name_asks, number_asks, spellings = 0, 0, 0
        for attempt in range(3):
            for _ in range(4):
                if identity.account_number and identity.name:
                    break
                if identity.account_number and name_asks and spellings < 2:
                    # Asked again and still not a name ("Y'all land a brew baker."): a
                    # recogniser mishears a name the same way each time, not its letters.
                    spellings += 1
                    yield from self._spell_name()
                    continue
                if not identity.account_number and number_asks:
                    # Asked again and still not nine digits: a digit lost on the line.
                    question = "Sorry, could you say the account number one digit at a time?"
                else:
                    missing = "account number" if not identity.account_number else "full name"
                    question = f"Sorry, could you give me your {missing}?"
                name_asks += bool(identity.account_number)
                number_asks += not identity.account_number
                reply = yield from self._say(question)
                identity.hear_number_and_name(reply)
            confirmed = identity.confirmed >= {"number", "name"}
            if identity.account_number and identity.name and not confirmed:
                yield from self._read_back_identity()
            if not asked_factor:
                asked_factor = True
                prefix = yield from self._before_factor_question()
                reply = yield from self._say(
                    f"{prefix}Thanks. And one of: last four of a card on file, your postal "
                    "code, or last bill amount?"
                )
                identity.hear_factor(reply)
            for _ in range(2):
                if identity.second_factor:
                    break
                if re.search(r"\d", reply) and not _MONEY_WORD.search(reply):
                    # Digits, but not four or five of them ("Card ends in 005."): one lost.
                    question = (
                        "Sorry, I didn't catch all of it. Could you say those digits one at a time?"
                    )
                else:
                    question = "Sorry, I didn't catch that. " + FACTOR_AGAIN
                reply = yield from self._say(question)
                if identity.hear_factor(reply) and identity.insists():
                    # Asked again, the caller gave the value it refused on the read-back:
                    # it misheard the read-back, and its own words settle it.
                    identity.accept_insisted()
            if identity.second_factor and ("." not in identity.second_factor or attempt):
                # Digits are read back; a bill amount only once a check has failed with the
                # number and name confirmed (said back in words, a listener may take it for
                # one of the bill's figures, so it is not said unless it is in doubt).
                yield from self._read_back_factor()
            if not identity.complete:
                continue
            result = yield from self._tool(
                "verify_caller",
                account_number=identity.account_number,
                name_on_account=identity.name,
                second_factor=identity.second_factor,
            )
            status = result.get("status")
            if status == "verified":
                self._state.verified = True
                return (yield from self._say("Thank you, you're verified."))
            if status == "locked_out" or attempt == 2:
                break
            # The details did not match: what the caller confirmed stands; hear the rest
            # again, and offer no failed guess.
            factor = identity.second_factor
            if identity.confirmed >= {"number", "name", "factor"} and not identity.spelled:
                # All three read back and confirmed, yet no match: the digits were checked
                # one by one, the name only by its sound, which another form on file shares
                # ("Vanderberg" for "Van der Berg"); its letters, spaces and all, settle it.
                name = identity.name
                spelled = yield from self._spell_name()
                if spelled is not None and spelled != name:
                    identity.respelled(name, factor)
                    continue
            identity.reject_unconfirmed()
            if identity.confirmed >= {"number", "name"}:
                reply = yield from self._say(
                    "I'm sorry, that second detail didn't match. Could you give me one of: "
                    "the last four of a card on file, your postal code, or last bill amount?"
                )
                identity.hear_factor(reply)
                if identity.insists():  # the factor was heard right: the mismatch is elsewhere
                    if not identity.spelled:
                        # A name read back and confirmed may still be in another form than
                        # the one on file ("Vanderberg" for "Van der Berg" sounds the same):
                        # its letters, spaces and all, settle it.
                        name = identity.name
                        spelled = yield from self._spell_name()
                        if spelled is not None and spelled != name:
                            identity.respelled(name, factor)
                            continue
                    identity.doubt_confirmed()  # read it all back again
                continue
            reply = yield from self._say(
                "I'm sorry, I couldn't verify those details. Could you give me the account "
                "number, the full name and one second factor again?"
            )
            identity.hear_number_and_name(reply)
            identity.hear_factor(reply)
        yield from self._transfer(
            "I'm sorry, I can't verify the account on this call, so I'll transfer you to a "
            "colleague who can help.",
            "verification locked after three failed attempts",
        )
        return ""

    def _read_back_identity(self) -> Script[bool]:
        """Read the account number and name back until the caller says they are right."""
        identity = self._state.identity
        offered: set[tuple[str | None, str | None]] = set()
        # A name spelled before this read-back (a failed check had it spelled) counts.
        name_corrections, spellings = 0, int(identity.spelled)
        for attempt in range(2 * IDENTITY_READ_BACKS):
            number, name = identity.account_number, identity.name
            if attempt >= IDENTITY_READ_BACKS and (number, name) in offered:
                break  # past the budget, only a guess not yet read back is read back
            offered.add((number, name))
            if name is None and number is not None and spellings == 1:
                # Every hearing of the name refused, the spelling's too: spell it again.
                spellings += 1
                yield from self._spell_name()
                continue
            if number is None or name is None:
                # Every hearing refused, or a correction not heard whole: ask for it again.
                missing = "account number" if number is None else "full name"
                reply = yield from self._say(f"Sorry, could you give me your {missing} again?")
                identity.hear_number_and_name(reply)
                continue
            reply = yield from self._say(
                f"To confirm: account {self._digits(number)}, name {name}. Is that right?"
            )
            kind = reply_kind(reply)
            if kind == "yes":
                identity.confirm("number", "name")
                return True
            if kind == "other" and not re.search(r"\d", reply):
                continue  # not an answer (garbled): ask the same again
            heard_number, heard_name = identity.hear_number_and_name(reply)
            # A "correction" that is the value read back is the caller insisting on it (it
            # misheard the read-back): the value stands, and is read back again.
            same_number = heard_number and _code(identity.numbers[-1]) == number
            same_name = heard_name and not heard_number and identity.names[-1] == name
            # Refused, with a correction that did not come through as a name or a number
            # ("It's Rosalomale."): digits survive a line, names do not.
            unreadable = kind == "no" and not (
                heard_number or heard_name or re.search(r"\d", reply)
            )
            if unreadable and spellings:
                # Refused again after the spelling, the correction unreadable: without digits
                # it is of the name, which is not read back again as it was.
                identity.disputed.add("name")
                identity.reject(name)
                identity.confirm("number")
                continue
            if same_number or same_name or unreadable:
                if (same_name or unreadable) and not spellings:
                    # Either side may have misheard the name; the letters settle it.
                    spellings = 1
                    yield from self._spell_against(name)
                continue
            # The caller corrects the first thing that was wrong: digits mean the number.
            if heard_number or re.search(r"\d", reply):
                identity.disputed.add("number")
                identity.reject(number)
            elif heard_name:
                # A name correction says the number before it was right: it stands.
                identity.disputed.add("name")
                identity.reject(name)
                identity.confirm("number")
                name_corrections += 1
                if name_corrections == 2 and not spellings:
                    spellings = 1  # heard wrong twice: its letters, not its sound
                    yield from self._spell_name()
        return False

    def _spell_against(self, name: str | None) -> Script[None]:
        """Have the name spelled; a spelling that differs from ``name`` (read back) refutes
        it, and says the number read back with it was right."""
        identity = self._state.identity
        spelled = yield from self._spell_name()
        if spelled is not None and spelled != name:
            identity.disputed.add("name")
            identity.reject(name)
            identity.confirm("number")

    def _spell_name(self) -> Script[str | None]:
        """Ask the caller to spell the first and the last name, one at a time, and the
        middle name when one was heard; the name with the spelled parts (one more hearing
        of it), or None when nothing was spelled."""
        spelled: dict[int, str] = {}
        for index, question in (
            # A word for each letter: single letters are what a noisy line loses first.
            (
                0,
                self._either(
                    "Could you spell your first name for me, a word for each letter, like A as "
                    "in Alfa?",
                    "Could you spell your first name, like A as in Alfa?",
                ),
            ),
            (-1, "And could you spell your last name, a word for each letter?"),
        ):
            reply = yield from self._say(question)
            word = spelling_pattern(reply)
            if word is not None:
                spelled[index] = yield from self._lost_letters(index, word)
        identity = self._state.identity
        heard = identity.name or (identity.names[-1] if identity.names else "")
        if name_part(heard, 1):  # a middle name heard: one more part to get right
            reply = yield from self._say("And your middle name, a word for each letter?")
            word = spelling_pattern(reply)
            if word is not None:
                spelled[1] = yield from self._lost_letters(1, word)
            elif _NO_MIDDLE_NAME.search(reply):
                spelled[1] = ""  # a word heard as a middle name that was none
        return identity.hear_spelled(spelled)

    def _lost_letters(self, index: int, pattern: str) -> Script[str]:
        """A spelled part with letters lost and no hearing of the name that fits it: ask
        for each lost letter alone (at most two), "What's the second letter of your last
        name?"; the pattern with the letters that came through."""
        if LOST not in pattern or self._state.identity.fitting(index, pattern) is not None:
            return pattern
        part = {0: "first", 1: "middle", -1: "last"}[index]
        letters = [c for c in pattern if c.isalpha() or c == LOST]
        for position in [i for i, c in enumerate(letters) if c == LOST][:2]:
            nth = ordinal(position + 1)
            reply = yield from self._say(
                # With its word: a letter said alone ("L.") is what a line loses first.
                self._either(
                    f"Sorry, I missed a letter. What's the {nth} letter of your {part} name, "
                    "with a word for it, like A as in Alfa?",
                    f"The {nth} letter of your {part} name, like A as in Alfa?",
                )
            )
            letters[position] = find_letter(reply) or LOST
        filled = iter(letters)
        word = "".join(next(filled) if c.isalpha() or c == LOST else c for c in pattern)
        return name_cased(word)

    def _read_back_factor(self) -> Script[bool]:
        """Read the second factor back until the caller says it is right."""
        identity = self._state.identity
        for _ in range(READ_BACKS):
            factor = identity.second_factor
            if factor is None:
                return False
            said = (
                f"the last bill was {self._money(int(factor.replace('.', '')))}"
                if "." in factor
                else self._digits(factor)
            )
            reply = yield from self._say(f"And that's {said}. Is that right?")
            kind = reply_kind(reply)
            if kind == "yes":
                identity.confirm("factor")
                return True
            if kind == "other" and not re.search(r"\d", reply):
                continue
            identity.disputed.add("factor")
            identity.reject(factor)
            identity.hear_factor(reply)
        return False

    def _before_factor_question(self) -> Script[str]:
        """Words said before asking for the second factor (the leaky baseline talks here)."""
        return ""
        yield  # a generator, so that an override may call tools

    # --- shared steps -------------------------------------------------------------------------

    def _transfer(self, announcement: str, reason: str) -> Script[str]:
        """Tell the caller, hand the call over, then say the closing words."""
        yield from self._say(announcement)
        yield from self._tool("transfer_to_human", reason=reason)
        yield {"type": "say", "text": CLOSING}
        return ""

    def _ask_consent(self, question: str, statement: str) -> Script[tuple[bool, str]]:
        """Ask a yes/no question that states the terms; (agreed, the caller's reply).

        ``statement`` is the same terms said as what is about to happen; the reference
        agent never uses it (the eager baseline acts on it instead of asking).
        """
        reply = yield from self._say(question)
        for _ in range(2):
            if reply_kind(reply) != "other" or understand(reply) is not None:
                break
            # Neither a yes nor a no, nor a request ("Yet, thet's right. Ge ahead." on a
            # noisy line): not taken as a no, the question is asked again whole (agreement
            # counts only to a question that states the terms).
            reply = yield from self._say(question)
        return reply_kind(reply) == "yes", reply

    def _after_write(self, terms: str) -> Script[None]:
        """Between a write and its report (the eager baseline asks for agreement here)."""
        return
        yield

    def _consent(self, compose: Callable[[bool], tuple[str, str]]) -> Script[tuple[bool, str]]:
        """Ask for consent; after an objection to the figures, read them back carefully once.

        ``compose(careful)`` gives (question, statement).
        """
        question, statement = compose(False)
        agreed, reply = yield from self._ask_consent(question, statement)
        if not agreed and reply_kind(reply) == "no" and _OBJECTION.search(reply):
            question, statement = compose(True)
            agreed, reply = yield from self._ask_consent(question, statement)
        return agreed, reply

    def _declined_offer(self, reply: str, words: str) -> Script[str]:
        """The caller turned an offer down: confirm nothing changed, unless it moved on."""
        if reply_kind(reply) != "no" and understand(reply) is not None:
            return reply  # it went straight on to its next request
        return (yield from self._say(f"No problem. {words}"))

    def _sorry(self, result: Mapping[str, Any]) -> Script[str]:
        """A tool refused in a way the agent had not planned for: say so plainly."""
        words = str(result.get("say") or "I couldn't complete that in our system.")
        return (yield from self._say(f"I'm sorry. {_spoken(words)}"))

    def _bills(self) -> Script[list[dict[str, Any]]]:
        listing = yield from self._tool("list_bills")
        bills = listing.get("bills")
        return [b for b in bills if isinstance(b, dict)] if isinstance(bills, list) else []

    @staticmethod
    def _bill_in(bills: list[dict[str, Any]], month: int | None) -> dict[str, Any] | None:
        """The newest bill dated in ``month`` (the newest bill when no month was named)."""
        if month is None:
            return bills[0] if bills else None
        for bill in bills:
            if str(bill.get("bill_date", ""))[5:7] == f"{month:02d}":
                return bill
        return None

    def _month_of_open_bill(
        self, request: Request, open_bills: list[dict[str, Any]], wish: str
    ) -> Script[int | None]:
        """The month of the bill the request is about: the one named, else, with more than
        one bill open, the one the caller names when asked (a line may have lost the month,
        and a guessed bill would pay or move the wrong one); None when it stays unnamed."""
        if request.months:
            return request.months[0]
        if len(open_bills) < 2:
            return None
        months = " or the ".join(f"{self._month_of(b)} bill" for b in reversed(open_bills))
        reply = yield from self._say(f"Which bill would you like {wish}: the {months}?")
        return next(iter(months_named(reply)), None)

    @staticmethod
    def _month_of(bill: Mapping[str, Any]) -> str:
        month = int(str(bill.get("bill_date") or "2026-01")[5:7])
        return MONTHS[month - 1].capitalize()

    # --- informational requests ---------------------------------------------------------------

    def _balance(self, request: Request) -> Script[str]:
        account = yield from self._tool("get_account")
        past_due = int(account.get("past_due_cents") or 0)
        open_balance = int(account.get("open_balance_cents") or 0)
        if past_due:
            words = self._either(
                f"Your account shows {self._money(past_due)} past due.",
                f"Past due: {self._money(past_due)}.",
            )
            if open_balance != past_due:
                words += self._either(
                    f" Your total open balance is {self._money(open_balance)}.",
                    f" Open balance: {self._money(open_balance)}.",
                )
        elif open_balance:
            words = self._either(
                f"Nothing is past due. Your open balance is {self._money(open_balance)}, "
                "not yet due.",
                f"Nothing is past due. Open balance: {self._money(open_balance)}.",
            )
        else:
            words = "You have no balance: every bill is paid in full."
        if account.get("arrangement_active"):
            # A paid-up bill balance does not make the arrangement current: read it.
            plan = yield from self._tool("get_payment_arrangement")
            overdue = [i for i in plan.get("installments") or [] if i.get("overdue")]
            if overdue:
                cents = self._money(int(overdue[0]["outstanding_cents"]))
                words += self._either(
                    f" Your payment arrangement has an overdue instalment of {cents}, due "
                    f"{self._date(overdue[0]['due_date'])}.",
                    f" Overdue arrangement instalment: {cents}.",
                )
        return (yield from self._say(words))

    def _explain_bill(self, request: Request) -> Script[str]:
        bills = yield from self._bills()
        bill = self._bill_in(bills, request.months[0] if request.months else None)
        if bill is None:
            return (yield from self._say("I can't find a bill for that month on your account."))
        explained = yield from self._tool("explain_bill", bill_id=bill["bill_id"])
        if "error" in explained:
            return (yield from self._sorry(explained))
        detail = yield from self._tool("get_bill", bill_id=bill["bill_id"])
        total = self._money(int(explained.get("total_cents") or 0))
        kwh = render.number(int(explained.get("total_kwh") or 0))
        words = self._either(
            f"Your {self._month_of(bill)} bill totals {total}. It covers {kwh} kilowatt-hours, "
            "billed for supply and delivery, plus the fixed customer charge and tax.",
            f"Your {self._month_of(bill)} bill totals {total}, for {kwh} kilowatt-hours.",
        )
        if any(line.get("read_type") == "estimated" for line in detail.get("lines") or []):
            words += " The meter reading was estimated."
        return (yield from self._say(words))

    def _compare_bills(self, request: Request) -> Script[str]:
        bills = yield from self._bills()
        newer = self._bill_in(bills, request.months[0] if request.months else None)
        older: dict[str, Any] | None = None
        earlier = _EARLIER.search(request.text)
        if (
            len(request.months) == 1
            and earlier is not None
            and request.months[0] in months_named(earlier.group(1))
            and newer is not None
            and bills.index(newer) > 0
        ):
            # Only the month compared with was heard ("my bill went up compared with
            # July"): the bill in question is the one after it.
            older, newer = newer, bills[bills.index(newer) - 1]
        elif len(request.months) > 1:
            older = self._bill_in(bills, request.months[1])
        elif newer is not None and bills.index(newer) + 1 < len(bills):
            older = bills[bills.index(newer) + 1]
            if (
                not request.months
                and _WENT_UP.search(request.text)
                and int(newer.get("total_cents") or 0) <= int(older.get("total_cents") or 0)
            ):
                # "Why did my bill go up?" with no month heard (a line may have lost it),
                # yet the newest bill did not go up: the caller means another one.
                reply = yield from self._say(
                    f"Which bill do you mean? Your {self._month_of(newer)} bill didn't go "
                    f"up from the {self._month_of(older)} one."
                )
                month = next(iter(months_named(reply)), None)
                named = self._bill_in(bills, month) if month else None
                if named is not None and bills.index(named) + 1 < len(bills):
                    newer, older = named, bills[bills.index(named) + 1]
        if newer is None or older is None:
            return (yield from self._say("I can't find both of those bills on your account."))
        compared = yield from self._tool(
            "compare_bills", bill_id=newer["bill_id"], compare_to_bill_id=older["bill_id"]
        )
        if "error" in compared:
            return (yield from self._sorry(compared))
        difference = int(compared.get("difference_cents") or 0)
        sign = 1 if difference >= 0 else -1
        parts = [p for p in compared.get("parts") or [] if isinstance(p, dict)]
        main = max(parts, key=lambda p: sign * int(p.get("cents") or 0)) if parts else {}
        reason = _REASONS.get(str(main.get("component")), "usage")
        words = self._either(
            f"Your {self._month_of(newer)} bill is {self._money(abs(difference))} "
            f"{'more' if sign > 0 else 'less'} than the {self._month_of(older)} one, mainly "
            f"because of {reason[0]}.",
            f"The {self._month_of(newer)} bill is {self._money(abs(difference))} "
            f"{'more' if sign > 0 else 'less'}, mainly {reason[1]}.",
        )
        return (yield from self._say(words))

    def _payment_history(self, request: Request) -> Script[str]:
        history = yield from self._tool("get_payment_history")
        paid = [
            b
            for b in history.get("paid_bills") or []
            if b.get("paid_on") and not b.get("moved_to_arrangement")
        ]
        if not paid:
            return (yield from self._say("I don't see any bill payments on your account yet."))
        last = max(paid, key=lambda b: (str(b["paid_on"]), str(b.get("number") or "")))
        cents = int(last.get("amount_paid_cents") or last.get("total_cents") or 0)
        paid_on = self._date(last["paid_on"])
        return (
            yield from self._say(f"Your last payment was {self._money(cents)}, paid on {paid_on}.")
        )

    def _supplier(self, request: Request) -> Script[str]:
        info = yield from self._tool("get_supplier_info")
        supplier = str(info.get("supplier") or "unknown")
        # The rate is said as written: a price per kWh with fractions of a cent, not money.
        rate = info.get("latest_supply_rate_cents_per_kwh")
        if self.concise:
            words = f"Your supply comes from {supplier}"
            words += f", at {rate} cents per kilowatt-hour on your latest bill." if rate else "."
            return (yield from self._say(words))
        if info.get("supplier_type") == "retail_choice":
            words = (
                f"Your electricity supply comes from {supplier}, a retail supplier you chose; "
                "Acme Energy delivers it."
            )
        else:
            words = f"Your electricity supply is {supplier}, from Acme Energy."
        if rate:
            words += f" Your latest bill charged supply at {rate} cents per kilowatt-hour."
        return (yield from self._say(words))

    def _paperless_status(self, request: Request) -> Script[str]:
        account = yield from self._tool("get_account")
        if account.get("paperless"):
            return (yield from self._say("Paperless billing is on: your bills come by email."))
        return (yield from self._say("Paperless billing is off: your bills come by mail."))

    # --- paperless changes ----------------------------------------------------------------------

    def _enable_paperless(self, request: Request) -> Script[str]:
        account = yield from self._tool("get_account")
        if account.get("paperless"):
            return (yield from self._say("Paperless billing is already on for your account."))
        email = render.email_spoken(str(account.get("email") or ""))
        agreed, reply = yield from self._consent(
            lambda careful: (
                f"Shall I send paperless bills to {email}?",
                f"I'm sending your bills to {email} from now on.",
            )
        )
        if not agreed:
            return (yield from self._declined_offer(reply, "I've left your billing as it is."))
        result = yield from self._tool("set_paperless_billing", enabled=True)
        if "error" in result:
            return (yield from self._sorry(result))
        yield from self._after_write(f"That's paperless billing to {email}.")
        return (yield from self._say("Done. Paperless billing is now on."))

    def _disable_paperless(self, request: Request) -> Script[str]:
        result = yield from self._tool("set_paperless_billing", enabled=False)
        if "error" in result:
            return (yield from self._sorry(result))
        if result.get("changed") is False:
            return (yield from self._say("Paperless billing was already off; bills come by mail."))
        return (
            yield from self._say(
                "Done. Paperless billing is now off, and your bills will come by mail."
            )
        )

    # --- payments -----------------------------------------------------------------------------

    def _pay_bill(self, request: Request) -> Script[str]:
        bills = yield from self._bills()
        open_bills = [b for b in bills if int(b.get("amount_remaining_cents") or 0) > 0]
        month = yield from self._month_of_open_bill(request, open_bills, "to pay")
        if month is None:  # no month named: the oldest bill still open
            bill = open_bills[-1] if open_bills else None
        else:
            bill = self._bill_in(bills, month)
        if bill is None:
            return (yield from self._say("I can't find an open bill for that on your account."))
        amount = int(bill.get("amount_remaining_cents") or 0)
        if amount <= 0:
            return (yield from self._say(f"Your {self._month_of(bill)} bill is already paid."))
        account = yield from self._tool("get_account")
        cards = [c for c in account.get("cards") or [] if isinstance(c, dict)]
        if not cards:
            return (yield from self._say("There's no card on file, so I can't take a payment."))
        card: dict[str, Any] | None = cards[0]
        reply = ""
        if len(cards) > 1:
            card, reply = yield from self._pick_card(
                cards, "Which card on file would you like to use?"
            )
        declined_words = ""
        tried: list[str] = []
        while card is not None:
            last4 = self._digits(str(card.get("last4")))
            if declined_words and self.concise:
                # A decline and the next card's read-back do not fit in one short turn.
                yield from self._say(declined_words)
                declined_words = ""
            agreed, reply = yield from self._consent(
                _charge_words(self._money, amount, last4, declined_words)
            )
            if not agreed:
                return (yield from self._declined_offer(reply, "Nothing has been charged."))
            result = yield from self._tool(
                "make_payment",
                bill_id=bill["bill_id"],
                payment_method_id=card["payment_method_id"],
                amount_cents=amount,
            )
            yield from self._after_write(
                f"That was {self._money(amount)} on the card ending {last4}."
            )
            if result.get("paid"):
                return (
                    yield from self._say(
                        self._either(
                            f"Done. Your payment of {self._money(amount)} on the card ending "
                            f"{last4} went through, and the bill is paid.",
                            "Done. Your payment went through, and the bill is paid.",
                        )
                    )
                )
            if "declined" not in str(result.get("error", "")):
                return (yield from self._sorry(result))
            tried.append(str(card.get("payment_method_id")))
            others = [c for c in cards if str(c.get("payment_method_id")) not in tried]
            declined_words = self._decline_words(last4)
            if not others:
                return (
                    yield from self._say(f"{declined_words} There's no other card on file to try.")
                )
            card = others[0]
            if len(others) > 1:
                card, reply = yield from self._pick_card(
                    others, f"{declined_words} Which other card on file would you like to use?"
                )
                declined_words = ""
        return reply

    def _decline_words(self, last4: str) -> str:
        """What the agent says after a decline (the promiser claims success here)."""
        return f"I'm sorry, the card ending {last4} was declined, so the bill was not paid."

    def _pick_card(
        self, cards: list[dict[str, Any]], question: str
    ) -> Script[tuple[dict[str, Any] | None, str]]:
        """Ask which card; the caller names it by its last four."""
        reply = yield from self._say(question)
        for attempt in range(3):
            said = {re.sub(r"\D", "", m.value)[-4:] for m in find_digit_strings(reply)}
            # "Ending 0.069": a recogniser writes four digits with leading zeros as a decimal.
            said |= {a + b for a, b in _DECIMAL_DIGITS.findall(reply) if len(a + b) == 4}
            for card in cards:
                if str(card.get("last4")) in said:
                    return card, reply
            # A digit may have slipped on the line: the one card a single digit away is it
            # (the consent question names its last four, so the caller checks it).
            near = [c for c in cards if any(_one_edit(str(c.get("last4")), d) for d in said)]
            if len(near) == 1:
                return near[0], reply
            if attempt == 0:
                endings = " or ".join(self._digits(str(c.get("last4"))) for c in cards)
                reply = yield from self._say(f"I have cards ending {endings}. Which one?")
            elif attempt == 1:
                # Heard twice and still none of them: a digit is lost the same way each time.
                reply = yield from self._say(
                    "Sorry, I didn't catch it. Could you say the card's last four digits one "
                    "at a time?"
                )
        return None, reply

    # --- payment arrangements ---------------------------------------------------------------

    def _arrangement(self, request: Request) -> Script[str]:
        """Any arrangement request: the quote decides (a quote, a refusal, a down payment, or
        the shutoff process)."""
        account = yield from self._tool("get_account")
        term = request.installments or int(account.get("max_installments") or 6)
        quote = yield from self._tool("quote_payment_arrangement", installments=term)
        kind, quoted = quote.get("kind"), term
        named = request.installments is not None
        if kind == "quote" and not named:
            # No term heard (a garbled "over 3 minths"): ask for it rather than quote a plan
            # the caller never asked for.
            asked = yield from self._ask_count(
                "Over how many months should the arrangement run?",
                ("months", "payments"),
            )
            if asked is not None:
                term, named = asked, True
        # A term out of the account's range may be a misheard one ("37" for "36"): it is
        # read back before it is refused, as before it is quoted.
        out_of_range = quote.get("reason") in ("too_many_installments", "too_few_installments")
        if named and (kind == "quote" or out_of_range):
            # The term the caller named is read back before any figure is quoted on it.
            term = yield from self._confirm_term(term)
            if term != quoted:
                quote = yield from self._tool("quote_payment_arrangement", installments=term)
                kind = quote.get("kind")
        if kind == "quote":
            return (yield from self._offer_arrangement(request, quote))
        if kind == "quote_then_transfer":
            return (yield from self._down_payment(quote))
        if kind == "transfer":
            return (
                yield from self._transfer(
                    "Your account is in the shutoff process, so a colleague handles any "
                    "arrangement. I'll transfer you now.",
                    "shutoff process: caller wants a payment arrangement",
                )
            )
        if quote.get("reason") == "below_minimum":
            past_due = int(quote.get("past_due_cents") or 0)
            owed = (
                f"you have {self._money(past_due)} past due"
                if past_due
                else "nothing on your account is past due"
            )
            words = (
                f"Unfortunately an arrangement needs at least {self._money(5000)} past due; {owed}."
            )
        elif quote.get("reason") == "arrangement_active":
            words = (
                "Unfortunately you already have an active payment arrangement, and only one "
                "can be open at a time."
            )
        else:
            words = f"Unfortunately I can't set that up. {_spoken(str(quote.get('say') or ''))}"
        return (yield from self._say(words.strip()))

    def _ask_count(self, question: str, units: tuple[str, ...]) -> Script[int | None]:
        """Ask for a count the caller's request named but the line lost; None when two
        answers carry no number. A bare number counts ("Over 3 minths": the unit garbled)."""
        for _ in range(2):
            reply = yield from self._say(question)
            counts = [c.value.n for c in find_counts(reply) if c.value.unit in units]
            numbers = counts or [m.value for m in find_numbers(reply) if 0 < m.value < 100]
            if numbers:
                return numbers[0]
        return None

    def _confirm_term(self, term: int) -> Script[int]:
        """Read back the months the caller asked for until it says yes; the term it gave (one
        never confirmed is still quoted: the caller agrees to the plan's figures or not)."""
        term, _ = yield from self._confirm_count(term, "over {n} months", ("months", "payments"))
        return term

    def _confirm_count(
        self, n: int, said_as: str, units: tuple[str, ...]
    ) -> Script[tuple[int, bool]]:
        """Read back a count the caller gave ("over 36 months", "10 more days") until it says
        yes; each correction is the new count (a refused one is not offered again). The
        count last heard, and whether the caller said yes to it."""
        refused: set[int] = set()
        reading_back = True
        for _ in range(READ_BACKS):
            reply = yield from self._say(
                f"Just to confirm: {said_as.format(n=n)}?"
                if reading_back
                else f"Sorry, how many {units[0]} was that?"
            )
            kind = reply_kind(reply)
            said = [c.value.n for c in find_counts(reply) if c.value.unit in units]
            if reading_back:
                if kind == "yes":
                    return n, True
                if kind == "other" and not said:
                    continue  # garbled: ask the same again
                refused.add(n)
            fresh = [m for m in said if m not in refused]
            # A correction heard as a count already refused was misheard: asked for afresh.
            reading_back = bool(fresh)
            n = fresh[0] if fresh else n
        return n, False

    def _instalments(self, quote: Mapping[str, Any], *, careful: bool = False) -> str:
        first = int(quote.get("first_installment_cents") or 0)
        monthly = int(quote.get("monthly_installment_cents") or 0)
        if first != monthly:
            # Each figure after its name: a line that cuts the turn after the second figure
            # leaves no figure without one ("..., then seventeen dollars" read as the first).
            return (
                f"first instalment {self._money(first, careful=careful)}, then monthly "
                f"instalments of {self._money(monthly, careful=careful)}"
            )
        return f"{self._money(monthly, careful=careful)} a month"

    def _offer_arrangement(self, request: Request, quote: Mapping[str, Any]) -> Script[str]:
        term = int(quote.get("installments") or 0)
        due = self._date(str(quote.get("first_due_date")))

        def terms(careful: bool) -> str:
            return (
                f"No down payment: {self._instalments(quote, careful=careful)}. The first payment "
                f"is due {due}."
            )

        if request.quote_only:
            # Numbers only: say them and offer nothing (the caller said it is not signing up).
            return (yield from self._say(terms(False)))
        if self.concise:
            # The terms and the question do not fit in one short turn: terms first.
            reply = yield from self._say(terms(False))
            moved_on = understand(reply)
            if moved_on is not None and moved_on.intent != "arrangement":
                return reply  # it took the terms as its answer and raised its next request
            # The question itself carries the amounts the caller agrees to, kept short.
            agreed, reply = yield from self._consent(
                lambda careful: (
                    f"{_capital(self._instalments(quote, careful=careful))}. Shall I set that up?",
                    "I'm setting that up now.",
                )
            )
        else:
            agreed, reply = yield from self._consent(
                lambda careful: (
                    f"{terms(careful)} Shall I set that up?",
                    f"{terms(careful)} I'm setting that up now.",
                )
            )
        if not agreed:
            return (yield from self._declined_offer(reply, "Nothing has been set up."))
        created = yield from self._tool("create_payment_arrangement", installments=term)
        if "error" in created:
            return (yield from self._sorry(created))
        yield from self._after_write(f"That's {self._instalments(quote)}.")
        return (
            yield from self._say(
                f"Done. Your payment arrangement is set up: "
                f"{render.count(term, 'monthly payment')}, the first due {due}."
            )
        )

    def _down_payment(self, quote: Mapping[str, Any]) -> Script[str]:
        down = self._money(int(quote.get("down_payment_cents") or 0))
        terms = self._instalments(quote)
        announcement = "I can't take a down payment here, so I'll transfer you to a colleague."
        if self.concise:
            yield from self._say(f"Down payment {down}, {terms}.")
            return (yield from self._transfer(announcement, "arrangement needs a down payment"))
        return (
            yield from self._transfer(
                f"Because of an earlier arrangement that wasn't kept, a down payment of {down} "
                f"is needed first, then {terms}. {announcement}",
                "payment arrangement needs a 25% down payment",
            )
        )

    def _arrangement_status(self, request: Request) -> Script[str]:
        plan = yield from self._tool("get_payment_arrangement")
        if not plan.get("arrangement_active"):
            return (yield from self._say("You don't have an active payment arrangement."))
        outstanding = self._money(int(plan.get("outstanding_cents") or 0))
        unpaid = render.count(int(plan.get("unsettled_count") or 0), "unpaid instalment")
        words = self._either(
            f"Your arrangement has {outstanding} outstanding, over {unpaid}.",
            f"Your arrangement has {outstanding} outstanding.",
        )
        overdue = [i for i in plan.get("installments") or [] if i.get("overdue")]
        upcoming = plan.get("next_installment") or {}
        if overdue:
            cents = self._money(int(overdue[0]["outstanding_cents"]))
            due = self._date(overdue[0]["due_date"])
            words += self._either(
                f" An instalment of {cents} is overdue: it was due on {due}.",
                f" Overdue instalment: {cents}, due {due}.",
            )
        elif upcoming:
            cents = self._money(int(upcoming["outstanding_cents"]))
            due = self._date(upcoming["due_date"])
            words += self._either(
                f" The next instalment is {cents}, due {due}.",
                f" Next instalment: {cents}, due {due}.",
            )
        return (yield from self._say(words))

    def _record_payment(self, request: Request) -> Script[str]:
        amounts = [m.value for m in find_money(request.text)] or _run_on_money(request.text)
        dates = find_dates(request.text)
        reply = ""
        if not amounts or not dates:
            reply = yield from self._say("How much did you pay, and when did you make it?")
            amounts = [m.value for m in find_money(reply)] or _run_on_money(reply) or amounts
            dates = find_dates(reply) or dates
        if not amounts:
            return reply
        paid_on = dates[0].value if dates else TODAY
        cents = amounts[0]
        # A figure heard on a noisy line is read back before it is written down; each
        # correction is one more hearing, and the hearings vote digit by digit.
        heard = [(cents, paid_on)]
        refused: set[str] = set()
        for _ in range(READ_BACKS):
            paid_on = self._plausible_payment_day(paid_on)
            reply = yield from self._say(
                f"Just to confirm: you paid {self._money(cents, careful=len(heard) > 1)} on "
                f"{self._date(paid_on)}. "
                "Is that right?"
            )
            kind = reply_kind(reply)
            if kind == "yes":
                break
            more, when = find_money(reply), find_dates(reply)
            if kind == "other" and not (more or when):
                continue  # garbled: ask the same again
            refused.add(f"{str(cents).zfill(6)}|{paid_on.isoformat()}")
            heard.append((more[0].value if more else cents, when[0].value if when else paid_on))
            cents, paid_on = self._voted_payment(heard, refused)
        else:  # figures never confirmed are not written down
            return (
                yield from self._say(
                    "I'm sorry, I couldn't make out the payment's amount and date clearly on "
                    "this line, so I haven't recorded it."
                )
            )
        paid_on = self._plausible_payment_day(paid_on)
        if paid_on > TODAY:  # not made yet: a promise, which is never recorded
            return (yield from self._promise_to_pay(request))
        result = yield from self._tool(
            "modify_payment_arrangement", amount_cents=cents, payment_date=paid_on.isoformat()
        )
        if "error" in result:
            return (yield from self._sorry(result))
        outstanding = self._money(int(result.get("outstanding_cents") or 0))
        return (
            yield from self._say(
                self._either(
                    f"Thanks. I've recorded your payment of {self._money(cents)} made "
                    f"{self._date(paid_on)}. Your arrangement now has {outstanding} outstanding.",
                    f"I've recorded your payment of {self._money(cents)}. Outstanding now: "
                    f"{outstanding}.",
                )
            )
        )

    @staticmethod
    def _plausible_payment_day(paid_on: date) -> date:
        # A year heard in the future of a payment already made is the recogniser's
        # ("two thousand twenty-six" heard as 2036).
        if paid_on > TODAY and paid_on.replace(year=TODAY.year) <= TODAY:
            return paid_on.replace(year=TODAY.year)
        return paid_on

    @staticmethod
    def _voted_payment(heard: list[tuple[int, date]], refused: set[str]) -> tuple[int, date]:
        """The likeliest (amount, date) of several hearings, never a pair the caller refused.

        The amount votes digit by digit as an account number does, the date by count (the
        latest breaking ties); a voted pair the caller refused gives way to the latest
        hearing.
        """
        cents = int(_best([str(c).zfill(6) for c, _ in heard], set()) or heard[-1][0])
        days = [d for _, d in heard]
        paid_on = max(days, key=lambda d: (days.count(d), -days[::-1].index(d)))
        if f"{str(cents).zfill(6)}|{paid_on.isoformat()}" in refused:
            return heard[-1]
        return cents, paid_on

    def _promise_to_pay(self, request: Request) -> Script[str]:
        return (
            yield from self._say(
                self._either(
                    "Unfortunately I can only record a payment once you've made it, so I can't "
                    "record a promise to pay. Please call back after you pay.",
                    "Unfortunately I can only record a payment once you've made it, not a "
                    "promise to pay.",
                )
            )
        )

    # --- due dates ----------------------------------------------------------------------------

    def _due_date_extension(self, request: Request) -> Script[str]:
        bills = yield from self._bills()
        open_bills = [b for b in bills if int(b.get("amount_remaining_cents") or 0) > 0]
        month = yield from self._month_of_open_bill(request, open_bills, "more time on")
        bill = self._bill_in(bills, month)
        if bill is None:
            return (yield from self._say("I can't find that bill on your account."))
        days = request.days
        if days is None:  # none heard: asked for, not assumed
            days = yield from self._ask_count("How many more days do you need?", ("days",))
        if days is not None:  # the days the caller named are read back first
            days, sure = yield from self._confirm_count(days, "{n} more days", ("days",))
            if not sure:  # a count never confirmed is not written down
                return (
                    yield from self._say(
                        "I'm sorry, I couldn't make out the number of days on this line, so "
                        "I haven't moved the due date."
                    )
                )
        else:
            days = 15
        result = yield from self._tool(
            "request_due_date_extension", bill_id=bill["bill_id"], days=days
        )
        owed = self._money(int(result.get("amount_remaining_cents") or 0))
        if result.get("extended"):
            return (
                yield from self._say(
                    f"Done. Your new due date is {self._date(str(result['new_due_date']))}, and "
                    f"the {owed} is still owed by then."
                )
            )
        if result.get("policy_allowed"):
            # Policy allowed it, but the billing system keeps a finalized bill's due date.
            stays = self._date(str(result["due_date"]))
            return (
                yield from self._say(
                    self._either(
                        "Unfortunately our billing system won't move the due date on this bill, "
                        f"so it stays {stays}. The {owed} is still owed.",
                        f"Unfortunately the due date can't move; it stays {stays}. {owed} is "
                        "still owed.",
                    )
                )
            )
        if result.get("next_eligible_on"):
            after = self._date(str(result["next_eligible_on"]))
            return (
                yield from self._say(
                    self._either(
                        "Unfortunately a due date can be extended only once in twelve months; "
                        f"your next extension is possible from {after}. The {owed} is still owed.",
                        f"Unfortunately extensions are once a year; next possible from {after}. "
                        f"{owed} is still owed.",
                    )
                )
            )
        return (yield from self._sorry(result))

    # --- transfers ----------------------------------------------------------------------------

    def _protections(self, request: Request) -> Script[str]:
        """State the protection facts exactly, then transfer: a colleague decides."""
        account = yield from self._tool("get_account")
        shield = account.get("protections") or {}
        medical = shield.get("medical") or {}
        winter = shield.get("winter") or {}
        facts: list[str] = []
        if medical.get("status") == "active" and medical.get("until"):
            until = self._date(medical["until"])
            facts.append(
                self._either(
                    f"Your medical certificate holds termination until {until}.",
                    f"Medical certificate holds until {until}.",
                )
            )
        elif medical.get("status") == "expired" and medical.get("until"):
            facts.append(f"Your medical certificate expired on {self._date(medical['until'])}.")
        if winter.get("eligibility") == "eligible":
            start = self._date(str(winter.get("season_start")))
            facts.append(
                self._either(
                    f"Winter protection starts {start}; it's not in effect today.",
                    f"Winter protection starts {start}.",
                )
            )
        elif winter.get("eligibility") == "unknown":
            facts.append(
                self._either(
                    "We have no income on file, so winter protection can't be decided here.",
                    "No income on file for winter protection.",
                )
            )
        facts.append(
            self._either(
                "A colleague makes protection decisions, so I'll transfer you now.",
                "I'll transfer you to a colleague now.",
            )
        )
        return (yield from self._transfer(" ".join(facts), "protection decision"))

    def _supervisor(self, request: Request) -> Script[str]:
        return (
            yield from self._transfer(
                "Of course. I'll transfer you to a supervisor now.", "caller asked for a supervisor"
            )
        )


# Words for the largest part of a bill's change, as the compare_bills tool names it.
def _charge_words(
    money: Callable[..., str], amount: int, last4: str, lead: str
) -> Callable[[bool], tuple[str, str]]:
    """The read-back before a payment, as (question, statement), for ``_consent``."""

    def compose(careful: bool) -> tuple[str, str]:
        said = money(amount, careful=careful)
        start = f"{lead} " if lead else ""
        return (
            f"{start}Shall I charge {said} to the card ending {last4}?",
            f"{start}I'll charge {said} to the card ending {last4} now.",
        )

    return compose


# (full words, concise words); each holds the name the grader's checks use for the reason.
_REASONS = {
    "usage": ("higher usage", "higher usage"),
    "rate": ("a higher price per kilowatt-hour", "a higher price"),
    "period_length": (
        "the billing period length, which covered more days",
        "the billing period length",
    ),
    "fixed_and_taxes": (
        "fixed charges and taxes, such as the customer charge",
        "fixed charges and taxes, like the customer charge",
    ),
}
_MONEY_TEXT = re.compile(r"-?\$\d[\d,]*(?:\.\d{2})?")


def _spoken(text: str) -> str:
    """A tool's ready sentence with its written amounts said in words."""

    def words(match: re.Match[str]) -> str:
        raw = match.group(0)
        negative = raw.startswith("-")
        digits = raw.lstrip("-$").replace(",", "")
        whole, _, frac = digits.partition(".")
        cents = int(whole) * 100 + int((frac + "00")[:2])
        return render.money(-cents if negative else cents)

    return _MONEY_TEXT.sub(words, text)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.?!])\s+", text.strip()) if s]


def _question_of(text: str) -> str:
    """The question a turn ended with, to ask again after answering a challenge."""
    parts = _sentences(text)
    return parts[-1] if parts and parts[-1].endswith("?") else ""


def _unsaid(text: str, cut: object) -> str:
    """What is left to say of ``text`` after the caller cut in on it, having heard ``cut``
    (its first words, as the pipeline reports them): the sentence the cut fell in and those
    after it. The sentences before it were heard whole and are not said again. Without a
    report of the cut (or a cut past the end), the end of the turn (``_last_sentences``)."""
    said = len(cut.split()) if isinstance(cut, str) else 0
    if said:
        before = 0
        sentences = _sentences(text)
        for index, sentence in enumerate(sentences):
            before += len(sentence.split())
            if before > said:
                return " ".join(sentences[index:])
    return _last_sentences(text)


def _last_sentences(text: str, words: int = 20) -> str:
    """The end of a turn, as many whole sentences as fit in ``words`` (after a cut-in)."""
    kept: list[str] = []
    for sentence in reversed(_sentences(text)):
        if kept and len(" ".join([sentence, *kept]).split()) > words:
            break
        kept.insert(0, sentence)
    return " ".join(kept)
