"""Measure a text channel's rates over many seeded simulated calls.

The channel tests hold the model to the bands in the parameter file with this,
and the audio channel's calibration can put its own measurements beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vamos_env.channel.parameters import BackgroundName, ChannelParameters, shipped_parameters
from vamos_env.channel.recognition import word_errors
from vamos_env.channel.text import TextChannel


@dataclass(frozen=True)
class MeasuredRates:
    word_error_rate: float
    spurious_turns_per_turn: float
    barge_in_rate: float
    caller_turns: int
    # Spurious flags per caller turn, call after call: how insertions cluster.
    spurious_by_turn: tuple[tuple[bool, ...], ...]
    # Recogniser repetition loops per caller turn (last, with a default, for older callers).
    loops_per_turn: float = 0.0


def measure_rates(
    background: BackgroundName,
    level_db: float,
    caller_turns: Sequence[str],
    agent_reply: str,
    *,
    calls: int,
    seed: int,
    parameters: ChannelParameters | None = None,
    persona: str | None = None,
) -> MeasuredRates:
    """Run ``calls`` simulated calls of the given caller turns, each answered by ``agent_reply``.

    ``persona`` picks the caller voice whose measured profile the channel applies.
    """
    parameters = parameters or shipped_parameters()
    root = np.random.SeedSequence(seed)
    errors = words = spurious = cut = replies = loops = 0
    flags: list[tuple[bool, ...]] = []
    for child in root.spawn(calls):
        channel = TextChannel(
            background, np.random.default_rng(child), level_db, parameters, persona=persona
        )
        call_flags = []
        for text in caller_turns:
            received = channel.to_agent(text)
            e, n = word_errors(text, received[0])
            errors += e
            words += n
            spurious += len(received) - 1
            call_flags.append(len(received) > 1)
            heard = channel.to_caller(agent_reply)
            replies += 1
            cut += heard != agent_reply
        flags.append(tuple(call_flags))
        loops += sum(event.kind == "loop" for event in channel.events)
    turns = calls * len(caller_turns)
    return MeasuredRates(
        word_error_rate=errors / words if words else 0.0,
        spurious_turns_per_turn=spurious / turns if turns else 0.0,
        barge_in_rate=cut / replies if replies else 0.0,
        caller_turns=turns,
        spurious_by_turn=tuple(flags),
        loops_per_turn=loops / turns if turns else 0.0,
    )
