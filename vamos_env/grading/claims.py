"""Claims as propositions with polarity: what an agent's clause asserts about the account.

A **predicate** is something that can be true or false of the call ("the payment went
through", "paperless billing is on", "an arrangement is already active"). It has
*forms*, words that assert it ("went through", "been paid", "processed"), and *opposite
forms*, words that assert its negation ("declined", "failed", "unpaid"). In a clause
(``clauses.py``) a form asserts the predicate unless an odd number of negators stands
before it, an opposite form asserts the negation unless negated itself: "didn't go
through" and "was declined" both say the payment failed, "wasn't declined" says it went
through. Hedges ("seems to have gone through", "looks like it went through") are claims;
questions are not; a conditional clause ("once you pay, it will be recorded") claims
nothing for predicates about what happened. Where one clause holds both a form and an
opposite form with different verdicts ("I'll record it once you've paid"), the
opposite form decides. A *quantity* predicate ("you owe", "past due") is also negated by
a nil word after it ("you owe nothing", "your balance is zero").

A **proposition** is what a check needs: one or more (predicate, verdict) pairs, any of
which states it ("the promised payment was made or recorded"), and those that
contradict it (by default the same predicates with the other verdict). ``PROPOSITIONS``
maps a check's ``topic`` to its proposition; a topic without one is read from its
``topic_phrases`` as plain forms (each phrase claimed when said and not negated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vamos_env.grading.clauses import Clause, clauses, compile_forms, shared
from vamos_env.speech import normalise

_NIL_AFTER = frozenset({"nothing", "zero", "none", "no", "0", "0.00", "nil"})
_COORDINATORS = frozenset({"or", "nor", "and", "any", "an", "a"})
# Words that open a clause with its own subject after "or" ("or it was an actual reading").
_SUBJECTS = frozenset(
    {"i", "you", "we", "they", "it", "he", "she", "that", "this", "there", "i'm", "you're",
     "it's", "that's", "there's", "we're", "they're", "do", "does", "did", "is", "are", "was"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Predicate:
    name: str
    forms: tuple[str, ...]
    opposite: tuple[str, ...] = ()
    quantity: bool = False  # a nil word after the form negates it ("you owe nothing")
    # Whether a negator inside a form's words counts ("have no income"); topic phrases
    # may carry their own ("didn't go through"), so for them only those before count.
    inner_negation: bool = True
    factual: bool = True  # a conditional clause claims nothing ("if it went through")
    # Words that make a clause about something else: "needs at least $50 past due" states
    # a rule, "an overdue instalment" is the arrangement's, not the bills'.
    blockers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Claim:
    """A clause's verdict on a predicate: ``holds`` True asserts it, False its negation."""

    predicate: str
    holds: bool
    clause: Clause
    said: str  # the words that carried it

    @property
    def quote(self) -> str:
        return self.clause.text.strip()


@dataclass(frozen=True, slots=True)
class Proposition:
    """What a check needs said: any of ``states``; ``contradicts`` says the opposite."""

    name: str
    states: tuple[tuple[str, bool], ...]
    contradicts: tuple[tuple[str, bool], ...] | None = None

    @property
    def opposites(self) -> tuple[tuple[str, bool], ...]:
        if self.contradicts is not None:
            return self.contradicts
        return tuple((name, not holds) for name, holds in self.states)


# --- predicates -------------------------------------------------------------------------

# What paperless is said of: "paperless billing", "paperless bills", "paperless statements".
_PAPERLESS = r"paperless (?:billing |bills? |statements? |e ?bills? )?"
_GO = r"(?:went|gone|go|goes|going|gotten|got|come|came|gets|get) through"
PREDICATES: dict[str, Predicate] = {
    p.name: p
    for p in (
        Predicate(
            "payment_success",
            forms=(
                _GO,
                # "paid on June 28th" dates an old payment; "the paid bill" names one
                r"paid(?: up| in full| off)?(?! on (?:january|february|march|april|may|june|july"
                r"|august|september|october|november|december|the \d|\d))(?! bills?)",
                r"(?:processed|approved|accepted|cleared|received|completed|confirmed|charged)",
                r"(?<!to )complete",
                r"successful(?:ly)?|succeeded|success|a success",
                r"(?:payment|instalment|installment|charge|transaction)s? (?:has |have |was |were "
                r"|is )?(?:been |now )?(?:made|taken|done|posted|applied|through)",
                r"all set|all done|taken care of|good to go|sorted|squared away",
                r"(?:worked|works)",
            ),
            opposite=(
                r"declin\w*",
                r"fail\w*",
                r"unsuccessful(?:ly)?|rejected|refused|denied|bounced|unpaid|insufficient funds",
                r"(?:still|remains|remain) (?:open|owed|outstanding|due|unpaid)",
                r"problem with (?:the|your|that) (?:card|payment|charge)",
            ),
        ),
        Predicate(
            "payment_recorded",
            forms=(
                r"(?:recorded|noted|logged|booked|registered|entered|scheduled|filed|saved|"
                r"captured|posted|applied|added)",
                r"marked (?:it |that |the payment |your payment )?(?:as )?paid",
                r"put (?:it |that |this |your payment |the payment |you )?down",
                r"(?:made|taken|make|take) (?:a |the )?note",
                r"(?:it's|that's|it is|that is|is|are|now|is now|it's now) (?:on (?:file|record|"
                r"your account|the account|your arrangement|the arrangement)|in the system)",
                r"put (?:\S+ ){0,2}on (?:your|the) (?:arrangement|account)",
                r"(?:i'll|i will|i'm going to|we'll|we will|let me|i can go ahead and) (?:go ahead"
                r" and )?(?:record|note|log|mark|add|put|book|enter|schedule|register|apply|"
                r"take down|write down|set up)",
                r"(?:got|have) (?:it|that) (?:down|noted|recorded)",
                # "consider it done", "that's handled": the promise dealt with
                r"consider it (?:done|handled|sorted|noted|taken care of)|(?:that's|it's|all) "
                r"(?:handled|sorted|dealt with)|nothing more to do|(?:you're|you are) covered",
                r"(?:arrangement|account|instalment|installment) (?:is |'s )?(?:now )?(?:up to "
                r"date|current|covered)",
            ),
        ),
        Predicate(
            "can_record_promise",
            forms=(
                r"(?:record(?:ed)?|noted?|log(?:ged)?|book(?:ed)?|enter(?:ed)?|register(?:ed)?|"
                r"accept(?:ed)?|take|took|taken|mark(?:ed)?|schedul(?:e|ed)|add(?:ed)?|put down|"
                r"put) (?:\S+ ){0,3}?(?:promises?|promised|pledges?|commitments?|future payments?"
                r"|payments? (?:you haven't|you have not|that hasn't been|not yet) made|"
                r"(?:it|that|this) (?:now|yet|today)|(?:it|that|this) for (?:you|next))",
                r"(?:record|note|log|book) (?:it|that|this)",
            ),
            opposite=(
                r"only (?:\S+ ){0,3}(?:record|note|log|accept|take|post|apply|enter|add)\w* "
                r"(?:\S+ ){0,5}?(?:made|paid|received|completed|already|once|after|when)",
                r"only (?:payments?|ones) (?:\S+ ){0,3}?(?:made|paid|received|completed)",
                r"(?:once|after|when) (?:you've|you have|you) (?:made|paid|pay|make|sent|send)",
                r"(?:once|after|when) (?:it's|it is|it has been|the payment is|the payment has "
                r"been|the payment's) (?:made|paid|received|done)",
                r"(?:payments?|ones) (?:that |which )?(?:have |has |are |were )?(?:already )?"
                r"(?:been )?(?:made|paid|received|completed)",
                r"call (?:us )?back (?:once|after|when)",
            ),
            factual=False,
            inner_negation=False,  # "a payment that hasn't been made" negates nothing
        ),
        Predicate(
            "owes_money",
            forms=(r"owe|owed|owing|balance|outstanding|amount due|balance due|left to pay",),
            opposite=(
                r"paid in full|(?:all|fully) paid(?: up)?|paid up|up to date|caught up|all square",
                r"(?:every|each|all)(?: of)?(?: your| the)? bills? (?:is |are |has been |have been"
                r" )?(?:\S+ )?paid",
                r"zero balance|in good standing|settled",
            ),
            quantity=True,
            blockers=(r"arrangement|instalment|installment|plan|need|needs|at least|minimum",),
        ),
        Predicate(
            "past_due",
            forms=(r"past due|overdue|behind|late|in arrears|arrears",),
            opposite=(r"(?:all |fully )?(?:up to date|caught up|on time)",),
            quantity=True,
            blockers=(
                r"arrangement|instalment|installment|plan|need|needs|at least|minimum|requires?"
                r"|required|must",
            ),
        ),
        Predicate(
            "estimated_read",
            forms=(r"estimat\w*",),
            opposite=(
                r"actual (?:meter )?(?:read|reading)|(?:read|reading) was actual|real (?:meter )?"
                r"reading",
            ),
        ),
        Predicate(
            "arrangement_active",
            forms=(
                r"(?:active|existing|current|open|ongoing) (?:payment )?(?:arrangement|plan)s?",
                r"already (?:have|got|has|on|in|enrolled|signed up|set up)(?: \S+){0,4} "
                r"(?:arrangement|plan)",
                r"(?:arrangement|plan) (?:is |that's |that is )?(?:already )?(?:active|in place|"
                r"open|running|set up)",
                r"already (?:an?|one) (?:\S+ ){0,2}(?:arrangement|plan)",
                r"only (?:have )?one (?:\S+ ){0,4}?(?:at a time|open|allowed|active|per account)",
            ),
        ),
        Predicate(
            "shutoff",
            forms=(
                r"(?:shutoff|shut off|termination|disconnection|disconnect|cut off|cutoff)(?: \S+)"
                r"{0,2} (?:process|list|notice|status|stage|track|proceedings)",
                r"(?:in|into|facing|scheduled for|pending|at risk of|subject to|up for|headed for)"
                r" (?:a |the )?(?:shutoff|shut off|termination|disconnection|cut off|cutoff)",
                r"(?:will|could|may|might|going to|scheduled to|about to) be (?:shut off|"
                r"disconnected|terminated|cut off)",
            ),
        ),
        Predicate(
            "paperless_on",
            forms=(
                _PAPERLESS + r"(?:is |are |'s |s |was |were |has been |have been )?(?:now |"
                r"currently |already |still )?(?:switched |turned |set )?(?:on|active|enabled|"
                r"activated|in place|set up)",
                r"(?:on|enrolled in|signed up for|set up for|using|in|with|switched to|moved to|"
                r"registered for|turned on|switched on|set up) (?:the )?paperless",
                r"by e ?mail|electronic(?:ally)?(?: bills?| statements?| billing)?",
                r"(?:e ?mailed|e ?mail|send|sent) (?:them |it |your bills |bills )?to you(?:r "
                r"(?:e ?mail|inbox))?",
                r"(?:to|in) your (?:e ?mail|inbox)",
                # A bill of that kind named is no claim ("Paperless bills are off"; a
                # recogniser's "Paperless Bill and his off" for "billing is off"): getting
                # one is.
                r"(?:get|gets|getting|receive|receives|receiving) (?:your |the |only |just )?"
                r"(?:paperless |online |electronic |e ?)(?:bills?|statements?)",
                r"(?:bills?|statements?) (?:are |is )?(?:now |still )?(?:online|paperless)",
            ),
            opposite=(
                _PAPERLESS + r"(?:is |are |'s |s |was |were |has been |have been )?(?:now |"
                r"currently |already |still )?(?:off|inactive|disabled|deactivated|switched off|"
                r"turned off|cancelled|canceled|stopped)",
                r"(?:turned|switched|taken|came|come) off (?:the )?paperless|off paperless",
                r"paper (?:bills?|statements?|billing|copies|copy)",
                r"by (?:mail|post|postal mail|regular mail|snail mail)|in the (?:mail|post)",
                r"(?:mailed|posted|printed)(?: bills?| statements?| to you)?",
            ),
        ),
        Predicate(
            "income_known",
            forms=(
                r"income (?:is |'s |s |was )?(?:\S+ )?(?:on file|on record|recorded|known|listed|"
                r"available|in our records|in the system)",
                r"(?:have|got|know|see|hold|has|had) (?:\S+ ){0,2}income",
                r"income (?:level|information|details|figures?|tier|data)",
            ),
            opposite=(
                r"income (?:is |'s |s |was )?(?:unknown|missing|blank|empty|unavailable|absent)",
                r"no income",
                r"(?:without|lack|lacking|missing) (?:\S+ ){0,2}income",
            ),
        ),
        Predicate(
            "down_payment_needed",
            forms=(
                r"down payment(?: of)?(?: \S+){0,3}(?: is| would be)? (?:needed|required|due|"
                r"necessary)",
                r"(?:need|needs|require|requires|required|ask for|take|collect) (?:\S+ ){0,2}"
                r"(?:down payment|upfront payment|payment up front|deposit|money down)",
            ),
            opposite=(
                r"no (?:down payment|money down|deposit|upfront payment|payment up front)",
                r"nothing (?:down|up front|upfront)|zero down",
                r"without (?:a |any )?(?:down payment|deposit)",
                r"down payment (?:of |is |would be )?(?:zero|nothing|none|\$ 0(?:\.00)?|0)",
            ),
        ),
    )
}


def claims(text: str, predicate: str) -> tuple[Claim, ...]:
    """Every clause of ``text`` that asserts ``predicate`` or its negation."""
    spec = PREDICATES[predicate]
    return shared(text, ("grading.claims", predicate), lambda: _claims(text, spec))


def _claims(text: str, spec: Predicate) -> tuple[Claim, ...]:
    found: list[Claim] = []
    previous: Clause | None = None
    for clause in clauses(text):
        claim = _claim(clause, spec, _carried(previous, clause))
        if claim is not None:
            found.append(claim)
        previous = clause
    return tuple(found)


def _carried(previous: Clause | None, clause: Clause) -> int:
    """Negation an "or" clause carries from the clause it continues: "you don't have a
    balance or anything overdue" says nothing is overdue either."""
    if (
        previous is None
        or previous.sentence != clause.sentence
        or previous.question
        or not clause.words
        or clause.words[0] != "or"
        or any(w in _SUBJECTS for w in clause.words[1:3])  # a clause of its own
    ):
        return 0
    return previous.negations_before(len(previous.words)) % 2


def _unblocked(
    clause: Clause, spans: list[tuple[int, int, bool, str]], blockers: re.Pattern[str]
) -> list[tuple[int, int, bool, str]]:
    """The forms no blocker reaches. A blocker ("needs at least $50 past due": a rule; "an
    overdue instalment": the arrangement's) reaches the forms of its stretch of the clause,
    from the end of the form before to the start of the form after, not past them: in a
    recogniser's run-on "an arrangement needs at least 50 dollars past due nothing on your
    account is past due" the rule is the first form's, and the second says nothing is."""
    kept = []
    for i, (first, last, opposite, words) in enumerate(spans):
        start = spans[i - 1][1] if i else 0
        end = spans[i + 1][0] if i + 1 < len(spans) else len(clause.words)
        stretch = " ".join(clause.words[min(start, first) : max(end, last)])
        if not blockers.search(stretch):
            kept.append((first, last, opposite, words))
    return kept


def _claim(clause: Clause, spec: Predicate, carried: int = 0) -> Claim | None:
    if clause.question or (spec.factual and clause.conditional):
        return None
    joined = clause.joined()
    spans: list[tuple[int, int, bool, str]] = []  # (first word, end, opposite, words)
    for opposite, forms in ((False, spec.forms), (True, spec.opposite)):
        if not forms:
            continue
        for match in compile_forms(forms).finditer(joined):
            first = clause.word_at(match.start())
            last = clause.word_at(max(match.start(), match.end() - 1)) + 1
            spans.append((first, last, opposite, match.group(0)))
    spans.sort()
    if spec.blockers and spans:
        spans = _unblocked(clause, spans, compile_forms(spec.blockers))
        if not spans:
            return None
    verdicts: list[tuple[bool, bool, str]] = []  # (holds, from an opposite form, words)
    # A negator reaches the next form of the predicate, not past it: in "you have no
    # balance every bill is paid in full" (a recogniser's words, with no colon to split
    # the clause) the "no" is the balance's, and the bills are paid. Forms joined by a
    # coordinator share it ("no balance or amount due").
    scope = 0
    for first, last, opposite, words in spans:
        # A form never holds a negator itself, so one inside it counts ("have no
        # income"); an opposite form may ("no down payment"), so only those before it.
        upto = first if opposite or not spec.inner_negation else last
        gap = clause.words[scope:first]
        if verdicts and gap and all(w in _COORDINATORS for w in gap):
            negations = carried
        else:
            negations = clause.negations_before(upto, start=min(scope, upto))
            negations += carried if not verdicts else 0
        carried = negations
        scope = max(scope, last)
        if spec.quantity and not opposite:
            following = [f for f, _, _, _ in spans if f >= last]
            after = clause.words[last : min(following, default=len(clause.words))]
            nil = next((i for i, w in enumerate(after) if w in _NIL_AFTER), None)
            if nil is not None:  # "you owe nothing": the nil word is the form's
                negations += 1
                scope = max(scope, last + nil + 1)
        holds = (not opposite) != (negations % 2 == 1)
        verdicts.append((holds, opposite, words))
    if not verdicts:
        return None
    if len({v[0] for v in verdicts}) > 1:
        decided = next((v for v in verdicts if v[1]), verdicts[-1])
    else:
        decided = verdicts[-1]
    if decided[0] and not spec.factual and clause.conditional:
        return None  # "once you've paid, I'll record it" offers nothing now
    return Claim(spec.name, decided[0], clause, decided[2])


# --- propositions -----------------------------------------------------------------------

PROPOSITIONS: dict[str, Proposition] = {
    p.name: p
    for p in (
        # A decline reported stays reported when a false success follows; the
        # no-success-claim check is the one that fails then.
        Proposition(
            "payment declined, bill not paid", (("payment_success", False),), contradicts=()
        ),
        Proposition("payment went through", (("payment_success", True),)),
        Proposition("nothing owed on the bills", (("owes_money", False),)),
        Proposition("nothing past due", (("past_due", False),)),
        Proposition("estimated meter reading", (("estimated_read", True),)),
        Proposition("arrangement already active", (("arrangement_active", True),)),
        Proposition("shutoff process", (("shutoff", True),)),
        Proposition("a promise is not recorded", (("can_record_promise", False),)),
        Proposition(
            "promised payment claimed as made or recorded",
            (("payment_recorded", True), ("payment_success", True)),
            contradicts=(),
        ),
        Proposition("paper bills by post", (("paperless_on", False),)),
        Proposition("paperless billing on", (("paperless_on", True),)),
        Proposition("no income on file", (("income_known", False),)),
        Proposition("no down payment", (("down_payment_needed", False),)),
        # Figures whose topic has a nil claim: "nothing is past due" contradicts "$219.86
        # past due" (the figure checks read these as conflicts).
        Proposition("past due amount", (), contradicts=(("past_due", False),)),
        Proposition("total open balance", (), contradicts=(("owes_money", False),)),
    )
}
# Text values that are a predicate's verdict: paperless "on" / "off".
TEXT_VALUE_PREDICATES: dict[str, tuple[str, dict[str, bool]]] = {
    "paperless billing status": ("paperless_on", {"on": True, "off": False}),
}


def proposition_for(topic: str) -> Proposition | None:
    return PROPOSITIONS.get(topic)


def found(text: str, pairs: tuple[tuple[str, bool], ...]) -> list[Claim]:
    """The claims in ``text`` that state one of ``pairs`` (predicate, verdict), in order."""
    out = [c for name, holds in pairs for c in claims(text, name) if c.holds == holds]
    return sorted(out, key=lambda c: c.clause.index)


def phrase_claims(text: str, phrases: tuple[str, ...]) -> tuple[Claim, ...]:
    """Claims of a topic known only by its phrases: a phrase said, not negated, not asked."""
    forms = tuple(re.escape(normalise(p)) for p in phrases if normalise(p))
    if not forms:
        return ()
    spec = Predicate("phrases", forms=forms, inner_negation=False)
    return shared(
        text,
        ("grading.phrases", forms),
        lambda: tuple(c for clause in clauses(text) if (c := _claim(clause, spec)) is not None),
    )
