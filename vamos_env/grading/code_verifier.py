"""The code verifier: the task's checks (assertion 3) judged from the transcript by rules.

Values are found by ``vamos_env.speech.parse`` (money, dates, digit strings, counts,
emails, each with the characters it came from); this module adds the check semantics of
``envs/energy/tasks/schema.py``:

- ``say``: an agent turn inside the window states the value (within ``tolerance``) on the
  check's topic: one of ``topic_phrases`` is in the sentence holding the value, in the
  sentence before it in the same turn, or in the caller's turn the agent is answering
  (the last caller turn before it: "How much do I owe?" - "That's $219.86."). An email
  address needs no topic phrase: it cannot be mistaken for anything else. A count must
  also have the unit the topic names ("six payments" is not "six months"; list both unit
  words in ``topic_phrases`` to accept either). A check without a value passes when a
  topic phrase is said (not negated) in the window.
- ``confirm``: a caller turn inside the window agrees ("yes", "go ahead", ...) and does not
  refuse; background speech the agent received (``spurious``) never counts.
- ``called`` / ``not_called``: a successful call of ``tool`` inside the window.
- ``not_said``: no agent sentence inside the window claims a topic phrase (negated phrases
  such as "did not go through" and questions are not claims).

What the agent said is its turn's ``text``; for a turn cut by a barge-in, only the part
the caller heard (``heard``) counts, since the rest was never spoken.

What this verifier cannot judge is reported with ``passed=None`` and a reason, never
passed silently:

- a ``say`` check with neither a value nor topic phrases (nothing to look for);
- a date said relative to today ("in thirty days", "next month") on the topic when no
  calendar date matches: the parser resolves only calendar dates;
- a caller reply that both agrees and refuses ("Yes. Wait, no.") when no other reply in
  the window settles it.

Not covered (known limits, see docs/grading.md): paraphrased claims without any of the
topic phrases, sarcasm, amounts said as fractions ("two hundred and a half"), dates
without a month ("the tenth"), and agreement expressed only by tone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, Protocol

from vamos_env.envs.energy.tasks.schema import Check, Task
from vamos_env.grading.models import CheckResult, Evidence
from vamos_env.grading.speech_evidence import (
    agreement,
    claimed_phrase,
    relative_date,
    sentence_at,
    sentences,
)
from vamos_env.grading.timeline import Span, Timeline
from vamos_env.speech import (
    Mention,
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


class CheckVerifier(Protocol):
    """A backend that judges the task's checks over a call (the code rules, or a model)."""

    name: str

    def judge(self, task: Task, timeline: Timeline) -> list[CheckResult]: ...


def spoken(turn: Turn) -> str:
    """What the agent actually said in a turn: all of it, or what was heard before a cut."""
    if turn.cut and turn.heard is not None:
        return turn.heard
    return turn.text


def money_text(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100:,}.{cents % 100:02d}"


def show_value(check: Check) -> str:
    if check.value_type == "money" and isinstance(check.value, int):
        shown = money_text(check.value)
        return shown + (f" (± {money_text(check.tolerance)})" if check.tolerance else "")
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


class CodeVerifier:
    """Rule-based judge of ``say``/``confirm``/``called``/``not_called``/``not_said`` checks."""

    name = "code"

    def judge(self, task: Task, timeline: Timeline) -> list[CheckResult]:
        results: dict[str, CheckResult] = {}

        def evidence_turn(check_id: str) -> int | None:
            found = results.get(check_id)
            if found is None or found.passed is not True:
                return None
            turns = [e.turn for e in found.evidence if e.turn is not None]
            return min(turns) if turns else None

        for check in ordered_for_windows(task.checks):
            results[check.id] = self.judge_check(check, timeline, evidence_turn)
        return [results[c.id] for c in task.checks]

    def judge_check(
        self, check: Check, timeline: Timeline, evidence_turn: Callable[[str], int | None]
    ) -> CheckResult:
        span = timeline.window(check, evidence_turn)
        judge = {
            "say": self._say,
            "confirm": self._confirm,
            "called": self._called,
            "not_called": self._not_called,
            "not_said": self._not_said,
        }[check.kind]
        return judge(check, timeline, span)

    # --- say ---------------------------------------------------------------------------

    def _say(self, check: Check, timeline: Timeline, span: Span) -> CheckResult:
        def result(
            passed: bool | None, reason: str, ev: list[Evidence] | None = None
        ) -> CheckResult:
            return CheckResult(
                id=check.id, kind="say", passed=passed, evidence=ev or [], reason=reason
            )

        if check.value is None and not check.topic_phrases:
            return result(None, "cannot judge: the check has neither a value nor topic phrases")
        if not span.opened:
            return result(False, f"not said: {span.describe()}")
        inside = timeline.speech("agent", span)
        if check.value is None:
            for turn in inside:
                for sentence in sentences(spoken(turn)):
                    # "It was declined, would you like to try another card?" still says it.
                    phrase = claimed_phrase(
                        sentence.text, check.topic_phrases, questions_claim=True
                    )
                    if phrase is not None:
                        quote = sentence.text.strip()
                        return result(True, f"said {phrase!r} at turn {turn.index}",
                                      [Evidence(turn=turn.index, quote=quote)])  # fmt: skip
            return result(False, f"no agent sentence on {_topic(check)} in {span.describe()}")

        for turn in inside:
            for mention in self._on_topic(check, timeline, turn):
                return result(
                    True,
                    f"said {show_value(check)} at turn {turn.index} on {_topic(check)}",
                    [Evidence(turn=turn.index, quote=mention.text)],
                )
        return result(*self._say_failure(check, timeline, span, inside))

    def _say_failure(
        self, check: Check, timeline: Timeline, span: Span, inside: list[Turn]
    ) -> tuple[bool | None, str, list[Evidence]]:
        """Why a value was not found: said outside the window, off topic, a different value."""
        expected = show_value(check)
        outside = [
            t
            for t in timeline.speech("agent")
            if t.index not in span and self._on_topic(check, timeline, t)
        ]
        if outside:
            turn = outside[0]
            return (
                False,
                (
                    f"{expected} was said at turn {turn.index}, outside the window: "
                    f"{span.describe()}"
                ),
                [Evidence(turn=turn.index, quote=self._on_topic(check, timeline, turn)[0].text)],
            )
        others: list[tuple[int, Mention[Any]]] = []
        off_topic: list[tuple[int, Mention[Any]]] = []
        relative: tuple[int, str] | None = None
        for turn in inside:
            text = spoken(turn)
            asked = _question_before(timeline, turn)
            for mention in self._mentions(check, text):
                if self._matches(check, mention.value):
                    off_topic.append((turn.index, mention))
                elif self._topical(check, text, mention, asked):
                    others.append((turn.index, mention))
            if check.value_type == "date" and relative is None:
                for sentence in sentences(text):
                    said = relative_date(sentence.text)
                    if said and _topic_in(check, sentence.text):
                        relative = (turn.index, said)
        if relative is not None and not others:
            return (
                None,
                (
                    f"cannot judge: the agent gave the date relative to today ({relative[1]!r}, "
                    f"turn {relative[0]}); the parser resolves only calendar dates; "
                    f"expected {expected}"
                ),
                [Evidence(turn=relative[0], quote=relative[1])],
            )
        if others:
            shown = ", ".join(f"{m.text!r} (turn {i})" for i, m in others[:4])
            return (
                False,
                f"expected {expected} on {_topic(check)}; the agent said {shown}",
                [Evidence(turn=i, quote=m.text) for i, m in others[:4]],
            )
        if off_topic:
            i, m = off_topic[0]
            return (
                False,
                (f"{expected} was said at turn {i} ({m.text!r}) but not on {_topic(check)}"),
                [Evidence(turn=i, quote=m.text)],
            )
        return False, f"{expected} was not said in {span.describe()}", []

    def _mentions(self, check: Check, text: str) -> list[Mention[Any]]:
        kind = check.value_type
        if kind == "money":
            return list(find_money(text))
        if kind == "date" and isinstance(check.value, str):
            # A date said without a year is read in the expected date's year.
            year = date.fromisoformat(check.value).year
            return list(find_dates(text, default_year=year))
        if kind == "digits":
            return list(find_digit_strings(text))
        if kind == "email":
            return list(find_email(text))
        if kind == "count":
            units = self._count_units(check)
            return [m for m in find_counts(text) if not units or m.value.unit in units]
        if kind == "text" and check.value is not None:
            target = normalise(str(check.value))
            norm = normalise(text)
            if target and f" {target} " in f" {norm} ":
                wanted = str(check.value)
                start = max(text.lower().find(wanted.lower()), 0)
                quote = text[start : start + len(wanted)] or wanted
                return [Mention(wanted, start, start + len(wanted), quote)]
        return []

    def _matches(self, check: Check, value: Any) -> bool:
        expected = check.value
        kind = check.value_type
        if kind == "money" and isinstance(expected, int):
            return isinstance(value, int) and abs(value - expected) <= check.tolerance
        if kind == "date" and isinstance(expected, str) and isinstance(value, date):
            return abs((value - date.fromisoformat(expected)).days) <= check.tolerance
        if kind == "count":
            n = getattr(value, "n", value)
            return isinstance(n, int) and abs(n - int(str(expected))) <= check.tolerance
        if kind == "digits":
            wanted = str(expected)
            got = str(value)
            if "-" not in wanted:
                got = got.replace("-", "")
            return got == wanted or got.replace("-", "") == wanted.replace("-", "")
        if kind == "email":
            return str(value).lower() == str(expected).lower()
        return kind == "text"

    def _count_units(self, check: Check) -> set[str]:
        words = normalise(" ".join((check.topic, *check.topic_phrases))).split()
        return {_UNIT_OF_WORD[w] for w in words if w in _UNIT_OF_WORD}

    def _topical(self, check: Check, text: str, mention: Mention[Any], asked: str) -> bool:
        if not check.topic_phrases or check.value_type == "email":
            return True  # an email address is its own topic
        index, parts = sentence_at(text, mention.start)
        nearby = [parts[index].text] + ([parts[index - 1].text] if index > 0 else [])
        return any(_topic_in(check, part) for part in (*nearby, asked))

    def _on_topic(self, check: Check, timeline: Timeline, turn: Turn) -> list[Mention[Any]]:
        text = spoken(turn)
        asked = _question_before(timeline, turn)
        return [
            m
            for m in self._mentions(check, text)
            if self._matches(check, m.value) and self._topical(check, text, m, asked)
        ]

    # --- confirm ----------------------------------------------------------------------------

    def _confirm(self, check: Check, timeline: Timeline, span: Span) -> CheckResult:
        if not span.opened:
            return CheckResult(id=check.id, kind="confirm", passed=False,
                               reason=f"no confirmation: {span.describe()}")  # fmt: skip
        mixed: Turn | None = None
        refused: Turn | None = None
        for turn in timeline.speech("caller", span):
            if turn.spurious:
                continue
            said = agreement(turn.text, tuple(check.topic_phrases))
            if said == "agree":
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

    def _called(self, check: Check, timeline: Timeline, span: Span) -> CheckResult:
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

    def _not_called(self, check: Check, timeline: Timeline, span: Span) -> CheckResult:
        calls = self._calls(check, timeline, span) if span.opened else []
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

    def _not_said(self, check: Check, timeline: Timeline, span: Span) -> CheckResult:
        if span.opened:
            for turn in timeline.speech("agent", span):
                for sentence in sentences(spoken(turn)):
                    phrase = claimed_phrase(sentence.text, check.topic_phrases)
                    if phrase is not None:
                        return CheckResult(
                            id=check.id,
                            kind="not_said",
                            passed=False,
                            evidence=[Evidence(turn=turn.index, quote=sentence.text.strip())],
                            reason=f"the agent claimed {phrase!r} at turn {turn.index}",
                        )
        return CheckResult(
            id=check.id, kind="not_said", passed=True,
            reason=f"no claim on {_topic(check)} in {span.describe()}",
        )  # fmt: skip


def _question_before(timeline: Timeline, turn: Turn) -> str:
    """The caller's turn an agent turn answers: the last real caller turn before it."""
    for earlier in reversed(timeline.turns):
        if earlier.index >= turn.index:
            continue
        if earlier.speaker == "caller" and not earlier.spurious and earlier.tool_call is None:
            return earlier.text
    return ""


def _topic(check: Check) -> str:
    return f"topic {check.topic!r}" if check.topic else "the topic"


def _topic_in(check: Check, text: str) -> bool:
    if not check.topic_phrases:
        return True
    norm = f" {normalise(text)} "
    return any(f" {normalise(p)} " in norm for p in check.topic_phrases)
