"""What a caller's brief says about one question: the offer it refuses, the fact it asks for.

Shared by the scripted caller (which answers from it) and the deviation check
(which holds any caller to it). A refusal's key ("new_card_by_phone") and a
private fact's key ("other_card") are matched by their content words, each with
its synonyms, in the words of the question asked, never anywhere in the turn.
"""

from __future__ import annotations

import re

from vamos_env.envs.energy.tasks.schema import CallerBrief, CallerRequest, PrivateFact

STOP_WORDS = frozenset(
    {"a", "an", "the", "to", "of", "on", "in", "for", "is", "and", "or", "by", "declines",
     "refuses", "rejects", "declined", "refused", "offer", "offered", "no", "not", "use", "my",
     "your", "now", "today"}
)  # fmt: skip
_ENROL = ("enrol", "enroll", "set up", "set it up", "set that up", "set this up", "sign up",
          "sign you up", "go ahead with")  # fmt: skip
SYNONYMS: dict[str, tuple[str, ...]] = {
    "alternative": ("another", "other", "different", "alternative", "second", "backup"),
    "other": ("another", "other", "different", "alternative", "second"),
    "arrangement": ("arrangement", "plan", "instal"),
    "plan": ("arrangement", "plan", "instal"),
    "paperless": ("paperless", "email", "e-mail", "electronic"),
    "transfer": ("transfer", "colleague", "connect", "specialist"),
    "extension": ("extension", "extend", "more time", "push"),
    "payment": ("pay", "payment"),
    "made": ("made", "make", "paid", "did you pay", "date of"),
    "pay": ("pay", "payment"),
    "enrol": _ENROL,
    "enrolment": _ENROL,
    "enroll": _ENROL,
    "autopay": ("autopay", "automatic", "auto pay", "auto-pay"),
}


def matching_refusal(request: CallerRequest, text: str) -> str | None:
    """The brief's words for turning down the offer ``text`` makes, if it refuses that offer."""
    lower = text.lower()
    for key, words in request.refusals.items():
        needed = [w for w in key.lower().split("_") if w and w not in STOP_WORDS]
        if needed and all(any(s in lower for s in SYNONYMS.get(w, (w[:5],))) for w in needed):
            return words
    return None


def fact_named(brief: CallerBrief, text: str) -> PrivateFact | None:
    """The private fact ``text`` asks about: every word of its key heard, the most specific wins."""
    lower = text.lower()
    best: tuple[int, PrivateFact] | None = None
    for fact in brief.private_facts:
        words = [w for w in re.split(r"[_\W]+", fact.key.lower()) if w and w not in STOP_WORDS]
        heard_all = all(any(s in lower for s in SYNONYMS.get(w, (w[:4],))) for w in words)
        if words and heard_all and (best is None or len(words) > best[0]):
            best = (len(words), fact)
    return None if best is None else best[1]


def card_fact(brief: CallerBrief, request: CallerRequest, k: int) -> PrivateFact | None:
    """The private fact that names the card of the request's ``k``-th consent, if any."""
    card = request.consent[k].values.get("card_last4")
    if not isinstance(card, str):
        return None
    return next((f for f in brief.private_facts if f.value == card), None)
