"""How the scripted caller understands an agent's turn: what it was asked, what it was told.

``listen(text)`` turns what the caller heard into a ``Heard``. The turn is split
into clauses (``clauses``): sentences, and within a sentence the statement that
leads into a question ("One second, which card ...?"). Each clause is a
**question**, a **request** ("Please confirm the email.", "I'll need your account
number.") or a **statement**; fillers, small talk and wait cues ("One second.",
"Sure thing!", "How are you today?") are marked as saying nothing to take up.

What the agent *asks* is read only from its questions and requests
(``Heard.questions``, each a ``Question`` with its own cues and values), never
from a word anywhere in the turn: "One second." before "Which card would you like
to use?" does not make it a question about a second card. A question that points
back ("Is that right?", "Shall I set that up?") carries the statements just
before it, which hold what it asks about. ``Heard.focus`` is the question the
caller answers: by default the last one that is not small talk; the scripted
caller may move it to an earlier question its brief can answer
(``Heard.focused``). What the agent *announced* (checking, verified, a refusal, an
action done or failed, a transfer) is read from its statements only. Every value
it said (money and numbers in words, dates as spoken, digit strings, emails) is
found with ``vamos_env.speech``, for the whole turn and per question.

The cues are deliberately general phrases a competent agent uses, not the
reference agent's exact sentences: the scripted caller must work with any agent
that speaks plainly. The cue lists are English; the parser is English too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
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
ClauseKind = Literal["question", "request", "statement"]


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
    r"(can|could|would) you (please )?confirm",
    r"please confirm",
    r"confirm(ing)? (that|the)",
    r"(does|do) (that|this|it) (look|sound) (right|correct)",
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
    r"anything more",
    r"reason for (your|the|today'?s) call",
    r"why are you calling",
    r"what('s| is) (your|the) (call|question|issue|request) (about|today)",
    r"(help|assist) (you )?with anything",
    r"is that (everything|all)(?! right)",
    r"are we (all )?(set|done|good)",
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
# The agent takes back what it offered ("No problem. Nothing has been charged.").
WITHDRAWN = _rx(
    r"no problem",
    r"nothing (has been|was|will be|'?s been) (charged|changed|set up|done|paid|sent)",
    r"i'?ve left (it|that|your \w+|everything)",
    r"(won'?t|will not|didn'?t|did not) (charge|go ahead|set (it|that) up|change)",
    r"(cancel|cancell?ed) (that|it|the)",
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
    ("past_due", _rx(r"pas(?:t|sed) due", r"overdue", r"behind", r"arrears")),
    ("outstanding", _rx(r"outstanding( balance)?", r"left (to pay|on)", r"still owe")),
    ("balance", _rx(r"balance", r"(you )?owe", r"amount due", r"total due")),
)
# What may follow a value that a cut interrupted: "six dollars and" [ten cents].
_CUT_TAIL = re.compile(r"[\s,]*(?:and|point|oh|dollars?|cents?)?[\s,]*", re.IGNORECASE)
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


# --- the clause model ------------------------------------------------------------------------

# Words that open a clause without changing what it does ("And could you ...", "So, which ...").
_LEAD = re.compile(
    r"^(?:\s*(?:and|so|also|now|then|but|or|well|okay|ok|alright|great|right|lastly|finally|"
    r"first(?:ly)?|next|just|um+|uh+|oh|sorry|actually)\b[\s,]*)*",
    re.IGNORECASE,
)
_WH = r"(?:what|which|when|where|who|whom|whose|why|how)"
_AUX = (
    r"(?:can|could|would|will|shall|should|may|might|do|does|did|is|are|was|were|have|has|had|"
    r"am|isn'?t|aren'?t|don'?t|doesn'?t|didn'?t|won'?t|wouldn'?t|can'?t|couldn'?t)"
)
_SUBJECT = (
    r"(?:you|i|we|it|that|this|there|these|those|your|the|my|he|she|they|everything|anything|"
    r"any|one)"
)
# A clause that asks by its word order alone, punctuation or not.
_INVERTED = re.compile(rf"^{_AUX}\s+{_SUBJECT}\b", re.IGNORECASE)
_WH_INVERTED = re.compile(
    rf"^{_WH}(?:'s|'re|\s+(?:is|are|was|were)\s+{_SUBJECT}\b|"
    rf"(?:\s+[\w'-]+){{0,3}}?\s+(?:{_AUX}|'s|'re)\s+{_SUBJECT}\b)",
    re.IGNORECASE,
)
_WH_START = re.compile(rf"^{_WH}\b", re.IGNORECASE)
_AUX_START = re.compile(rf"^{_AUX}\b", re.IGNORECASE)
_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(?:tell|give|confirm|provide|read|spell|share|repeat|say|let me know|"
    r"go ahead and (?:tell|give|confirm|read|share))\b",
    re.IGNORECASE,
)
# A request put as a statement: "I'll need your account number", "Your full name, please."
_REQUEST = _rx(
    r"(?:i'?ll|i will|i'?d|i would|i just|i also|i)\s+(?:also\s+)?need\s+"
    r"(?:your|the|you to|one|a|an|some|just|to (?:get|confirm|verify|check|have|ask))",
    r"(?:i'?d|i would) like to (?:confirm|verify|check|get|have|ask)",
    r"if you (?:could|can|would) (?:please )?(?:tell|give|confirm|read|provide|share|spell)",
    r"please (?:tell|give|confirm|provide|read|spell|share|repeat|say|let me know)",
    r"let me know",
)
_NOUN_START = re.compile(r"^(?:your|the)\b", re.IGNORECASE)
_PLEASE_END = re.compile(r"\bplease\W*$", re.IGNORECASE)
# A clause that says nothing the caller must take up: courtesy, acknowledgement, a wait cue.
_FILLER_UNIT = (
    r"(?:okay|ok|alright|all right|great|perfect|got it|of course|certainly|absolutely|"
    r"no problem|no worries|sure(?: thing)?|right|i see|understood|thanks(?: so much)?|"
    r"thank you(?: (?:so|very) much)?|wonderful|excellent|lovely|cool|good|hmm+|um+|uh+|ah|oh|"
    r"well|yes|yeah|happy to help|my pleasure|sounds good|one (?:second|sec|moment|minute)|"
    r"(?:just )?a (?:second|sec|moment|minute)|give me (?:a|one) (?:second|sec|moment|minute)|"
    r"bear with me(?: (?:a|one) (?:second|sec|moment|minute))?|hold on|hang on|please hold|"
    r"(?:thanks|thank you) (?:for|so much for) (?:waiting|holding|your patience|bearing with me)|"
    r"sorry (?:about|for) the wait|i appreciate your patience|"
    r"let me (?:pull|bring) (?:that|this|it|those|your (?:account|details|bill|bills)) up|"
    r"let me (?:check|see|look|take a look|have a look)(?: (?:at )?(?:that|this|it))?"
    r"(?: for you)?(?: (?:real )?quick)?|let me (?:check|look) (?:on|into) (?:that|this|it))"
)
_FILLER = re.compile(rf"^\W*{_FILLER_UNIT}(?:\W+{_FILLER_UNIT})*\W*$", re.IGNORECASE)
# Filler that may sit inside a question ("One second which card ..."): removed before matching.
_FILLER_PHRASES = _rx(
    r"one (?:second|sec|moment|minute)",
    r"just a (?:second|sec|moment|minute)",
    r"give me (?:a|one) (?:second|sec|moment|minute)",
    r"bear with me(?: (?:a|one) (?:second|sec|moment|minute))?",
    r"(?:thanks|thank you) (?:for|so much for) (?:waiting|holding|your patience)",
    r"sorry (?:about|for) the wait",
    r"sure thing",
    r"hold on",
    r"hang on",
    r"let me (?:pull|bring) (?:that|this|it|your account) up",
)
SMALL_TALK = re.compile(
    r"^\W*(?:how are you(?: doing)?(?: today| otherwise| this (?:morning|afternoon|evening))?|"
    r"how(?:'s| is| has) (?:your day|it going|everything|your (?:morning|afternoon|evening|week))"
    r"(?: been| going)?(?: so far)?(?: today)?|"
    r"(?:are you )?having an? (?:good|nice|great|lovely) (?:day|one|morning|afternoon|week)|"
    r"did you have an? (?:good|nice|great) (?:day|weekend|week)|"
    r"(?:isn'?t it|what) a (?:lovely|nice|beautiful|gorgeous) day(?: today)?|"
    r"(?:how|what) about (?:this|that|the) weather|hope you'?re (?:well|doing well))\W*$",
    re.IGNORECASE,
)
PRESENCE = re.compile(
    r"^\W*(?:(?:hello\W*)+|(?:are|you) (?:you )?still (?:there|with me|on the line)|"
    r"can you (?:still )?hear me(?: (?:okay|ok|alright|all right))?)\W*$",
    re.IGNORECASE,
)
# Words that make a question point back at what was just said.
_ANAPHOR = _rx(
    r"that",
    r"this",
    r"it",
    r"there",
    r"these",
    r"those",
    r"them",
    r"so",
    r"which ones?",
    r"other one",
)
_SEGMENT = re.compile(r",\s+|\s+[-–—]+\s+|:\s+")
_ABBREVIATION = re.compile(r"\b(?:mr|mrs|ms|dr|st|no|vs|e\.g|i\.e|approx)\.$", re.IGNORECASE)


@dataclass(frozen=True)
class Clause:
    """One clause of an agent's turn: a sentence, or the statement that leads into a question."""

    text: str
    start: int
    end: int
    kind: ClauseKind
    filler: bool  # says nothing to take up ("One second.", "Sure thing!", "How are you?")
    sentence_start: int  # where the sentence it belongs to starts


@dataclass(frozen=True)
class Question:
    """One thing the agent asked of the caller: a question or a request, with its own cues.

    ``text`` is what the caller answers: the asking words with fillers removed, and for
    a question that points back ("Is that right?") the statements just before it.
    ``context`` is the whole sentence it sits in ("If you have another card, which one?").
    The values are those said within ``start``..``end`` (positions in the turn).
    """

    text: str
    context: str
    start: int
    end: int
    kind: Literal["question", "request"]
    small_talk: bool = False
    presence: bool = False  # "Are you still there?"
    offer: bool = False  # a yes/no question offering or proposing something
    readback: bool = False
    anything_else: bool = False
    not_understood: bool = False
    dangling: bool = False  # points back, with nothing before it in its own turn
    yes_no: bool = False  # asked by word order ("Is that ...?", "Shall I ...?"), not "which"
    identity: tuple[FactorAsk, ...] = ()
    second_factor: bool = False  # asked for "one of" the factors, none named
    money: tuple[Mention[int], ...] = ()
    digits: tuple[Mention[str], ...] = ()
    dates: tuple[Mention[date], ...] = ()
    emails: tuple[Mention[str], ...] = ()

    @property
    def says_nothing(self) -> bool:
        """Small talk or a check that the caller is there: nothing about the call itself."""
        return self.small_talk or self.presence


def clauses(text: str) -> tuple[Clause, ...]:
    """The turn's clauses in order; a question's leading words become a statement of their own.

    "One second, which card would you like to use?" is the filler "One second" and
    the question "which card would you like to use?".
    """
    out: list[Clause] = []
    spans = _sentence_spans(text)
    for start, end in spans:
        sentence = text[start:end]
        kind, offset = _asking_part(sentence)
        if kind is None and (start, end) == spans[-1] and _reads_back(sentence):
            kind = "question"  # "Just to confirm, 10 more days." ends the turn: a check
        if kind is None:
            out.append(_clause(text, start, end, "statement", start))
            continue
        if offset > 0:
            lead_end = start + offset
            while lead_end > start and not text[lead_end - 1].isalnum():
                lead_end -= 1
            if lead_end > start:
                out.append(_clause(text, start, lead_end, "statement", start))
        out.append(_clause(text, start + offset, end, kind, start))
    return tuple(out)


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in re.finditer(r"[.?!;]+(?=\s|$)", text):
        end = match.end()
        if match.group() == "." and _ABBREVIATION.search(text[start:end]):
            continue  # "Mr. Whitfield" is one sentence
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    trimmed = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            trimmed.append((s, e))
    return trimmed


def _asking_part(sentence: str) -> tuple[Literal["question", "request"] | None, int]:
    """Whether a sentence asks, and where the asking part starts (after leading words)."""
    marked = sentence.rstrip().endswith("?")
    please_tail = bool(_PLEASE_END.search(sentence))
    offsets = [0] + [m.end() for m in _SEGMENT.finditer(sentence)]
    for offset in offsets:
        segment = sentence[offset:]
        lead = _LEAD.match(segment)
        core = segment[lead.end() if lead else 0 :]
        if _INVERTED.match(core) or _WH_INVERTED.match(core):
            return "question", offset
        if marked and (_WH_START.match(core) or _IMPERATIVE.match(core)):
            return "question", offset
        if _IMPERATIVE.match(core) or (_NOUN_START.match(core) and please_tail):
            return "request", offset  # "To start, your account number, please."
    if marked:
        return "question", 0  # a statement said as a question: "That's account 4417-90781?"
    if _REQUEST.search(sentence):
        return "request", 0
    return _asking_by_content(sentence), 0


# A read-back put as a statement: "Just to confirm, 10 more days." (its "?" not heard).
_READBACK_LEAD = re.compile(
    r"^\W*(?:(?:so|and|okay|ok|alright|great|thanks|thank you)\W+)*(?:just\s+)?"
    r"(?:to confirm|confirming|so that'?s|and that'?s|that'?s)\b",
    re.IGNORECASE,
)
# Words that make a sentence naming identity items tell rather than ask: "Your postal code
# is on file", "That account number doesn't match", "I have your name as ...".
_TELLS = _rx(
    r"is",
    r"are",
    r"was",
    r"were",
    r"has",
    r"have",
    r"had",
    r"matche[sd]",
    r"match",
    r"found",
    r"verified",
    r"shows?",
    r"says?",
    r"ends?",
    r"ending",
)


def _reads_back(sentence: str) -> bool:
    """A read-back's lead-in before the values it reads back ("To confirm, account ...")."""
    return bool(_READBACK_LEAD.match(sentence)) and any(
        found(sentence) for found in (find_digit_strings, find_money, find_dates, find_counts)
    )


def _asking_by_content(sentence: str) -> Literal["question", "request"] | None:
    """What an unmarked sentence asks by its words alone.

    A recogniser drops the "?" of many questions and the commas inside them; a person
    still hears "And one of last four of a card on file your postal code or last bill
    amount" as the second-factor ask, and "Just to confirm 10 more days" as a check.
    Two shapes count: a bare question word with a few words after it ("Which one", a
    question); and a phrase that names identity items the caller is to give, with no
    verb that tells something about them and no value in it (a request). (A read-back
    that ends the turn is the third, ``clauses`` takes it: "Just to confirm, 10 more
    days.")
    """
    lower = sentence.lower()
    lead = _LEAD.match(sentence)
    core = sentence[lead.end() if lead else 0 :].strip(" .!;")
    if _WH_START.match(core) and len(core.split()) <= 4 and not _TELLS.search(core):
        return "question"  # "Which one", "What date": too short to be anything but a question
    identity, second = _identity(lower)
    if not (identity or second):
        return None
    if _TELLS.search(lower) or VERIFIED.search(lower) or VERIFY_FAILED.search(lower):
        return None
    if find_digit_strings(sentence) or find_money(sentence) or find_email(sentence):
        return None
    return "request"


def _clause(text: str, start: int, end: int, kind: ClauseKind, sentence_start: int) -> Clause:
    words = text[start:end]
    if kind == "statement":
        filler = bool(_FILLER.match(words))
    else:
        core = _LEAD.sub("", words, count=1)
        filler = bool(SMALL_TALK.match(core) or PRESENCE.match(core))
    return Clause(words, start, end, kind, filler, sentence_start)


def _without_filler(text: str) -> str:
    return re.sub(r"\s{2,}", " ", _FILLER_PHRASES.sub(" ", text)).strip(" ,")


def _questions(text: str, parts: tuple[Clause, ...], values: _Values) -> tuple[Question, ...]:
    out: list[Question] = []
    since = 0  # where the statements a pointing-back question may carry begin
    for i, part in enumerate(parts):
        if part.kind == "statement":
            continue
        core = _LEAD.sub("", part.text, count=1)
        lower = core.lower()
        small_talk = bool(SMALL_TALK.match(core))
        presence = bool(PRESENCE.match(core))
        start = part.start
        # "Anything else, or are we all set?": the question starts at "are", the cue before it.
        sentence = text[part.sentence_start : part.end]
        anything_else = bool(ANYTHING_ELSE.search(sentence))
        not_understood = bool(NOT_UNDERSTOOD.search(lower))
        own = values.within(part.start, part.end)
        points_back = (
            not (small_talk or presence or anything_else or not_understood)
            and not own.any
            and (bool(_ANAPHOR.search(lower)) or len(core.split()) <= 4)
        )
        dangling = False
        if points_back:
            before = [
                p for p in parts[:i] if p.kind == "statement" and not p.filler and p.start >= since
            ]
            if before:
                start = before[0].start
            else:
                dangling = True  # "Is that right?" on its own: about the agent's last turn
        since = part.end
        said = values.within(start, part.end)
        asked = _without_filler(text[start : part.end])
        identity, second = _identity(lower)
        out.append(
            Question(
                text=asked,
                context=_without_filler(text[part.sentence_start : part.end]),
                start=start,
                end=part.end,
                kind=part.kind,
                small_talk=small_talk,
                presence=presence,
                # "Can I help you with anything else?" offers nothing: it asks what is next.
                offer=part.kind == "question"
                and not anything_else
                and bool(QUESTION_OFFER.search(lower))
                and not _WH_START.match(lower),
                # "Just to confirm, is that ...?": the lead-in says it is a read-back.
                readback=bool(READBACK.search(text[min(start, part.sentence_start) : part.end])),
                anything_else=anything_else,
                not_understood=not_understood,
                dangling=dangling,
                yes_no=part.kind == "question" and bool(_AUX_START.match(core)),
                identity=identity,
                second_factor=second,
                money=said.money,
                digits=said.digits,
                dates=said.dates,
                emails=said.emails,
            )
        )
    return tuple(out)


_FACTOR_CUES: tuple[tuple[FactorAsk, re.Pattern[str]], ...] = (
    ("card_last4", CARD_LAST4),
    ("postal_code", POSTAL),
    ("last_bill_amount", BILL_AMOUNT),
)


def _identity(lower: str) -> tuple[tuple[FactorAsk, ...], bool]:
    asks: list[FactorAsk] = []
    if ACCOUNT_NUMBER.search(lower):
        asks.append("account_number")
    if NAME.search(lower):
        asks.append("name")
    factors = [kind for kind, pattern in _FACTOR_CUES if pattern.search(lower)]
    asks.extend(factors)
    return tuple(asks), bool(SECOND_FACTOR.search(lower)) and not factors


@dataclass(frozen=True)
class _Values:
    money: tuple[Mention[int], ...] = ()
    digits: tuple[Mention[str], ...] = ()
    dates: tuple[Mention[date], ...] = ()
    emails: tuple[Mention[str], ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.money or self.digits or self.dates or self.emails)

    def within(self, start: int, end: int) -> _Values:
        def inside(mentions: tuple[Mention[T], ...]) -> tuple[Mention[T], ...]:
            return tuple(m for m in mentions if m.start >= start and m.end <= end)

        return _Values(
            inside(self.money), inside(self.digits), inside(self.dates), inside(self.emails)
        )


@dataclass(frozen=True)
class Heard:
    """One agent turn as the scripted caller understood it.

    The question cues (``is_question``, ``offer``, ``readback``, ``anything_else``,
    ``not_understood``) describe ``focus``, the question the caller answers; ``asks``
    and ``asks_second_factor`` gather the identity items of every question. The
    announcement cues (``checking``, ``verified``, ``refusal``, ``done`` ...) come from
    the statements only. Values are the whole turn's; each question has its own too.
    """

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
    withdrawn: bool = False  # took back an offer: a question put off by "Why?" is closed
    # A code the turn was cut off in ("account nine seven three nine dash seven"): only its
    # start was heard, which can still be seen to be wrong.
    cut_digits: tuple[Mention[str], ...] = ()
    questions: tuple[Question, ...] = ()
    focus: Question | None = None
    parts: tuple[Clause, ...] = field(default=(), repr=False)

    @property
    def silent(self) -> bool:
        return not self.text.strip()

    @property
    def quotes_values(self) -> bool:
        return bool(self.money or self.dates)

    @property
    def asked(self) -> str:
        """The words of the question the caller answers ("" when the turn asks nothing)."""
        return self.focus.text if self.focus is not None else ""

    @property
    def says_nothing_asked(self) -> Question | None:
        """The small talk the turn asked, when that is all it asked ("How are you today?")."""
        if self.focus is not None:
            return None
        return next((q for q in reversed(self.questions) if q.says_nothing), None)

    def asking(self) -> Question:
        """The question the caller answers; a turn that asks nothing stands as one whole."""
        if self.focus is not None:
            return self.focus
        return Question(
            text=self.text,
            context=self.text,
            start=0,
            end=len(self.text),
            kind="question",
            readback=self.readback,
            money=self.money,
            digits=self.digits,
            dates=self.dates,
            emails=self.emails,
        )

    def after(self, earlier: Heard) -> Heard:
        """This turn, its question pointing back at ``earlier`` if nothing in it came before.

        A caller that cut the agent short ("To confirm: account ... Is that") hears
        "Is that right?" next, about what it heard in the turn it cut.
        """
        focus = self.focus
        if focus is None or not focus.dangling or earlier.silent:
            return self
        joined = replace(
            focus,
            text=f"{_without_filler(earlier.text)} {focus.text}",
            context=f"{_without_filler(earlier.text)} {focus.context}",
            readback=focus.readback or earlier.readback or bool(READBACK.search(earlier.text)),
            dangling=False,
            money=earlier.money + focus.money,
            digits=earlier.digits + focus.digits,
            dates=earlier.dates + focus.dates,
            emails=earlier.emails + focus.emails,
        )
        return self.focused(joined)

    def focused(self, question: Question) -> Heard:
        """This turn with ``question`` as the one the caller answers."""
        return replace(
            self,
            focus=question,
            is_question=True,
            checking=False,
            offer=question.offer,
            readback=question.readback,
            anything_else=question.anything_else,
            not_understood=question.not_understood,
        )


# Digits read one at a time ("four, nine, four, four"): a recogniser writes some as words
# they sound like ("for, 9, 4, 4", "9 to 9 7", "dash, free, 9") when a digit stands next to them.
_DIGIT_SOUNDS = {
    "for": "4",
    "to": "2",
    "too": "2",
    "free": "3",
    "tree": "3",
    "ate": "8",
    "oh": "0",
    "won": "1",
    "a": "8",  # "eight," alone: "1-A-1-0-4"
}
_RUN_TOKEN = re.compile(
    r"\b(?:\d|dash|for|to|too|free|tree|ate|oh|won|a)\b(?:(?:[,\s]+|[,\s]*-[,\s]*)"
    r"(?:\d|dash|for|to|too|free|tree|ate|oh|won|a)\b)+",
    re.IGNORECASE,
)
_SOUND_WORD = re.compile(r"\b(for|to|too|free|tree|ate|oh|won|a)\b", re.IGNORECASE)


def _as_digits(text: str) -> str:
    """``text`` with words that sound like digits inside a run of single digits written as
    those digits, padded to the same length (positions in it are positions in ``text``).

    A run counts when it holds at least three real digits: "9 to 9 7" and "for 9, 4, 4"
    are codes, "2 to 3 business days" is not."""

    def digit(match: re.Match[str]) -> str:
        word = match.group(1)
        return _DIGIT_SOUNDS[word.lower()].ljust(len(word))

    def run(match: re.Match[str]) -> str:
        words = match.group()
        if len(re.findall(r"\d", words)) < 3:
            return words
        lead = re.match(r"a\b[,\s-]*", words, re.IGNORECASE)  # "a 4, 4": the article
        cut = lead.end() if lead else 0
        return words[:cut] + _SOUND_WORD.sub(digit, words[cut:])

    return _RUN_TOKEN.sub(run, text)


# "Shall I charge ..." as an ear writes Piper's "shall": "Cell I charge", "Chill I
# charge", "Kell I charge". A sentence that opens with a word that is no opener, then "I"
# and one of the actions an agent offers, is that offer: a listener hears the question.
_OFFERED = (
    r"charge|set(?:\s+up)?|make|put|process|turn|switch|send|book|schedule|cancel|change|"
    r"update|add|enrol|enroll|sign|apply|take|use|arrange|move|register|go\s+ahead|pay"
)
# fmt: off
_OPENERS = frozenset((
    "then", "now", "so", "here", "today", "first", "next", "yes", "no", "and", "but", "also",
    "once", "after", "before", "when", "if", "as", "because", "okay", "ok", "alright", "great",
    "right", "sorry", "well", "actually", "just", "there", "where", "what", "which", "who",
    "how", "why", "that", "this", "it", "can", "could", "would", "will", "shall", "should",
    "may", "might", "do", "did",
))
# fmt: on
_GARBLED_AUX = re.compile(rf"(^|[.?!]\s+)([A-Za-z']+)(?=\s+i\s+(?:{_OFFERED})\b)", re.IGNORECASE)


def _restore_aux(text: str) -> str:
    """``text`` with a garbled "Shall" before "I <offered action>" written "Shall"."""

    def restore(found: re.Match[str]) -> str:
        word = found.group(2)
        return found.group(0) if word.lower() in _OPENERS else f"{found.group(1)}Shall"

    return _GARBLED_AUX.sub(restore, text)


def listen(text: str) -> Heard:
    text = _restore_aux(text)
    parts = clauses(text)
    all_digits = [
        replace(m, text=text[m.start : m.end]) for m in find_digit_strings(_as_digits(text))
    ]
    values = _Values(
        money=_whole(find_money(text), text),
        digits=_whole(all_digits, text),
        dates=_whole(find_dates(text), text),
        emails=_whole(find_email(text), text),
    )
    cut_digits = tuple(m for m in all_digits if m not in values.digits)
    questions = _questions(text, parts, values)
    asking = [q for q in questions if not q.says_nothing]
    focus = asking[-1] if asking else None
    told = ". ".join(p.text for p in parts if p.kind == "statement")
    told_lower = told.lower()
    lower = text.lower()
    asks = [a for a in _ASK_ORDER if any(a in q.identity for q in asking)]
    factor_named = any(a in asks for a in ("card_last4", "postal_code", "last_bill_amount"))
    # A statement that reads a value back ("I have your number as ...") asks for a check too.
    told_readback = bool(READBACK.search(told_lower)) and (
        values.any or bool(cut_digits) or bool(find_counts(told))
    )
    return Heard(
        text=text,
        is_question=focus is not None,
        checking=focus is None and _waits(parts),
        not_understood=focus.not_understood
        if focus is not None
        else bool(NOT_UNDERSTOOD.search(told_lower)),
        asks=tuple(asks),
        asks_second_factor=any(q.second_factor for q in asking) and not factor_named,
        readback=focus.readback if focus is not None else told_readback,
        verified=bool(VERIFIED.search(told_lower)),
        verify_failed=bool(VERIFY_FAILED.search(told_lower)),
        transfer=bool(TRANSFER.search(told_lower)),
        offer=focus.offer if focus is not None else False,
        anything_else=focus.anything_else if focus is not None else False,
        refusal=bool(REFUSAL.search(told_lower)),
        failed=bool(FAILED.search(told_lower)),
        done=bool(DONE.search(told_lower)),
        source_named=bool(SOURCE.search(lower)),
        state_change=bool(STATE_CHANGE.search(lower)),
        closing=bool(CLOSING.search(told_lower)),
        withdrawn=bool(WITHDRAWN.search(told_lower)),
        cut_digits=cut_digits,
        money=values.money,
        digits=values.digits,
        dates=values.dates,
        emails=values.emails,
        counts=_whole(find_counts(text), text),
        questions=questions,
        focus=focus,
        parts=parts,
    )


def _waits(parts: tuple[Clause, ...]) -> bool:
    """Whether the turn ends on a wait cue: "One moment, let me check." but not "Let me check.
    Your balance is ..." (what follows the cue is what the agent found)."""
    waiting = False
    for part in parts:
        if part.kind != "statement":
            continue
        if CHECKING.search(part.text):
            waiting = True
        elif not part.filler:
            waiting = False
    return waiting


_ASK_ORDER: tuple[FactorAsk, ...] = (
    "account_number",
    "name",
    "card_last4",
    "postal_code",
    "last_bill_amount",
)


def _whole(mentions: list[Mention[T]], text: str) -> tuple[Mention[T], ...]:
    """Drop a value the turn was cut off in: "... then six dollars" may have been "six ten".

    A turn that stops without closing punctuation was cut short (a barge-in or the
    caller talking over it); a value running to its very end may be incomplete.
    """
    if text.rstrip().endswith((".", "?", "!")):
        return tuple(mentions)
    return tuple(m for m in mentions if not _CUT_TAIL.fullmatch(text[m.end :]))


_NAME_LEAD = re.compile(
    r"\bname(?:\s+on\s+(?:the|your)\s+account)?(?:\s+(?:is|as))?\s*[:,]?\s+", re.IGNORECASE
)
_NAME_STOP = re.compile(
    r"[.,;:?!]|\s(?:is that|is it|does that|did i|right|correct|and|on the account)\b",
    re.IGNORECASE,
)


def read_back_name(text: str) -> tuple[str, ...] | None:
    """The words an agent read back as the caller's name ("..., name Kwame Novak. Is that
    right?"), lower-cased, or None when it read none back.

    Taken from the words after "name" up to the next punctuation or the question that
    follows, not from capitals: a recogniser writes a read-back as "name queen novick is
    that right" as often as "Name Queen Novick. Is that right?". A caller compares these
    words with its own name; "Your full name, please" reads nothing back."""
    for lead in _NAME_LEAD.finditer(text):
        rest = text[lead.end() :]
        stop = _NAME_STOP.search(rest)
        words = re.findall(r"[\w'-]+", rest[: stop.start()] if stop else rest)
        if words and words[0].lower() not in {"please", "again", "for", "of", "and", "the", "on"}:
            return tuple(w.lower() for w in words[:5])
    return None


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
