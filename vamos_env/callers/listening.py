"""How the scripted caller understands an agent's turn: cues in plain words, values as spoken.

``listen(text)`` turns what the caller heard into a ``Heard``: which questions
the agent asked (account number, name, a second factor, a private fact, consent),
what it announced (checking, verified, a refusal, an action done or failed, a
transfer), and every value it said (money and numbers in words, dates as spoken,
digit strings, emails), found with ``vamos_env.speech.parse``.

The cues are deliberately general phrases a competent agent uses, not the
reference agent's exact sentences: the scripted caller must work with any agent
that speaks plainly. The cue lists are English; the parser is English too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal, TypeVar

from vamos_env.speech import (
    Count,
    Mention,
    find_counts,
    find_dates,
    find_digit_strings,
    find_email,
    find_money,
)

T = TypeVar("T")
FactorAsk = Literal["account_number", "name", "card_last4", "postal_code", "last_bill_amount"]


def _rx(*alternatives: str) -> re.Pattern[str]:
    # (?!\w) rather than \b at the end, so a cue may end in "?" ("correct?").
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


CHECKING = _rx(
    r"one moment",
    r"(just )?a (moment|second|sec|minute)",
    r"let me (check|look|see|pull|find|get|bring|take a look|verify|confirm|process|try|go ahead)",
    r"i'?ll (check|look|pull|find|get|process|try)",
    r"bear with me",
    r"give me a (moment|second|minute)",
    r"(please )?hold on",
    r"please hold",
    r"(i'?m )?(checking|looking (that|it|this) up|pulling (that|it|this|up))",
)
NOT_UNDERSTOOD = _rx(
    r"(didn'?t|did not|couldn'?t|could not) (quite )?(catch|hear|understand|get) (that|you|what)",
    r"(could|can|would) you (please )?(repeat|say (that|it) again|rephrase)",
    r"say (that|it) again",
    r"i'?m not sure (what|i) (you mean|understand|follow)",
    r"(sorry|pardon)\s*\?",
    r"what do you mean",
    r"didn'?t understand",
    r"you('re| are) breaking up",
)
ACCOUNT_NUMBER = _rx(r"account number", r"account (no|#)")
NAME = _rx(
    r"(full |your |the )?name(s)?( on| of| for)? (the |your )?account",
    r"full name",
    r"(your|the) name",
)
CARD_LAST4 = _rx(r"last (four|4)", r"card (on file|ending|number)", r"four digits")
POSTAL = _rx(r"postal code", r"zip( code)?", r"post code", r"postcode")
BILL_AMOUNT = _rx(
    r"(last|latest|most recent|recent|previous) bill(ing)? (amount|total)",
    r"amount of (your|the) (last|latest|most recent|recent) bill",
    r"bill amount",
    r"how much (was|were) (your|the) (last|latest|most recent) bill",
)
SECOND_FACTOR = _rx(
    r"(one|any) of (the following|these|those)",
    r"second (factor|piece)",
    r"(security|verification) (question|detail|information|item)",
    r"one more (detail|piece|thing) to verify",
    r"(to|can i|i need to|let me|i'?ll need to|help me) verify",
)
READBACK = _rx(
    r"is that (right|correct)",
    r"did i (get|hear) (that|it|you) (right|correctly)",
    r"(just )?to confirm",
    r"(can|could) you confirm",
    r"confirm(ing)? (that|the)",
    r"correct\s*\?",
    r"i have (your|the)",
    r"i heard",
)
VERIFIED = _rx(
    r"(you'?re|you are|you have been|you've been|i'?ve|i have) (now )?(been )?"
    r"(successfully )?verified",
    r"verification (is )?(complete|successful|done|passed)",
    r"(thank you|thanks) for verifying",
    r"(thanks|thank you),? (that|everything) (matches|checks out)",
    r"i'?ve (found|located|pulled up) your account",
    r"you'?re all verified",
)
VERIFY_FAILED = _rx(
    r"(couldn'?t|could not|can'?t|cannot|wasn'?t able to|was not able to|unable to) verify",
    r"(don'?t|doesn'?t|do not|does not|didn'?t|did not) match",
    r"verification (failed|was unsuccessful|didn'?t work)",
    r"not able to verify",
)
TRANSFER = _rx(
    r"transfer(ring)? you",
    r"(connect|put|pass)(ing)? you (through|to|over|with)",
    r"hand(ing)? (you|this call|the call) (over|to)",
    r"(a|my|one of my) (colleague|specialist|supervisor|human|person|representative|agent|team)"
    r" (will|can|who)",
)
QUESTION_OFFER = _rx(
    r"would you like",
    r"do you want",
    r"shall i",
    r"should i",
    r"can i (go ahead|proceed|set|make|turn|switch|process|help you with)",
    r"would it help",
    r"are you interested",
    r"would that (be okay|be ok|work|be alright|help)",
    r"is that (okay|ok|alright|all right|fine)",
    r"do you (agree|accept|consent)",
    r"(are you )?happy (for me )?to (proceed|go ahead)",
    r"(okay|ok) to (proceed|go ahead)",
    r"may i (go ahead|proceed)",
    r"do i have your (permission|consent|agreement|okay)",
    r"(does|would) that (sound|work)",
    r"sound good",
    r"go ahead\s*\?",
    r"want me to",
)
ANYTHING_ELSE = _rx(
    r"anything else",
    r"something else",
    r"what else",
    r"any other (question|thing|request)s?",
    r"how (else )?(can|may|could) i help",
    r"what can i (do|help)",
    r"how can i assist",
    r"what (brings you|are you calling|can i do for you)",
)
REFUSAL = _rx(
    r"(i'?m|i am|we'?re|we are) (not able|unable) to",
    r"(i|we) (can'?t|cannot|can not|won'?t be able to)",
    r"(isn'?t|is not|aren'?t|are not|wouldn'?t be|would not be) "
    r"(possible|eligible|allowed|available)",
    r"not eligible",
    r"(doesn'?t|does not|don'?t|do not) qualify",
    r"(no|not) longer (possible|available)",
    r"(the system|billing system|it) (refused|rejected|wouldn'?t)",
    r"(didn'?t|did not|couldn'?t|could not) (change|move|go through)",
    r"(only|can only) (record|accept|apply) (a )?payments? (that|you'?ve|already)",
    r"(isn'?t|is not|wasn'?t|was not) (recorded|something i can record)",
    r"(already|currently) (have|has) an? (active )?(payment )?(arrangement|plan)",
    r"not (something|a thing) (i|we) can",
    r"(doesn'?t|does not|won'?t|will not) (allow|let|permit)",
    r"(still|remains) (due|owed|the same)",
    r"unchanged",
    r"(was|were) (unable|not able)",
    r"unfortunately",
)
FAILED = _rx(
    r"declined",
    r"(didn'?t|did not|has not|hasn'?t|wasn'?t|was not) "
    r"(go through|gone through|paid|processed|successful)",
    r"not (been )?paid",
    r"(payment|charge|transaction) (failed|was unsuccessful)",
    r"(couldn'?t|could not|unable to) (process|complete|charge)",
    r"insufficient funds",
)
DONE = _rx(
    r"(is|are|has been|have been|was|were) (now )?(done|set up|all set|complete|completed|"
    r"processed|recorded|applied|posted|paid|created|enabled|disabled|turned (on|off)|"
    r"switched (on|off)|updated|extended|moved|in place|active|on|off)",
    r"(went|gone) through",
    r"(successful|successfully)",
    r"(i'?ve|i have|we'?ve|we have) (now )?(set|made|turned|switched|recorded|applied|paid|created|"
    r"updated|extended|moved|processed|enrolled|signed|put|opened)",
    r"you'?re (all )?(set|enrolled|signed up)",
    r"all (done|set)",
    r"confirmation (number|code)",
    r"(it'?s|that'?s) done",
)
SOURCE = _rx(
    r"(your|the) (latest |last |most recent |september |account'?s? )?(bill|statement|invoice|"
    r"account|records?|file|history|arrangement|schedule)( shows| says| lists)?",
    r"according to",
    r"on (file|record|your account)",
    r"(our|the) (records|system|billing system|loan system)",
    r"(the|our) (policy|rules?|tariff|rate)",
    r"(comes|came) from",
    r"(is|are) based on",
    r"(shows|says|lists) (that|a|an|the)",
)
STATE_CHANGE = _rx(
    r"now", r"new", r"after (that|the|this|your)", r"updated", r"will be", r"remaining"
)
CLOSING = _rx(
    r"(have a|enjoy your) (good|great|nice|lovely) (day|evening|night|one|afternoon)",
    r"goodbye",
    r"bye",
    r"thanks? (you )?for calling",
)

# Topics a quoted amount can be about; the sceptic holds the agent to one value per topic.
TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("down_payment", _rx(r"down ?payment", r"deposit", r"up ?front")),
    ("first_installment", _rx(r"first (instal+ment|payment|month)")),
    ("monthly", _rx(r"monthly", r"(a|per|each) month", r"instal+ments?", r"per payment")),
    ("past_due", _rx(r"past due", r"overdue", r"behind", r"arrears")),
    ("outstanding", _rx(r"outstanding( balance)?", r"left (to pay|on)", r"still owe")),
    ("balance", _rx(r"balance", r"(you )?owe", r"amount due", r"total due")),
)
# What may follow a value that a cut interrupted: "six dollars and" [ten cents].
_CUT_TAIL = re.compile(r"[\s,]*(?:and|point|oh|dollars?|cents?)?[\s,]*", re.IGNORECASE)
# A yes/no question offers something; "Which card would you like to use?" asks for a fact.
_SENTENCES = re.compile(r"(?<=[.?!])\s+")
_WH_START = re.compile(r"\s*(?:\w+,\s*)?(?:what|which|when|how|where|who|why)\b")
_RULE = _rx(
    r"minimum",
    r"maximum",
    r"at least",
    r"at most",
    r"more than",
    r"less than",
    r"up to",
    r"limit",
    r"threshold",
    r"over",
    r"under",
    r"needs?",
    r"requires?",
    r"must",
)
_SENTENCE_END = re.compile(r"[.?!;](?:\s|$)")  # not the point in "$73.29"
_TOPIC_REACH = 60  # characters before a mention (or after it, for "a month") that tag it


@dataclass(frozen=True)
class Heard:
    """One agent turn as the scripted caller understood it."""

    text: str
    is_question: bool
    checking: bool
    not_understood: bool
    asks: tuple[FactorAsk, ...]  # identity items the agent asked for, in a fixed order
    asks_second_factor: bool  # asked for "one of" the factors, none named specifically
    readback: bool
    verified: bool
    verify_failed: bool
    transfer: bool
    offer: bool  # a yes/no question offering or proposing something
    anything_else: bool
    refusal: bool
    failed: bool
    done: bool
    source_named: bool
    state_change: bool
    closing: bool
    money: tuple[Mention[int], ...]
    digits: tuple[Mention[str], ...]
    dates: tuple[Mention[date], ...]
    emails: tuple[Mention[str], ...]
    counts: tuple[Mention[Count], ...]

    @property
    def silent(self) -> bool:
        return not self.text.strip()

    @property
    def quotes_values(self) -> bool:
        return bool(self.money or self.dates)


def listen(text: str) -> Heard:
    lower = text.lower()
    asks: list[FactorAsk] = []
    if ACCOUNT_NUMBER.search(lower):
        asks.append("account_number")
    if NAME.search(lower):
        asks.append("name")
    factor_cues: tuple[tuple[FactorAsk, re.Pattern[str]], ...] = (
        ("card_last4", CARD_LAST4),
        ("postal_code", POSTAL),
        ("last_bill_amount", BILL_AMOUNT),
    )
    factor_hits = [kind for kind, pattern in factor_cues if pattern.search(lower)]
    asks.extend(factor_hits)
    is_question = "?" in text
    return Heard(
        text=text,
        is_question=is_question,
        checking=bool(CHECKING.search(lower)),
        not_understood=bool(NOT_UNDERSTOOD.search(lower)),
        asks=tuple(asks),
        asks_second_factor=bool(SECOND_FACTOR.search(lower)) and not factor_hits,
        readback=bool(READBACK.search(lower)),
        verified=bool(VERIFIED.search(lower)),
        verify_failed=bool(VERIFY_FAILED.search(lower)),
        transfer=bool(TRANSFER.search(lower)),
        offer=any(
            q.endswith("?") and QUESTION_OFFER.search(q) and not _WH_START.match(q)
            for q in _SENTENCES.split(lower.strip())
        ),
        anything_else=bool(ANYTHING_ELSE.search(lower)),
        refusal=bool(REFUSAL.search(lower)),
        failed=bool(FAILED.search(lower)),
        done=bool(DONE.search(lower)),
        source_named=bool(SOURCE.search(lower)),
        state_change=bool(STATE_CHANGE.search(lower)),
        closing=bool(CLOSING.search(lower)),
        money=_whole(find_money(text), text),
        digits=_whole(find_digit_strings(text), text),
        dates=_whole(find_dates(text), text),
        emails=_whole(find_email(text), text),
        counts=_whole(find_counts(text), text),
    )


def _whole(mentions: list[Mention[T]], text: str) -> tuple[Mention[T], ...]:
    """Drop a value the turn was cut off in: "... then six dollars" may have been "six ten".

    A turn that stops without closing punctuation was cut short (a barge-in or the
    caller talking over it); a value running to its very end may be incomplete.
    """
    if text.rstrip().endswith((".", "?", "!")):
        return tuple(mentions)
    return tuple(m for m in mentions if not _CUT_TAIL.fullmatch(text[m.end :]))


def topic_of(text: str, mention: Mention[int], since: int = 0) -> str | None:
    """The topic a money mention is about, from the words just around it (nearest wins).

    ``since`` is where the previous amount ended: words before it belong to that one
    ("first instalment $73.34, then $73.29 a month").
    """
    before = text[max(since, mention.start - _TOPIC_REACH) : mention.start].lower()
    before = _SENTENCE_END.split(before)[-1]  # the mention's own sentence only
    after = text[mention.end : mention.end + _TOPIC_REACH // 2].lower()
    after = _SENTENCE_END.split(after)[0]
    if _RULE.search(before):
        return None  # "the minimum past due is fifty dollars" is policy, not this account
    best: tuple[int, str] | None = None
    for topic, pattern in TOPICS:
        for hit in pattern.finditer(before):
            distance = len(before) - hit.end()
            if best is None or distance < best[0]:
                best = (distance, topic)
        match = pattern.search(after)
        if match is not None and (best is None or match.start() < best[0]):
            best = (match.start(), topic)
    return best[1] if best else None
