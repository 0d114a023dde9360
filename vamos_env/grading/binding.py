"""Which topic a figure is said about: evidence binding, clause by clause.

A figure ("$36.82", "October tenth", "nine point eight nine cents") is bound to the
topics a listener would attach it to, read from the words of its own clause
(``clauses.py``):

- **In its clause.** A lexicon maps topic phrases to topics (the task's checks' own
  phrases, plus ``OTHER_TOPICS``: money, dates and codes a check's topic is *not*,
  "your last payment", "the card ending"). Phrases match longest first, so "first
  instalment" is the first instalment's, not "instalment"'s. A topic present only
  through phrases it shares with another topic present is that other topic's ("an
  overdue instalment" is the arrangement's, not the bills' "overdue"). A figure in the
  clause takes the nearest phrase's topics ("$X a month after a first instalment of $Y";
  "your payment of $150 from September 8th" dates the payment, not the next instalment).
- **A threshold is not a statement.** A figure right after "at least", "minimum",
  "more than", ... belongs only to a topic whose phrase is that word ("an arrangement
  needs at least $50 past due" states the minimum, not the past-due amount).
- **A figure said about something else** ("The season start is December first") is bound
  to that label, a topic no check has.
- **A bare figure** (its clause holds only function words) takes the topic of a label before
  it in the sentence ("Past due: $219.86."), else after it ("$219.86, that's your
  balance"), else every topic the rest of the turn is about (a figure dropped in a turn
  about the payment amount is heard as one), else the topics of the caller's question
  it answers ("How much do I owe?" - "$219.86.").
- Figures after a code word ("ending", "postal code", "account number") are codes, not
  money, and so are digits said one by one after one ("ending one one one seven"); a
  figure without a money word (``marked``) counts only in its own clause's topic, or as
  the whole answer ("It's two nineteen eighty-six.").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from vamos_env.grading.clauses import Clause, clauses
from vamos_env.speech import normalise
from vamos_env.speech.vocabulary import SINGLE_DIGITS

# Topics a figure may belong to that are not the check's own: a figure bound to one of
# these is not bound to the check. Keys start with "~" so they never meet a real topic.
OTHER_TOPICS: dict[str, tuple[str, ...]] = {
    "money": (
        "last payment", "last bill", "paid", "payment", "payments", "bill", "bills", "balance",
        "past due", "overdue", "instalment", "installment",
        "first instalment", "first installment", "first payment", "down payment", "deposit",
        "minimum", "at least", "credit", "fee", "fees", "tax", "taxes", "charge", "charges",
        "customer charge", "supply", "delivery", "outstanding", "remaining", "refund",
    ),
    "date": (
        "paid", "payment", "bill date", "billed", "issued", "read", "reading", "meter read",
        "service period", "period", "covers", "from", "through", "certificate", "expired",
        "extension", "today",
    ),
    "digits": (
        "postal", "postal code", "zip", "zip code", "account number", "account", "phone",
        "meter", "meter number", "reference", "confirmation",
    ),
    "rate": (
        "delivery", "distribution", "transmission", "delivery charge", "delivery rate",
        "distribution rate", "delivery charges",
    ),
}  # fmt: skip
CODE_WORDS = frozenset(
    {"ending", "ends", "digits", "digit", "zip", "postal", "code", "number", "phone", "meter",
     "pin", "extension", "id", "confirmation", "reference"}
)  # fmt: skip
_THRESHOLDS = (
    ("at", "least"), ("minimum",), ("a", "minimum", "of"), ("minimum", "of"), ("more", "than"),
    ("less", "than"), ("over",), ("under",), ("up", "to"), ("at", "most"), ("above",),
    ("below",), ("no", "more", "than"), ("no", "less", "than"),
)  # fmt: skip
# Words a bare answer may carry besides its figure ("It's $219.86", "That's about $45").
_ANSWER_WORDS = frozenset(
    {"it's", "it", "is", "that's", "that", "was", "about", "exactly", "so", "well", "the",
     "its", "yes", "yeah", "right", "just", "comes", "to", "um", "uh", "total"}
)  # fmt: skip


# Words that name nothing: a clause of only these and a figure is a bare figure, which
# takes its topic from its sentence, its turn or the question ("I see $57.10, $8.42").
_FUNCTION_WORDS = frozenset(
    {
        *_ANSWER_WORDS, "a", "an", "and", "or", "but", "then", "also", "plus", "of", "on",
        "in", "at", "for", "with", "from", "by", "as", "i", "i'm", "i've", "we", "we've", "you",
        "you've", "your", "my", "our", "this", "these", "those", "there", "there's", "here",
        "here's", "now", "see", "saw", "have", "has", "had", "got", "show", "shows", "showing",
        "read", "reads", "say", "says", "are", "be", "been", "being", "were", "will", "would",
        "can", "could", "is", "just", "only", "even", "again", "too", "sorry", "okay", "ok",
        "so", "oh", "hmm", "please", "thanks", "thank", "let", "me", "tell", "looks", "like",
        "seems", "figure", "figures", "number", "numbers", "amount", "amounts", "records",
        "record", "file", "account", "note", "today", "currently", "actually", "maybe", "dollars",
        "dollar", "cents", "cent", "bucks", "$", "all", "some", "one", "two", "it'll", "that'll",
    }
)  # fmt: skip


def _numeric(word: str) -> bool:
    return word[:1].isdigit()


@dataclass(frozen=True, slots=True)
class Figure:
    """A value found in a turn: ``value`` is the most likely reading."""

    value: Any
    start: int
    end: int
    text: str
    readings: tuple[Any, ...] = ()
    marked: bool = True


@dataclass(frozen=True, slots=True)
class Bound:
    """A figure with the topics it is bound to, and how ("clause", "label", ...)."""

    figure: Figure
    topics: frozenset[str]
    clause: Clause
    via: str


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Topic phrases as word tuples, longest first, each with the topics it marks."""

    entries: tuple[tuple[tuple[str, ...], frozenset[str]], ...]
    first_words: frozenset[str] = field(default=frozenset())

    @classmethod
    def build(cls, topics: Mapping[str, Sequence[str]], other: Sequence[str] = ()) -> Lexicon:
        frozen = tuple((topic, tuple(phrases)) for topic, phrases in topics.items())
        return _lexicon(frozen, tuple(other))


@lru_cache(maxsize=512)
def _lexicon(
    topic_phrases: tuple[tuple[str, tuple[str, ...]], ...], other: tuple[str, ...]
) -> Lexicon:
    topics = dict(topic_phrases)
    # Built once per set of phrases (a task's checks), not once per call.
    table: dict[tuple[str, ...], set[str]] = {}
    for topic, phrases in topics.items():
        for phrase in phrases:
            words = stems(normalise(phrase).split())
            if words:
                table.setdefault(words, set()).add(topic)
    own_words = [
        {w for phrase in phrases for w in stems(normalise(phrase).split())}
        for phrases in topics.values()
    ]
    for phrase in other:
        words = stems(normalise(phrase).split())
        # "last payment" is the last payment's own topic when its words are the topic's.
        if not words or words in table or any(set(words) <= mine for mine in own_words):
            continue
        table[words] = {"~" + " ".join(words)}
    entries = tuple(sorted(((w, frozenset(t)) for w, t in table.items()), key=lambda e: -len(e[0])))
    return Lexicon(entries, frozenset(w[0] for w, _ in entries))


@dataclass(frozen=True, slots=True)
class _Occurrence:
    first: int
    last: int  # exclusive
    topics: frozenset[str]


@lru_cache(maxsize=16384)
def _stem(word: str) -> str:
    """A crude stem, so that "charging", "charged" and "charge" mark one topic."""
    if len(word) > 4:
        for suffix in ("ing", "ed", "es", "s", "e"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


def stems(words: Sequence[str]) -> tuple[str, ...]:
    return tuple(_stem(w) for w in words)


def occurrences(clause: Clause, lexicon: Lexicon) -> list[_Occurrence]:
    """Topic phrases in a clause, longest match first, left to right, not overlapping."""
    words = stems(clause.words)
    out: list[_Occurrence] = []
    i = 0
    while i < len(words):
        if words[i] in lexicon.first_words:
            for phrase, topics in lexicon.entries:
                size = len(phrase)
                if words[i : i + size] == phrase:
                    out.append(_Occurrence(i, i + size, topics))
                    i += size
                    break
            else:
                i += 1
            continue
        i += 1
    return out


def _undominated(found: list[_Occurrence]) -> frozenset[str]:
    """Topics present, less those present only through phrases another present topic
    also has and that topic has its own phrase here too."""
    present = frozenset().union(*(o.topics for o in found)) if found else frozenset()
    kept = set(present)
    for topic in present:
        mine = [o for o in found if topic in o.topics]
        for other in present - {topic}:
            if all(other in o.topics for o in mine) and any(
                other in o.topics and topic not in o.topics for o in found
            ):
                kept.discard(topic)
                break
    return frozenset(kept)


def _word_span(clause: Clause, figure: Figure) -> tuple[int, int] | None:
    first = last = None
    for k, token in enumerate(clause.tokens):
        if token.end > figure.start and token.start < figure.end:
            first = k if first is None else first
            last = k + 1
    return None if first is None or last is None else (first, last)


def _qualifier(words: tuple[str, ...], first: int) -> int | None:
    """Where a threshold word stands right before a figure ("at least $50"), if one does."""
    for phrase in _THRESHOLDS:
        start = first - len(phrase)
        if start >= 0 and words[start:first] == phrase:
            return start
    return None


def _code(words: tuple[str, ...], first: int, last: int) -> bool:
    """A code word stands within three words before the figure, or, for a lone digit,
    before the digits said one by one that lead to it ("the card ending one one one
    seven": the seven too; "ending one one one, seven dollars" still names an amount)."""
    if last - first == 1 and words[first] in SINGLE_DIGITS:
        while first > 0 and words[first - 1] in SINGLE_DIGITS:
            first -= 1
    return any(w in CODE_WORDS for w in words[max(0, first - 3) : first])


def bind(
    text: str,
    figures: Sequence[Figure],
    lexicon: Lexicon,
    asked: frozenset[str] = frozenset(),
    *,
    codes_excluded: bool = True,
    thresholds: bool = True,
    own_words: bool = True,
) -> list[Bound]:
    """Each figure of ``text`` (found by the caller) with the topics it is bound to.

    ``own_words=False`` ignores topic phrases inside the figure's own words (a rate's
    "cents per kWh"); ``thresholds`` reads "at least $50" as a threshold (money).
    """
    parts = clauses(text)
    placed: list[tuple[Figure, Clause, int, int]] = []
    for figure in figures:
        clause = next((c for c in parts if c.start <= figure.start < c.end + 1), None)
        if clause is None:
            continue
        span = _word_span(clause, figure)
        if span is None:
            continue
        if codes_excluded and _code(clause.words, *span):
            continue
        placed.append((figure, clause, *span))
    found = {c.index: occurrences(c, lexicon) for c in parts}
    topics_of = {i: _undominated(o) for i, o in found.items()}
    out: list[Bound] = []
    for figure, clause, first, last in placed:
        here = found[clause.index]
        if not own_words:  # "cents per kWh" is in every rate: it names a topic only alone
            here = [o for o in here if o.last <= first or o.first >= last] or here
        qualifier = _qualifier(clause.words, first) if thresholds else None
        if qualifier is not None:
            covering = [o for o in here if o.first < first and o.last > qualifier]
            topics = frozenset().union(*(o.topics for o in covering)) if covering else frozenset()
            out.append(Bound(figure, topics, clause, "threshold"))
            continue
        if here:
            out.append(Bound(figure, _nearest(here, first, last), clause, "clause"))
            continue
        rest = [w for k, w in enumerate(clause.words) if not first <= k < last]
        if not figure.marked and (any(w not in _ANSWER_WORDS for w in rest) or len(rest) > 3):
            continue  # an unmarked number amid other words: not heard as money
        before = clause.words[:first]  # "The season start is ...": a label comes first
        labels = [w for w in before if w not in _FUNCTION_WORDS and not _numeric(w)]
        if labels:
            # "The season start is December first": said about something this lexicon
            # does not name, so about none of its topics.
            out.append(Bound(figure, frozenset({"~" + " ".join(labels)}), clause, "label"))
            continue
        out.append(_inherited(figure, clause, parts, topics_of, asked))
    return out


def _nearest(here: list[_Occurrence], first: int, last: int) -> frozenset[str]:
    """The topics of the phrase nearest the figure; of those, the ones the clause does not
    hand to a more specific topic ("$Z overdue on your arrangement")."""

    def distance(o: _Occurrence) -> int:
        if o.last <= first:
            return first - o.last
        if o.first >= last:
            return o.first - last
        return 0

    best = min(distance(o) for o in here)
    candidates = frozenset().union(*(o.topics for o in here if distance(o) == best))
    specific = candidates & _undominated(here)
    return specific or candidates


def _inherited(
    figure: Figure,
    clause: Clause,
    parts: tuple[Clause, ...],
    topics_of: dict[int, frozenset[str]],
    asked: frozenset[str],
) -> Bound:
    same = [c for c in parts if c.sentence == clause.sentence]
    before = [c for c in same if c.index < clause.index and topics_of[c.index]]
    if before:
        return Bound(figure, topics_of[before[-1].index], clause, "label")
    after = [c for c in same if c.index > clause.index and topics_of[c.index]]
    if after:
        return Bound(figure, topics_of[after[0].index], clause, "sentence")
    turn = frozenset().union(*(topics_of[c.index] for c in parts if c.sentence != clause.sentence))
    if turn:
        return Bound(figure, turn, clause, "turn")
    return Bound(figure, asked, clause, "question")


def asked_topics(text: str, lexicon: Lexicon) -> frozenset[str]:
    """The topics of a caller's turn (the question an agent turn answers)."""
    found = [o for c in clauses(text) for o in occurrences(c, lexicon)]
    return _undominated(found)
