"""The code verifier: the task's checks (assertion 3) judged from the transcript by rules.

It reads speech the way a careful human grader does. Values are found by
``vamos_env.speech`` (amounts with every reading the words allow, rates, dates, digit
strings, counts, emails, each with its characters); ``binding`` says which topic each
figure is said about, clause by clause; ``claims`` reads what a clause asserts, with its
polarity. On top of those, the check semantics of ``envs/energy/tasks/schema.py``:

- ``say`` with a value: an agent turn inside the window states the value (within
  ``tolerance``) bound to the check's topic. **Conflicts fail the check**: another
  figure bound to the same topic anywhere in the window (a wrong figure, one said before
  or after the right one, an amount whose most likely reading differs, a list of
  figures sprayed into a turn about the topic), or a claim that contradicts it ("nothing
  is past due" against a past-due amount): a grader cannot tell which one the caller
  should believe. Digit strings and emails have no conflicts (the declined card's
  digits are rightly said before the other card's). Rates (cents per kWh) are matched
  as decimals; ``tolerance`` counts hundredths of a cent.
- ``say`` without a value: a clause in the window states the check's proposition
  (``claims.PROPOSITIONS`` by topic; phrases otherwise) and none contradicts it.
- ``say`` with a text value: paperless "on"/"off" is the paperless proposition with that
  verdict; a supplier is named in a clause about supply, with no other supplier claimed;
  the main reason for a bill increase is claimed and no other reason is claimed as the
  main one ("not higher usage" claims nothing).
- ``confirm``: a caller turn inside the window agrees and does not refuse; background
  speech (``spurious``) never counts. When the window opens after a read-back check, the
  question the caller agreed to (the agent's words since the caller last spoke, and
  before that if the caller only asked something back) must itself state the read-back
  value: agreeing to "Shall I charge the card ending 0505?" is not consent to an amount
  said earlier.
- ``called`` / ``not_called``: a successful call of ``tool`` inside the window.
- ``not_said``: no agent clause inside the window states the proposition (negated
  claims and questions are not claims; hedges such as "seems to have gone through" are).

What an agent says about a request counts from the caller turn that raises it to the turn
that raises the next request (``Timeline.request_bounds``), inside the check's own window.
What the agent said is its turn's ``text``; for a turn cut by a barge-in, only the part
the caller heard (``heard``) counts, less a figure the cut broke off ("...of two
hundred"), which the caller cannot complete and so states nothing.

What this verifier cannot judge is reported with ``passed=None`` and a reason, never
passed silently: a ``say`` check with neither a value nor topic phrases; a date said
relative to today ("in thirty days") when no calendar date is on the topic; a caller
reply that both agrees and refuses ("Yes. Wait, no.") when nothing else settles it.
Known limits are listed in docs/grading.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from vamos_env import clock, speech
from vamos_env.envs.energy.tasks.schema import Check, Task
from vamos_env.grading import claims as claim_rules
from vamos_env.grading.binding import OTHER_TOPICS, Bound, Figure, Lexicon, asked_topics, bind
from vamos_env.grading.claims import Claim, Proposition
from vamos_env.grading.clauses import Clause, clauses, compile_forms
from vamos_env.grading.models import CheckResult, Evidence
from vamos_env.grading.speech_evidence import agreement, relative_date, sentences
from vamos_env.grading.timeline import Span, Timeline
from vamos_env.speech import (
    find_counts,
    find_dates,
    find_digit_strings,
    find_email,
    find_money,
    normalise,
)
from vamos_env.types import Turn

_UNIT_OF_WORD = {
    "payment": "payments", "payments": "payments", "instalment": "payments",
    "instalments": "payments", "installment": "payments", "installments": "payments",
    "month": "months", "months": "months", "monthly": "months", "day": "days", "days": "days",
    "week": "weeks", "weeks": "weeks", "year": "years", "years": "years",
    "kwh": "kwh", "kilowatt": "kwh", "kilowatts": "kwh",
}  # fmt: skip
# Value types where two different figures on one topic are a conflict.
_CONFLICTING_TYPES = frozenset({"money", "date", "count", "rate"})
_SPEECH_KINDS = frozenset({"say", "confirm", "not_said"})


class CheckVerifier(Protocol):
    """A backend that judges the task's checks over a call (the code rules, or a model)."""

    name: str

    def judge(self, task: Task, timeline: Timeline) -> list[CheckResult]: ...


# How a recogniser writes words the agent said (a duplex call's agent turns are Whisper's
# transcript of the agent's voice): read as the words they are.
_HEARD_AS = ((re.compile(r"\bpass(?:ed)? due\b(?! to\b)", re.IGNORECASE), "past due"),)


def spoken(turn: Turn) -> str:
    """What the agent actually said in a turn: all of it, or what was heard before a cut.

    A figure the cut broke off ("Your payment of two hundred") is not part of it: the
    caller cannot know how it went on, so it states nothing, right or wrong. A
    recogniser's spelling of a phrase ("passed due", "pass due") is read as the phrase.
    """
    text = turn.text
    if turn.cut and turn.heard is not None:
        text = speech.without_unfinished_figure(turn.heard)
    if "ass" in text:  # the only spellings read so far; the check keeps this path cheap
        for pattern, words in _HEARD_AS:
            text = pattern.sub(words, text)
    return text


def money_text(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100:,}.{cents % 100:02d}"


def show_value(check: Check) -> str:
    if check.value_type == "money" and isinstance(check.value, int):
        shown = money_text(check.value)
        return shown + (f" (± {money_text(check.tolerance)})" if check.tolerance else "")
    if check.value_type == "rate":
        shown = f"{check.value} cents per kWh"
        return shown + (f" (± {check.tolerance / 100} cents)" if check.tolerance else "")
    if check.tolerance:
        return f"{check.value!r} (± {check.tolerance})"
    return repr(check.value)


def ordered_for_windows(checks: Sequence[Check]) -> list[Check]:
    """Checks ordered so that a check comes after the check that opens its window."""
    by_id = {c.id: c for c in checks}
    done: list[Check] = []
    seen: set[str] = set()

    def visit(check: Check, path: tuple[str, ...]) -> None:
        if check.id in seen:
            return
        opener = check.window.after_check
        if opener is not None and opener in by_id and opener not in path:
            visit(by_id[opener], (*path, check.id))
        seen.add(check.id)
        done.append(check)

    for check in checks:
        visit(check, ())
    return done


# --- figures ----------------------------------------------------------------------------------


def money_figures(text: str) -> list[Figure]:
    """Every stretch a listener could take as money, most likely reading first."""
    find_amounts = getattr(speech, "find_amounts", None)
    if find_amounts is None:  # the parser before amounts carried their readings
        return [Figure(m.value, m.start, m.end, m.text, (m.value,)) for m in find_money(text)]
    rates = rate_figures(text)
    out: list[Figure] = []
    for a in find_amounts(text):
        if any(r.start < a.end and a.start < r.end for r in rates):
            continue  # "12.19 cents per kWh" is a price, not an amount
        figure = Figure(a.readings[0], a.start, a.end, a.text, tuple(a.readings), a.marked)
        if out and _cents_after_dollars(text, out[-1], figure):
            # "two hundred fifteen dollars, twenty-eight cents" is one amount to a listener
            dollars = out.pop()
            figure = Figure(
                dollars.value + figure.value,
                dollars.start,
                figure.end,
                text[dollars.start : figure.end],
                (dollars.value + figure.value,),
                True,
            )
        out.append(figure)
    return out


_DOLLARS_THEN_CENTS = re.compile(r"\s*(?:,|and|,\s*and)?\s*$")


def _cents_after_dollars(text: str, dollars: Figure, cents: Figure) -> bool:
    said = normalise(dollars.text).split()
    if not said or said[-1] not in ("dollars", "dollar", "bucks") or dollars.value % 100:
        return False
    if not normalise(cents.text).endswith(("cents", "cent")) or not 0 < cents.value < 100:
        return False
    return bool(_DOLLARS_THEN_CENTS.match(text[dollars.end : cents.start]))


def rate_figures(text: str) -> list[Figure]:
    find_rates = getattr(speech, "find_rates", None)
    if find_rates is None:
        return []
    return [Figure(m.value, m.start, m.end, m.text, (m.value,)) for m in find_rates(text)]


def _count_units(check: Check) -> set[str]:
    words = normalise(" ".join((check.topic, *check.topic_phrases))).split()
    return {_UNIT_OF_WORD[w] for w in words if w in _UNIT_OF_WORD}


def figures(check: Check, text: str) -> list[Figure]:
    kind = check.value_type
    if kind == "money":
        return money_figures(text)
    if kind == "rate":
        return rate_figures(text)
    if kind == "date":
        year = (
            date.fromisoformat(check.value).year
            if isinstance(check.value, str)
            else clock.TODAY.year
        )
        return [
            Figure(m.value, m.start, m.end, m.text) for m in find_dates(text, default_year=year)
        ]
    if kind == "digits":
        return [Figure(m.value, m.start, m.end, m.text) for m in find_digit_strings(text)]
    if kind == "email":
        return [Figure(m.value, m.start, m.end, m.text) for m in find_email(text)]
    if kind == "count":
        units = _count_units(check)
        return [
            Figure(m.value.n, m.start, m.end, m.text)
            for m in find_counts(text)
            if not units or m.value.unit in units
        ]
    return []


def matches(check: Check, value: Any) -> bool:
    expected = check.value
    kind = check.value_type
    if kind == "money" and isinstance(expected, int):
        return isinstance(value, int) and abs(value - expected) <= check.tolerance
    if kind == "date" and isinstance(expected, str) and isinstance(value, date):
        return abs((value - date.fromisoformat(expected)).days) <= check.tolerance
    if kind == "count":
        return isinstance(value, int) and abs(value - int(str(expected))) <= check.tolerance
    if kind == "rate":
        try:
            price = Decimal(str(expected))
        except InvalidOperation:
            return False
        return isinstance(value, Decimal) and abs(value - price) * 100 <= check.tolerance
    if kind == "digits":
        wanted = str(expected)
        got = str(value)
        if "-" not in wanted:
            got = got.replace("-", "")
        return got == wanted or got.replace("-", "") == wanted.replace("-", "")
    if kind == "email":
        return str(value).lower() == str(expected).lower()
    return False


def _current(check: Check) -> Check:
    """A check from a task file written before rates had a type: a "text" value that is a
    price per kWh on a rate topic is judged as the rate it is."""
    if check.value_type == "text" and "rate" in check.topic.lower():
        try:
            Decimal(str(check.value))
        except InvalidOperation:
            return check
        return check.model_copy(update={"value_type": "rate"})
    return check


def _topic_key(check: Check) -> str:
    return check.topic or check.id


# --- one call as the verifier reads it ---------------------------------------------------------


@dataclass
class _Reading:
    """A call read once for all of a task's checks: lexicons and bindings are shared."""

    task: Task | None
    timeline: Timeline
    lexicons: dict[str, Lexicon] = field(default_factory=dict)
    bindings: dict[tuple[int, str, str], list[Bound]] = field(default_factory=dict)

    def checks(self) -> Sequence[Check]:
        return self.task.checks if self.task is not None else ()

    def lexicon(self, check: Check) -> Lexicon:
        kind = check.value_type or ""
        if kind not in self.lexicons:
            topics: dict[str, list[str]] = {}
            for other in (*self.checks(), check):
                if other.kind == "say" and other.value_type == kind:
                    topics.setdefault(_topic_key(other), []).extend(other.topic_phrases)
            self.lexicons[kind] = Lexicon.build(topics, OTHER_TOPICS.get(kind, ()))
        return self.lexicons[kind]

    def span(self, check: Check, evidence_turn: Callable[[str], int | None]) -> Span:
        span = self.timeline.window(check, evidence_turn)
        if self.task is None or check.kind not in _SPEECH_KINDS:
            return span
        start, end, opened, closed = self.timeline.request_bounds(self.task, check.request_index)
        return span.within(start, end, opened, closed)

    def bound(self, check: Check, turn: Turn) -> list[Bound]:
        """The figures of ``check``'s kind in an agent turn, with their topics."""
        variant = str(check.value)[:4] if check.value_type == "date" else ""
        if check.value_type == "count":
            variant = ",".join(sorted(_count_units(check)))
        key = (turn.index, check.value_type or "", variant)
        if key not in self.bindings:
            text = spoken(turn)
            lexicon = self.lexicon(check)
            asked = asked_topics(question_before(self.timeline, turn), lexicon)
            self.bindings[key] = bind(
                text,
                figures(check, text),
                lexicon,
                asked,
                codes_excluded=check.value_type in ("money", "date", "count", "rate"),
                thresholds=check.value_type == "money",
                own_words=check.value_type != "rate",
            )
        return self.bindings[key]

    def on_topic(self, check: Check, turn: Turn) -> list[Bound]:
        if check.value_type == "email" or not check.topic_phrases:
            return [b for b in self.bound(check, turn)]
        key = _topic_key(check)
        return [b for b in self.bound(check, turn) if key in b.topics]

    def agent_turns(self, span: Span | None = None) -> list[Turn]:
        return [t for t in self.timeline.speech("agent", span) if spoken(t).strip()]


def question_before(timeline: Timeline, turn: Turn) -> str:
    """The caller's turn an agent turn answers: the last real caller turn before it."""
    for earlier in reversed(timeline.turns):
        if earlier.index >= turn.index:
            continue
        if earlier.speaker == "caller" and not earlier.spurious and earlier.tool_call is None:
            return earlier.text
    return ""


def proposition(check: Check) -> Proposition | None:
    return claim_rules.proposition_for(check.topic)


def _stated(check: Check, text: str) -> tuple[list[Claim], list[Claim]]:
    """Clauses of ``text`` that state the check's proposition, and those that contradict it."""
    rule = proposition(check)
    if check.value_type == "text" and check.topic in claim_rules.TEXT_VALUE_PREDICATES:
        name, verdicts = claim_rules.TEXT_VALUE_PREDICATES[check.topic]
        holds = verdicts.get(str(check.value).lower())
        if holds is None:
            return [], []
        rule = Proposition(check.topic, ((name, holds),))
    if rule is None:
        said = [c for c in claim_rules.phrase_claims(text, tuple(check.topic_phrases)) if c.holds]
        return said, []
    return claim_rules.found(text, rule.states), claim_rules.found(text, rule.opposites)


class CodeVerifier:
    """Rule-based judge of ``say``/``confirm``/``called``/``not_called``/``not_said`` checks."""

    name = "code"

    def judge(self, task: Task, timeline: Timeline) -> list[CheckResult]:
        results: dict[str, CheckResult] = {}
        reading = _Reading(task, timeline)

        def evidence_turn(check_id: str) -> int | None:
            found = results.get(check_id)
            if found is None or found.passed is not True:
                return None
            turns = [e.turn for e in found.evidence if e.turn is not None]
            return min(turns) if turns else None

        for check in ordered_for_windows(task.checks):
            results[check.id] = self.judge_check(check, timeline, evidence_turn, reading=reading)
        return [results[c.id] for c in task.checks]

    def judge_check(
        self,
        check: Check,
        timeline: Timeline,
        evidence_turn: Callable[[str], int | None],
        *,
        reading: _Reading | None = None,
    ) -> CheckResult:
        reading = reading or _Reading(None, timeline)
        check = _current(check)
        span = reading.span(check, evidence_turn)
        judge = {
            "say": self._say,
            "confirm": self._confirm,
            "called": self._called,
            "not_called": self._not_called,
            "not_said": self._not_said,
        }[check.kind]
        return judge(check, reading, span)

    # --- say ---------------------------------------------------------------------------

    def _say(self, check: Check, reading: _Reading, span: Span) -> CheckResult:
        def result(
            passed: bool | None, reason: str, ev: list[Evidence] | None = None
        ) -> CheckResult:
            return CheckResult(
                id=check.id, kind="say", passed=passed, evidence=ev or [], reason=reason
            )

        if check.value is None and not check.topic_phrases and proposition(check) is None:
            return result(None, "cannot judge: the check has neither a value nor topic phrases")
        if not span.opened:
            return result(False, f"not said: {span.describe()}")
        inside = reading.agent_turns(span)
        if check.value is None or check.value_type == "text":
            if check.value_type == "text" and check.topic not in claim_rules.TEXT_VALUE_PREDICATES:
                judged = self._text_value(check, reading, inside, span)
            else:
                judged = self._proposition(check, inside, span)
            return result(*judged)
        return result(*self._figure(check, reading, span, inside))

    def _proposition(
        self, check: Check, inside: list[Turn], span: Span
    ) -> tuple[bool, str, list[Evidence]]:
        said: list[tuple[int, Claim]] = []
        against: list[tuple[int, Claim]] = []
        for turn in inside:
            states, contradicts = _stated(check, spoken(turn))
            said += [(turn.index, c) for c in states]
            against += [(turn.index, c) for c in contradicts]
        if said and against:
            (i, first), (j, other) = said[0], against[0]
            return (
                False,
                (
                    f"conflicting claims on {_topic(check)}: {first.quote!r} (turn {i}) and "
                    f"{other.quote!r} (turn {j})"
                ),
                [Evidence(turn=i, quote=first.quote), Evidence(turn=j, quote=other.quote)],
            )
        if said:
            i, claim = said[0]
            return (
                True,
                f"stated {_topic(check)} at turn {i} ({claim.said!r})",
                [Evidence(turn=i, quote=claim.quote)],
            )
        if against:
            j, other = against[0]
            return (
                False,
                f"the agent said the opposite of {_topic(check)} at turn {j}: {other.quote!r}",
                [Evidence(turn=j, quote=other.quote)],
            )
        return False, f"no agent clause states {_topic(check)} in {span.describe()}", []

    def _figure(
        self, check: Check, reading: _Reading, span: Span, inside: list[Turn]
    ) -> tuple[bool | None, str, list[Evidence]]:
        expected = show_value(check)
        hits: list[tuple[int, Bound]] = []
        wrong: list[tuple[int, Bound]] = []
        for turn in inside:
            for bound in reading.on_topic(check, turn):
                (hits if matches(check, bound.figure.value) else wrong).append((turn.index, bound))
        strict = check.value_type in _CONFLICTING_TYPES and bool(check.topic_phrases)
        rule = proposition(check)
        against: list[tuple[int, Claim]] = []
        if rule is not None and rule.opposites:
            for turn in inside:
                against += [
                    (turn.index, c) for c in claim_rules.found(spoken(turn), rule.opposites)
                ]
        if hits and ((strict and wrong) or against):
            i, hit = hits[0]
            others = [(j, b.figure.text) for j, b in wrong[:3]] + [(j, c.quote) for j, c in against]
            shown = ", ".join(f"{text!r} (turn {j})" for j, text in others)
            return (
                False,
                (
                    f"{expected} was said at turn {i} on {_topic(check)}, but so was {shown}: "
                    "the caller cannot tell which to believe"
                ),
                [Evidence(turn=i, quote=hit.figure.text)]
                + [Evidence(turn=j, quote=text) for j, text in others],
            )
        if hits:
            i, hit = hits[0]
            return (
                True,
                f"said {show_value(check)} at turn {i} on {_topic(check)}",
                [Evidence(turn=i, quote=hit.figure.text)],
            )
        return self._figure_missing(check, reading, span, inside, wrong, against)

    def _figure_missing(
        self,
        check: Check,
        reading: _Reading,
        span: Span,
        inside: list[Turn],
        wrong: list[tuple[int, Bound]],
        against: list[tuple[int, Claim]],
    ) -> tuple[bool | None, str, list[Evidence]]:
        """Why a value was not found: outside the window, off topic, another value, relative."""
        expected = show_value(check)
        for turn in reading.agent_turns():
            if turn.index in span:
                continue
            found = [b for b in reading.on_topic(check, turn) if matches(check, b.figure.value)]
            if found:
                return (
                    False,
                    f"{expected} was said at turn {turn.index}, outside the window: "
                    f"{span.describe()}",
                    [Evidence(turn=turn.index, quote=found[0].figure.text)],
                )
        if check.value_type == "date" and not wrong:
            for turn in inside:
                for sentence in sentences(spoken(turn)):
                    said = relative_date(sentence.text)
                    if said and _topic_in(check, sentence.text):
                        return (
                            None,
                            (
                                f"cannot judge: the agent gave the date relative to today "
                                f"({said!r}, turn {turn.index}); the parser resolves only "
                                f"calendar dates; expected {expected}"
                            ),
                            [Evidence(turn=turn.index, quote=said)],
                        )
        if wrong or against:
            others = [(j, b.figure.text) for j, b in wrong[:4]] + [(j, c.quote) for j, c in against]
            shown = ", ".join(f"{text!r} (turn {j})" for j, text in others)
            return (
                False,
                f"expected {expected} on {_topic(check)}; the agent said {shown}",
                [Evidence(turn=j, quote=text) for j, text in others],
            )
        for turn in inside:
            off = [
                b
                for b in reading.bound(check, turn)
                if matches(check, b.figure.value) and _topic_key(check) not in b.topics
            ]
            if off:
                return (
                    False,
                    f"{expected} was said at turn {turn.index} ({off[0].figure.text!r}) but not "
                    f"on {_topic(check)}",
                    [Evidence(turn=turn.index, quote=off[0].figure.text)],
                )
        return False, f"{expected} was not said in {span.describe()}", []

    def _text_value(
        self, check: Check, reading: _Reading, inside: list[Turn], span: Span
    ) -> tuple[bool, str, list[Evidence]]:
        topic = check.topic.lower()
        if "reason" in topic:
            return _reason(check, inside, span)
        return _named(check, reading, inside, span)

    def states_value(self, check: Check, reading: _Reading, turn: Turn) -> bool:
        """Whether an agent turn states a read-back check's value on its topic."""
        if check.value is None:
            return bool(_stated(check, spoken(turn))[0])
        return any(matches(check, b.figure.value) for b in reading.on_topic(check, turn))

    # --- confirm ----------------------------------------------------------------------------

    def _confirm(self, check: Check, reading: _Reading, span: Span) -> CheckResult:
        if not span.opened:
            return CheckResult(id=check.id, kind="confirm", passed=False,
                               reason=f"no confirmation: {span.describe()}")  # fmt: skip
        timeline = reading.timeline
        readback = next(
            (c for c in reading.checks() if c.id == check.window.after_check and c.kind == "say"),
            None,
        )
        mixed: Turn | None = None
        refused: Turn | None = None
        unstated: Turn | None = None
        for turn in timeline.speech("caller", span):
            if turn.spurious:
                continue
            said = agreement(turn.text, tuple(check.topic_phrases))
            if said == "agree":
                if readback is not None and not any(
                    self.states_value(readback, reading, asked)
                    for asked in consent_question(timeline, turn)
                ):
                    unstated = unstated or turn
                    continue
                return CheckResult(
                    id=check.id,
                    kind="confirm",
                    passed=True,
                    evidence=[Evidence(turn=turn.index, quote=turn.text)],
                    reason=f"the caller agreed at turn {turn.index}",
                )
            if said == "mixed" and mixed is None:
                mixed = turn
            if said == "refuse" and refused is None:
                refused = turn
        if mixed is not None:
            return CheckResult(
                id=check.id,
                kind="confirm",
                passed=None,
                evidence=[Evidence(turn=mixed.index, quote=mixed.text)],
                reason=f"cannot judge: the reply at turn {mixed.index} both agrees and refuses",
            )
        if unstated is not None and readback is not None:
            return CheckResult(
                id=check.id,
                kind="confirm",
                passed=False,
                evidence=[Evidence(turn=unstated.index, quote=unstated.text)],
                reason=(
                    f"the caller agreed at turn {unstated.index} to a question that did not "
                    f"state {show_value(readback) if readback.value is not None else 'it'} "
                    f"on {_topic(readback)}"
                ),
            )
        ev = [Evidence(turn=refused.index, quote=refused.text)] if refused else []
        return CheckResult(
            id=check.id,
            kind="confirm",
            passed=False,
            evidence=ev,
            reason=f"the caller did not agree in {span.describe()}"
            + (f" (refused at turn {refused.index})" if refused else ""),
        )

    # --- tools ------------------------------------------------------------------------------

    def _calls(self, check: Check, timeline: Timeline, span: Span) -> list[Any]:
        return [
            e for e in timeline.events if e.name == check.tool and e.succeeded and e.turn in span
        ]

    def _called(self, check: Check, reading: _Reading, span: Span) -> CheckResult:
        timeline = reading.timeline
        calls = self._calls(check, timeline, span)
        if calls:
            first = calls[0]
            return CheckResult(
                id=check.id,
                kind="called",
                passed=True,
                evidence=[Evidence(turn=first.turn, call_id=first.call_id)],
                reason=f"{check.tool} succeeded at turn {first.turn}",
            )
        anywhere = [e for e in timeline.events if e.name == check.tool and e.succeeded]
        reason = f"no successful {check.tool} in {span.describe()}"
        if anywhere:
            reason += f"; it succeeded at turn {anywhere[0].turn}, outside the window"
        return CheckResult(
            id=check.id,
            kind="called",
            passed=False,
            evidence=[Evidence(turn=e.turn, call_id=e.call_id) for e in anywhere[:1]],
            reason=reason,
        )

    def _not_called(self, check: Check, reading: _Reading, span: Span) -> CheckResult:
        calls = self._calls(check, reading.timeline, span) if span.opened else []
        if not calls:
            return CheckResult(
                id=check.id, kind="not_called", passed=True,
                reason=f"no successful {check.tool} in {span.describe()}",
            )  # fmt: skip
        return CheckResult(
            id=check.id,
            kind="not_called",
            passed=False,
            evidence=[Evidence(turn=e.turn, call_id=e.call_id) for e in calls],
            reason=f"{check.tool} succeeded at turn {calls[0].turn} ({calls[0].call_id})",
        )

    # --- not_said -----------------------------------------------------------------------------

    def _not_said(self, check: Check, reading: _Reading, span: Span) -> CheckResult:
        if span.opened:
            for turn in reading.agent_turns(span):
                said = _stated(check, spoken(turn))[0]
                if said:
                    return CheckResult(
                        id=check.id,
                        kind="not_said",
                        passed=False,
                        evidence=[Evidence(turn=turn.index, quote=said[0].quote)],
                        reason=f"the agent claimed {said[0].said!r} at turn {turn.index}",
                    )
        return CheckResult(
            id=check.id, kind="not_said", passed=True,
            reason=f"no claim on {_topic(check)} in {span.describe()}",
        )  # fmt: skip


def consent_question(timeline: Timeline, agreed: Turn) -> list[Turn]:
    """The agent's words the caller agreed to: since the caller last spoke, and further
    back while the caller's turns in between only asked something back ("Why?") or
    answered nothing ("Hmm.")."""
    out: list[Turn] = []
    for turn in reversed(timeline.turns):
        if turn.index >= agreed.index or turn.tool_call is not None or turn.tool_result is not None:
            continue
        if turn.speaker == "agent":
            out.append(turn)
        elif turn.speaker == "caller" and not turn.spurious:
            if _asks_back(turn.text):
                continue
            break
    return out


_ASKING = compile_forms(
    (
        r"why|where|how|what|who|says who|source|prove it|keep it short|get to the point|stop"
        r"|short version|shorter|too long",
    )
)


def _asks_back(text: str) -> bool:
    """A caller turn that leaves the agent's question open: a short challenge ("Why?",
    "Short version."), or a filler ("Hmm."); a question of its own closes it."""
    words = normalise(text)
    size = len(words.split())
    if _ASKING.match(words) and size <= 6:
        return True
    return agreement(text) == "none" and size <= 3 and not text.rstrip().endswith("?")


# --- text values: the supplier, the main reason -----------------------------------------------

_SUPPLY = compile_forms(
    (
        r"suppl\w*", r"generat\w*", r"buy (?:your )?(?:electricity|power|energy) from",
        r"comes? from", r"provided by", r"provider", r"(?:you're|you are) with",
        r"price to compare", r"default service",
    )
)  # fmt: skip
_DELIVERY = compile_forms((r"deliver\w*", r"distribut\w*", r"wires", r"transmission"))
_OTHER_SUPPLIER = compile_forms(
    (r"(?:retail|third party|alternative|competitive|independent|another) (?:electricity )?"
     r"(?:supplier|supply|company|provider)",)
)  # fmt: skip


def _named(
    check: Check, reading: _Reading, inside: list[Turn], span: Span
) -> tuple[bool, str, list[Evidence]]:
    """A name (the supplier) said in a clause about it, with no other one claimed there."""
    value = normalise(str(check.value))
    default = "default service" in value
    aliases = {value}
    if default:
        aliases |= {"default service", "acme default service", "acme energy default service"}
    elif value.split() and len(value.split()[0]) >= 5:
        aliases.add(value.split()[0])
    own = compile_forms(tuple(sorted((_sounded(a) for a in aliases), key=len, reverse=True)))
    # The default service is also named by its provider, in a clause about supply.
    provider = compile_forms((r"acme(?: energy)?",)) if default else None
    rivals = (r"default service", r"acme(?: energy)?") if not default else ()
    rival = compile_forms(rivals) if rivals else None
    hits: list[tuple[int, Clause]] = []
    conflicts: list[tuple[int, Clause]] = []
    for turn in inside:
        text = spoken(turn)
        asked = bool(_SUPPLY.search(normalise(question_before(reading.timeline, turn))))
        parts = clauses(text)
        for clause in parts:
            if clause.question:
                continue
            joined = clause.joined()
            sentence = " ".join(c.joined() for c in parts if c.sentence == clause.sentence)
            about_supply = bool(_SUPPLY.search(joined)) or (
                not _DELIVERY.search(joined) and (bool(_SUPPLY.search(sentence)) or asked)
            )
            named = own.search(joined)
            if named is None and provider is not None and _SUPPLY.search(joined):
                named = None if _DELIVERY.search(joined) else provider.search(joined)
            if named is not None and about_supply:
                negated = clause.negations_before(clause.word_at(named.start())) % 2 == 1
                (conflicts if negated else hits).append((turn.index, clause))
                continue
            if not about_supply or not _SUPPLY.search(joined):
                continue
            other = rival.search(joined) if rival is not None else None
            if other is None and default:
                other = _OTHER_SUPPLIER.search(joined)
            if (
                other is not None
                and clause.negations_before(clause.word_at(other.start())) % 2 == 0
            ):
                conflicts.append((turn.index, clause))
    if hits and not conflicts:
        i, clause = hits[0]
        return True, f"named {check.value!r} at turn {i}", [Evidence(turn=i, quote=clause.text)]
    if conflicts:
        shown = ", ".join(f"{c.text!r} (turn {i})" for i, c in conflicts[:3])
        return (
            False,
            f"expected {check.value!r} on {_topic(check)}; the agent also said {shown}",
            [Evidence(turn=i, quote=c.text) for i, c in conflicts[:3]],
        )
    return False, f"{check.value!r} was not named on {_topic(check)} in {span.describe()}", []


def _escape(phrase: str) -> str:
    return re.escape(phrase)


def _sounded(name: str) -> str:
    """A pattern for a proper name as a listener hears it: its letters in order, a doubled
    letter said as a single one and back ("Quilstone" for Quillstone), and the spacing and
    hyphens between them free ("Quill Stone", "Quillstone-Energy"). Spelling is not
    audible: the grader's ear writes a name it hears in whichever of these ways its
    model prefers, and an agent writing it so in text names the same supplier."""
    letters = [c for c in name if c.isalnum()]
    parts = []
    for i, c in enumerate(letters):
        if i and c == letters[i - 1]:
            continue  # a doubled letter: the run below covers it
        parts.append(f"{re.escape(c)}{{1,2}}")
    return r"[\s-]?".join(parts)


# The largest part of a bill's increase, by the name a check gives it.
REASONS: dict[str, tuple[str, ...]] = {
    "usage": (
        r"(?:higher |more |increased |greater |bigger |extra )?(?:usage|consumption)",
        r"used more|using more|use more|you used",
        r"(?:more|extra) (?:electricity|energy|power|kilowatt hours?|kwh)",
        r"kilowatt hours? used|kwh used",
    ),
    "price": (
        r"(?:higher |increased |new )?(?:price|prices|rate|rates|tariff)(?: per (?:kilowatt "
        r"hours?|kwh))?",
        r"price to compare|cents per (?:kilowatt hours?|kwh)",
        r"(?:costs?|charge) per (?:kilowatt hours?|kwh)",
    ),
    "billing period length": (
        r"(?:longer )?billing (?:period|cycle)(?: length)?",
        r"(?:more|extra|additional) days|longer (?:period|cycle|bill)",
        r"(?:period|cycle) (?:was |is )?longer",
    ),
    "fixed charges and taxes": (
        r"tax|taxes|fixed charges?|customer charges?|service charges?|fees",
    ),
}
_MAIN = compile_forms(
    (
        r"main(?:ly)?", r"most(?:ly)?", r"largely", r"primarily", r"chiefly", r"principally",
        r"larg(?:est|er) (?:part|share|reason|factor|driver|piece)", r"biggest", r"because",
        r"due to", r"driven by", r"caused by", r"comes? (?:down )?to", r"reason", r"thanks to",
    )
)  # fmt: skip
_MINOR = compile_forms(
    (r"also", r"partly", r"a (?:little|bit)", r"slightly", r"somewhat", r"small(?:er)?", r"minor",
     r"too", r"as well")
)  # fmt: skip


def _reason(check: Check, inside: list[Turn], span: Span) -> tuple[bool, str, list[Evidence]]:
    """The main reason claimed (not negated), and no other reason claimed as the main one."""
    expected = str(check.value).lower()
    extra = tuple(_escape(normalise(p)) for p in check.topic_phrases if normalise(p))
    groups = {name: forms + (extra if name == expected else ()) for name, forms in REASONS.items()}
    if expected not in groups:
        groups[expected] = extra or (_escape(normalise(expected)),)
    names = list(groups)
    pattern = compile_forms(tuple(f"(?P<r{k}>{'|'.join(groups[n])})" for k, n in enumerate(names)))
    said: list[tuple[int, Clause, bool]] = []
    rivals: list[tuple[int, Clause]] = []
    negated: list[tuple[int, Clause]] = []
    for turn in inside:
        parts = clauses(spoken(turn))
        for clause in parts:
            if clause.question:
                continue
            joined = clause.joined()
            earlier = " ".join(
                c.joined()
                for c in parts
                if c.sentence == clause.sentence and c.index < clause.index
            )
            main = (
                bool(_MAIN.search(joined)) or bool(_MAIN.search(earlier))
            ) and not _MINOR.search(joined)
            for match in pattern.finditer(joined):
                name = names[int(next(k for k, v in match.groupdict().items() if v)[1:])]
                odd = clause.negations_before(clause.word_at(match.start())) % 2 == 1
                if name == expected:
                    (negated if odd else []).append((turn.index, clause))
                    if not odd:
                        said.append((turn.index, clause, main))
                elif main and not odd:
                    rivals.append((turn.index, clause))
    if said and not rivals and not negated:
        i, clause, _ = said[0]
        return (
            True,
            f"named {expected!r} as the reason at turn {i}",
            [Evidence(turn=i, quote=clause.text)],
        )
    if rivals or negated:
        bad = (negated + rivals)[:3]
        shown = ", ".join(f"{c.text!r} (turn {i})" for i, c in bad)
        return (
            False,
            f"expected {expected!r} as the main reason; the agent said {shown}",
            [Evidence(turn=i, quote=c.text) for i, c in bad],
        )
    return False, f"{expected!r} was not given as the reason in {span.describe()}", []


def _topic(check: Check) -> str:
    return f"topic {check.topic!r}" if check.topic else "the topic"


def _topic_in(check: Check, text: str) -> bool:
    if not check.topic_phrases:
        return True
    norm = f" {normalise(text)} "
    return any(f" {normalise(p)} " in norm for p in check.topic_phrases)
