"""Gymnasium wrappers for ``VamosEnergy-v0``; each changes one thing about a call.

- ``TranscriptRig``: plain text in and out, clean channel (the cheap iteration loop).
- ``ChatFormat``: OpenAI chat messages in and out (for LLM trainers).
- ``RecordEpisode``: one JSON line per finished call (transcript, trace, verdict).
- ``RecordedReplay``: a recorded caller against a new agent; reports the first divergence.
- ``FaultInjection``: seeded service timeouts and 5xx errors; faulted calls are tagged.
- ``PartialCredit``: the end-of-call reward as the fraction of checks passed.

They compose in the usual way, e.g.
``RecordEpisode(PartialCredit(FaultInjection(gym.make("VamosEnergy-v0"), 0.05)), "calls.jsonl")``.
Wrappers that reach into the call (``FaultInjection``, ``RecordedReplay``) need the
environment underneath to be ``VamosEnergyEnv``.
"""

from __future__ import annotations

from vamos_env.wrappers.chat_format import ChatFormat, ChatMessagesSpace, chat_problems
from vamos_env.wrappers.faults import FaultInjection, FaultyRoutes, InjectedFault
from vamos_env.wrappers.partial_credit import PartialCredit, PartialScore, partial_credit
from vamos_env.wrappers.recording import RecordEpisode, read_records, trace_of
from vamos_env.wrappers.replay import RecordedReplay, ReplayCaller, ReplayChannel
from vamos_env.wrappers.transcript_rig import (
    TextAction,
    TextActionError,
    TranscriptRig,
    format_observation,
    parse_text_action,
    read_observation,
)

__all__ = [
    "ChatFormat",
    "ChatMessagesSpace",
    "FaultInjection",
    "FaultyRoutes",
    "InjectedFault",
    "PartialCredit",
    "PartialScore",
    "RecordEpisode",
    "RecordedReplay",
    "ReplayCaller",
    "ReplayChannel",
    "TextAction",
    "TextActionError",
    "TranscriptRig",
    "chat_problems",
    "format_observation",
    "parse_text_action",
    "partial_credit",
    "read_observation",
    "read_records",
    "trace_of",
]
