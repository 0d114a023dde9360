"""How each persona takes turns on a full-duplex line: when it starts, yields and cuts in.

Times are seconds on the call's clock. ``reply_gap_s`` is how long after the caller's
hearing decides the agent has finished (its detector's stop) it starts to answer;
``cut_in_after_s`` is how long an agent's unbroken speech may run before the caller
speaks over it (``None``: never); ``yields`` says whether the caller stops talking when
the agent starts speaking over it (it then leaves the rest of its words unsaid);
``nudge_after_s`` is how long the caller waits in silence for an answer before it
speaks again (it tells its brief it heard nothing).

The sceptic's ``cut_in_after_s`` is its persona file's ``interrupt_after_seconds``
(8 s); the angry caller cuts in sooner and the calm one never does; only the calm
caller yields.
"""

from __future__ import annotations

from dataclasses import dataclass

from vamos_env.callers.persona import SHIPPED_PERSONAS, load_persona


@dataclass(frozen=True)
class TurnTaking:
    reply_gap_s: float = 0.4
    cut_in_after_s: float | None = None
    yields: bool = True
    nudge_after_s: float = 8.0
    opens_after_s: float = 1.0  # the caller's first words, after the line opens


ANGRY_CUT_IN_S = 5.0


def turn_taking(persona: str) -> TurnTaking:
    """The persona's turn-taking (a persona not named here takes the calm caller's)."""
    if persona.startswith("sceptic"):
        after = (
            load_persona(persona).behaviours.interrupt_after_seconds
            if persona in SHIPPED_PERSONAS
            else None
        )
        return TurnTaking(reply_gap_s=0.3, cut_in_after_s=after or 8.0, yields=False)
    if persona == "angry":
        return TurnTaking(reply_gap_s=0.2, cut_in_after_s=ANGRY_CUT_IN_S, yields=False)
    return TurnTaking()
