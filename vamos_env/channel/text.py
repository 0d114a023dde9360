"""The text channel: a seeded model of what a voice pipeline does to a call in a noisy room.

Three effects, as the published traces show them, and a fourth the audio
channel measures:

1. **Recognition errors** in the caller's words (``recognition.Recogniser``),
   with background words leaking into them.
2. **Spurious turns**: background speech picked up while the caller is silent
   reaches the agent as if the caller said it. The television reads tech news in
   bursts with gaps and carries on where it left off; the cafe gives fragments
   of other tables' talk; the street, passers-by.
3. **False barge-in**: background sound trips the voice detector while the agent
   speaks, so the caller hears only the first part of the reply.
4. **Repetition loops**: under loud background speech Whisper sometimes writes a
   phrase of the turn again and again ("I'd like to pay I'd like to pay ...").

The background runs across the whole call: a burst that started during one turn
continues into the next. The clean room has no background but still the
recogniser (a quiet room is not a perfect ear), heard in the caller's own voice
(``persona``: the parameter file measures each persona's voice). The ``ideal``
recogniser profile is the identity in every room and draws nothing from the
generator. Every draw comes from the generator passed in, so a call's noise is
reproducible from its seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from vamos_env.channel.parameters import (
    DEFAULT_LEVEL_DB,
    DEFAULT_RECOGNISER,
    RECOGNISER_PROFILES,
    BackgroundName,
    ChannelParameters,
    Condition,
    RecogniserProfile,
    background_speech,
    shipped_parameters,
)
from vamos_env.channel.recognition import Recogniser

EventKind = Literal["recognised", "spurious_turn", "leak", "loop", "barge_in"]


@dataclass(frozen=True)
class ChannelEvent:
    """One thing the channel did, for the call's trace and for measuring rates."""

    kind: EventKind
    sent: str  # what was said (by the caller, the agent, or the background)
    received: str  # what reached the other side
    turn: int  # the caller turn it happened in (0 before the caller's first turn)


@dataclass
class TextChannel:
    """One call's channel. ``to_agent`` for each caller turn, ``to_caller`` for each agent reply.

    ``level_db`` is the speech-to-noise level key of the parameter file (25, the
    default, is noise at 0.3% of reference speech energy; 10 and 5 are harder).
    """

    background: BackgroundName
    rng: np.random.Generator
    level_db: float = DEFAULT_LEVEL_DB
    parameters: ChannelParameters = field(default_factory=shipped_parameters)
    events: list[ChannelEvent] = field(default_factory=list)
    # Who speaks: the persona's caller voice decides how well the recogniser hears it.
    persona: str | None = None
    recogniser: RecogniserProfile = DEFAULT_RECOGNISER

    def __post_init__(self) -> None:
        if self.recogniser not in RECOGNISER_PROFILES:
            raise ValueError(
                f"recogniser: expected one of {list(RECOGNISER_PROFILES)}, got {self.recogniser!r}"
            )
        self.voice = self.parameters.voice_of(self.persona)
        self.condition: Condition | None = (
            None
            if self.recogniser == "ideal"
            else self.parameters.condition(self.background, self.level_db, self.voice)
        )
        self._turn = 0
        self._sentences: tuple[str, ...] = ()
        self._cursor = 0
        self._on = True
        self._phase = 0
        if self.condition is None:
            return
        spec = self.parameters.backgrounds[self.background]
        weights, confusions = self.parameters.profile(self.voice)
        self._recogniser = Recogniser(self.condition, self.rng, confusions, weights)
        if spec.speech != "none":
            self._sentences = getattr(background_speech(), spec.speech)
            # The reading starts somewhere in the programme, not at its first line.
            self._cursor = int(self.rng.integers(len(self._sentences)))
        if spec.bursts is not None:
            # Join the programme somewhere in its cycle.
            self._phase = int(self.rng.integers(spec.bursts.on_turns + spec.bursts.off_turns))

    @property
    def is_identity(self) -> bool:
        return self.condition is None

    @property
    def background_speaking(self) -> bool:
        """Whether the background is in a burst now (always, for continuous backgrounds)."""
        return self.condition is not None and self._on

    def to_agent(self, caller_text: str) -> list[str]:
        """What the agent receives for one caller turn: the recognised turn, then spurious ones."""
        self._turn += 1
        if self.condition is None:
            return [caller_text]
        self._advance_bursts()
        c = self.condition
        heard = self._recogniser.transcribe(caller_text)
        if self._on and c.leak_rate and self._sentences and self.rng.random() < c.leak_rate:
            heard = self._leak_into(heard)
        # The rate is checked before drawing: conditions without loops keep their random streams.
        if self._on and c.repetition_loop_rate and self.rng.random() < c.repetition_loop_rate:
            heard = self._loop(heard)
        self._log("recognised", caller_text, heard)
        turns = [heard]  # may be empty: every word was lost, and the agent hears silence
        if self._on and c.spurious_turn_rate and self._sentences:
            # The rate is a mean per turn and may pass 1 (a television reading through a
            # whole turn and reply): its whole part always, its fraction by chance.
            whole = math.floor(c.spurious_turn_rate)
            count = whole + (self.rng.random() < c.spurious_turn_rate - whole)
            for _ in range(count):
                sentence = self._next_sentence()
                received = self._recogniser.transcribe(sentence)
                self._log("spurious_turn", sentence, received)
                turns.append(received)
        return turns

    def to_caller(self, agent_text: str) -> str:
        """What the caller hears of one agent reply: all of it, or its first part if cut."""
        c = self.condition
        if c is None or not self._on or not c.barge_in_per_minute:
            return agent_text
        words = agent_text.split()
        if len(words) < 2:
            return agent_text
        minutes = len(words) / self.parameters.speaking_rate_wpm
        cut_at = self.rng.exponential(1.0 / c.barge_in_per_minute)
        if cut_at >= minutes:
            return agent_text
        # At least one word gets out before the detector fires.
        kept = max(1, math.floor(len(words) * cut_at / minutes))
        heard = " ".join(words[:kept])
        self._log("barge_in", agent_text, heard)
        return heard

    def _advance_bursts(self) -> None:
        bursts = self.parameters.backgrounds[self.background].bursts
        if bursts is None:
            return
        cycle = bursts.on_turns + bursts.off_turns
        self._on = (self._phase + self._turn - 1) % cycle < bursts.on_turns

    def _next_sentence(self) -> str:
        sentence = self._sentences[self._cursor % len(self._sentences)]
        if self.background == "television":
            self._cursor += 1  # the programme carries on
        else:
            self._cursor = int(self.rng.integers(len(self._sentences)))
        return sentence

    def _leak_into(self, heard: str) -> str:
        assert self.condition is not None
        low, high = self.condition.leak_words
        source = self._sentences[self._cursor % len(self._sentences)].split()
        count = min(len(source), int(self.rng.integers(low, high + 1)))
        start = int(self.rng.integers(len(source) - count + 1))
        leaked = [w.strip(",.?!").lower() for w in source[start : start + count]]
        words = heard.split()
        at = int(self.rng.integers(len(words) + 1))
        result = " ".join([*words[:at], *leaked, *words[at:]])
        self._log("leak", " ".join(leaked), result)
        return result

    def _loop(self, heard: str) -> str:
        assert self.condition is not None
        words = heard.split()
        if not words:
            return heard
        length = min(len(words), int(self.rng.integers(2, 6)))
        start = int(self.rng.integers(len(words) - length + 1))
        low, high = self.condition.repetition_repeats
        repeats = int(self.rng.integers(low, high + 1))
        phrase = words[start : start + length]
        end = start + length
        result = " ".join([*words[:end], *phrase * repeats, *words[end:]])
        self._log("loop", " ".join(phrase), result)
        return result

    def _log(self, kind: EventKind, sent: str, received: str) -> None:
        self.events.append(ChannelEvent(kind, sent, received, self._turn))
