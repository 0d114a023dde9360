"""A transcript as the grader reads it: tool events in order, the verification point, windows.

Every verifier (code or model) and every assertion reads the call through one
``Timeline``, so they agree on what "after the quote" or "before verification" means.

Tool turns: a turn with a ``tool_call`` usually carries its ``tool_result`` too; a result
in a later turn is paired with its call by ``call_id``. A tool's outcome is ``success``
when its result has no ``error`` (for ``verify_caller``: when the status is
``verified``), ``failure`` otherwise; a successful call that changed nothing
(``"changed": false``) is neither as a window's event.

Windows (``Window`` of a check): evidence counts in turns strictly after the opening
event (the first matching call of ``after_tool``, or the first evidence of
``after_check``) and strictly before the closing event (the first matching call of
``before_tool``). An opening event that never happened leaves the window closed; a
closing event that never happened leaves it open to the end of the call.

Requests: ``raised(task)`` finds the caller turn that raises each request (the turn
holding the request's words, ``says`` or ``rephrase``, as the scripted caller says them
inside its persona's frame; failing that, the turn sharing most of their words, at
least three and 60%). The code verifier counts what the agent says about a request only
after verification, from the turn that raises it to the turn that raises the next one: a
bill total said in a payment confirmation before the caller asked about the bill does
not answer the bill question. A request whose raising is not found keeps the window its
check names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vamos_env.envs.energy.tasks.schema import Check, Task
from vamos_env.speech import normalise
from vamos_env.types import Transcript, Turn

# Words too common to tell one request from another.
_COMMON = frozenset(
    {"about", "after", "again", "also", "been", "bill", "bills", "could", "does", "from",
     "have", "just", "know", "like", "make", "much", "please", "that", "than", "their",
     "them", "then", "there", "this", "want", "what", "when", "where", "which", "with",
     "would", "your", "you're", "it's", "i'm", "i'd", "i'll", "can't", "right", "today"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ToolEvent:
    turn: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    ok: bool  # the result has no "error" (False when no result came back)
    result: dict[str, Any]
    writes: list[dict[str, Any]]
    verified: bool  # whether the caller was verified when the call was made

    @property
    def succeeded(self) -> bool:
        if self.name == "verify_caller":
            return self.ok and self.result.get("status") == "verified"
        return self.ok

    @property
    def changed_nothing(self) -> bool:
        """A successful call that found everything as asked ("paperless is already on")."""
        return self.succeeded and self.result.get("changed") is False

    def matches(self, tool: str, outcome: str) -> bool:
        if self.name != tool:
            return False
        if outcome == "any":
            return True
        if outcome == "success":
            # A call that changed nothing is not the action a window waits for.
            return self.succeeded and not self.changed_nothing
        return not self.succeeded


@dataclass(frozen=True, slots=True)
class Span:
    """Turns ``start <= i < end`` count as evidence; ``opened`` is False when it never opened."""

    start: int
    end: int
    opened: bool = True
    opened_by: str = "the start of the call"
    closed_by: str = "the end of the call"

    def within(self, start: int, end: int, opened_by: str, closed_by: str) -> Span:
        """This span cut to ``start <= i < end`` (labels say which bound moved)."""
        if not self.opened:
            return self
        new_start, new_end = max(self.start, start), min(self.end, end)
        return Span(
            new_start,
            max(new_start, new_end),
            True,
            opened_by if start > self.start else self.opened_by,
            closed_by if end < self.end else self.closed_by,
        )

    def __contains__(self, index: object) -> bool:
        return self.opened and isinstance(index, int) and self.start <= index < self.end

    def describe(self) -> str:
        if not self.opened:
            return f"the window never opened ({self.opened_by} did not happen)"
        return (
            f"turns {self.start}-{self.end - 1} (after {self.opened_by}, before {self.closed_by})"
        )


@dataclass(slots=True)
class Timeline:
    transcript: Transcript
    events: list[ToolEvent] = field(default_factory=list)
    verified_at: int | None = None  # turn of the first successful verify_caller
    _raised_for: str | None = None
    _raised: tuple[int | None, ...] = ()

    @classmethod
    def of(cls, transcript: Transcript) -> Timeline:
        timeline = cls(transcript)
        pending: dict[str, Turn] = {}
        for turn in transcript.turns:
            call = turn.tool_call
            result = turn.tool_result
            if call is not None and result is None:
                pending[call.call_id] = turn
                continue
            if call is None and result is not None:
                opened = pending.pop(result.call_id, None)
                call = opened.tool_call if opened is not None else None
                at = opened.index if opened is not None else turn.index
            else:
                at = turn.index
            if call is None:
                continue
            timeline.events.append(
                ToolEvent(
                    turn=at,
                    call_id=call.call_id,
                    name=call.name,
                    arguments=dict(call.arguments),
                    ok=bool(result is not None and result.ok),
                    result=dict(result.result) if result is not None else {},
                    writes=list(result.writes) if result is not None else [],
                    verified=bool(result is not None and result.verified),
                )
            )
        for turn in pending.values():  # calls that never got a result
            assert turn.tool_call is not None
            timeline.events.append(
                ToolEvent(turn.index, turn.tool_call.call_id, turn.tool_call.name,
                          dict(turn.tool_call.arguments), False, {}, [], False)
            )  # fmt: skip
        timeline.events.sort(key=lambda e: e.turn)
        for event in timeline.events:
            if event.name == "verify_caller" and event.succeeded:
                timeline.verified_at = event.turn
                break
        return timeline

    @property
    def turns(self) -> list[Turn]:
        return self.transcript.turns

    @property
    def end(self) -> int:
        return (self.turns[-1].index + 1) if self.turns else 0

    def first(self, tool: str, outcome: str = "success") -> ToolEvent | None:
        return next((e for e in self.events if e.matches(tool, outcome)), None)

    def speech(self, speaker: str, span: Span | None = None) -> list[Turn]:
        """Spoken turns of ``speaker`` (no tool turns), inside ``span`` when given."""
        return [
            t
            for t in self.turns
            if t.speaker == speaker
            and t.tool_call is None
            and t.tool_result is None
            and (span is None or t.index in span)
        ]

    def raised(self, task: Task) -> list[int | None]:
        """The turn raising each of the task's requests (None where it is not found)."""
        key = task.task_id
        if self._raised_for == key:
            return list(self._raised)
        callers = [t for t in self.speech("caller") if not t.spurious]
        heard = [(t.index, f" {normalise(t.text)} ") for t in callers]
        out: list[int | None] = []
        after = -1
        for request in task.requests:
            texts = [normalise(request.says), normalise(request.rephrase)]
            at = next(
                (i for i, said in heard if i > after and any(f" {x} " in said for x in texts if x)),
                None,
            )
            if at is None:
                at = _closest(heard, after, texts)
            out.append(at)
            if at is not None:
                after = at
        self._raised_for, self._raised = key, tuple(out)
        return out

    def request_bounds(self, task: Task, request_index: int) -> tuple[int, int, str, str]:
        """Where talk about a request counts: from its raising to the next request's."""
        raised = self.raised(task)
        start, opened = 0, "the start of the call"
        if self.verified_at is not None:
            # Before verification the agent serves nothing (what it says then is the gate's).
            start, opened = self.verified_at + 1, f"verification at turn {self.verified_at}"
        if 0 < request_index < len(raised) and (raised[request_index] or 0) > start:
            start = raised[request_index] or 0
            opened = f"the caller raising request {request_index} at turn {start}"
        end, closed = self.end, "the end of the call"
        for later in range(request_index + 1, len(raised)):
            turn = raised[later]
            if turn is not None:
                end, closed = turn, f"the caller raising request {later} at turn {turn}"
                break
        return start, end, opened, closed

    def window(self, check: Check, evidence_turn: Callable[[str], int | None]) -> Span:
        """The evidence window of ``check``; ``evidence_turn(check_id)`` gives another check's
        first evidence turn (for ``after_check``)."""
        w = check.window
        start, opened, opened_by = 0, True, "the start of the call"
        if w.after_tool is not None:
            label = _outcome_label(w.after_tool, w.after_outcome)
            event = self.first(w.after_tool, w.after_outcome)
            if event is None:
                return Span(0, 0, opened=False, opened_by=label)
            start, opened_by = event.turn + 1, f"{label} at turn {event.turn}"
        if w.after_check is not None:
            at = evidence_turn(w.after_check)
            if at is None:
                return Span(0, 0, opened=False, opened_by=f"the evidence of check {w.after_check}")
            if at + 1 > start:
                start, opened_by = at + 1, f"check {w.after_check}'s evidence at turn {at}"
        end, closed_by = self.end, "the end of the call"
        if w.before_tool is not None:
            event = self.first(w.before_tool, w.before_outcome)
            if event is not None:
                end = event.turn
                closed_by = (
                    f"{_outcome_label(w.before_tool, w.before_outcome)} at turn {event.turn}"
                )
        return Span(start, max(start, end), opened, opened_by, closed_by)


def _content(text: str) -> set[str]:
    return {w for w in text.split() if len(w) > 3 and w not in _COMMON and not w.isdigit()}


def _closest(heard: list[tuple[int, str]], after: int, texts: list[str]) -> int | None:
    """The first caller turn after ``after`` sharing most of a request's words."""
    wanted = [_content(x) for x in texts if x]
    for index, said in heard:
        if index <= after:
            continue
        words = _content(said)
        for target in wanted:
            shared = len(words & target)
            if shared >= 3 and shared >= 0.6 * len(target):
                return index
    return None


def _outcome_label(tool: str, outcome: str) -> str:
    if outcome == "success":
        return f"a successful {tool}"
    if outcome == "failure":
        return f"a failed {tool}"
    return f"a call of {tool}"
