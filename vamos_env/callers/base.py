"""The caller protocol: what every simulated caller (scripted or LLM) offers the episode loop.

A caller opens the call, hears each agent reply as the channel delivered it, and
answers or hangs up. At the end it says whether it believes its goal was met,
judged only from what it heard: it never sees tool results, so an agent's false
assurance fools it as it would fool a person.

``deviations`` lists benchmark faults: moments where the caller departed from its
brief (skipped a request, volunteered a figure it should have asked for, hung up
while the agent was checking, answered what it was not asked, a model reply that
could not be used). A call with any deviation is excluded from the agent's score
and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

HangUpReason = Literal[
    "done",  # every request handled
    "transferred",  # the agent handed the call to a person
    "stall",  # no progress for too many turns
    "contradiction",  # the agent contradicted what it said before (sceptic)
    "caller_ended",  # an LLM caller ended the call on its own judgement
    "caller_error",  # the caller could not go on (model error); a benchmark fault
]
DeviationKind = Literal[
    "skipped_request",
    "volunteered_figure",
    "hung_up_while_waiting",
    "forbidden",
    "caller_error",
    # The caller misunderstood the agent (see ``vamos_env.callers.deviation``).
    "out_of_order",  # named or agreed to a later card of its brief before the earlier one
    "accepted_refused",  # said yes to an offer its brief turns down
    "unasked_answer",  # gave a private fact when the agent had asked nothing
    "invented_value",  # said a code, amount or email its task does not hold
]


# What a caller hears when the line cut the agent off mid-reply (a detector that took the
# room for the caller, a dropped line): the words that came through, then this mark, as a
# listener hears the voice stop mid-sentence. The transcript keeps the words without it.
CUT_OFF = "\u2026"


@dataclass(frozen=True)
class Utterance:
    """What the caller says.

    ``cut_in_after_words`` is set when the caller interrupted the agent: it heard
    only that many of the agent's words before speaking over it.
    """

    text: str
    cut_in_after_words: int | None = None


@dataclass(frozen=True)
class HangUp:
    """The caller ends the call, with any last words and why."""

    reason: HangUpReason
    text: str = ""


@dataclass(frozen=True)
class Deviation:
    """A departure from the caller's brief: the call is a benchmark fault, not the agent's."""

    kind: DeviationKind
    detail: str
    turn: int


@runtime_checkable
class Caller(Protocol):
    deviations: list[Deviation]

    def open(self) -> Utterance:
        """The caller's first words once the agent has answered."""
        ...

    def hear(self, text: str) -> Utterance | HangUp:
        """The agent's reply as the caller heard it; the caller answers or hangs up."""
        ...

    def goal_met(self) -> bool:
        """Whether the caller believes it got what it called for, from what it heard."""
        ...
