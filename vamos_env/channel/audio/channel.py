"""The audio channel: the text channel's interface, run on real speech.

For each caller turn: Piper speaks the caller's words, the call's background
(continuing from the last turn) is mixed under them, digital silence is dithered,
an energy voice-activity detector cuts the mix into segments, and Whisper
recognises each. Segments that touch the caller's speech make the recognised
turn; segments of background alone become spurious turns. For each agent reply
the detector listens to the background while the agent speaks: the first
segment it fires on cuts the reply there (a false barge-in).

Slow (about a second per turn on 2 cores) and optional: ``vamos-env[audio]``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from vamos_env.channel.audio import engines
from vamos_env.channel.audio.backgrounds import REFERENCE_RMS, BackgroundStream
from vamos_env.channel.audio.dsp import (
    RATE,
    Audio,
    active_rms,
    band,
    dither,
    ratio_for_level,
    silence,
    to_pcm16,
)
from vamos_env.channel.parameters import DEFAULT_LEVEL_DB, BackgroundName
from vamos_env.channel.recognition import is_code
from vamos_env.channel.text import ChannelEvent

FRAME_S = 0.02
# The detector fires at 15 dB under the reference speech level, in the speech band.
VAD_THRESHOLD_RMS = REFERENCE_RMS * 10 ** (-15 / 20)
VAD_HANGOVER_S = 0.3
VAD_MIN_SEGMENT_S = 0.25
_EMAIL = re.compile(r"^([\w.+-]+)@([\w-]+(?:\.[\w-]+)+)$")
_WORDLESS = re.compile(r"^[\W_]*$")


def spoken_form(text: str) -> str:
    """How a caller says a written turn: codes digit by digit, emails with 'at' and 'dot'."""
    words = []
    for word in text.split():
        core = word.strip(",.?!;:")
        if is_code(core):
            words.append(" ".join(c for c in core if c.isdigit()) + word[len(core) :])
        elif match := _EMAIL.match(core):
            local, domain = match.groups()
            spoken = f"{local} at {domain}".replace(".", " dot ")
            words.append(spoken + word[len(core) :].lstrip("."))
        else:
            words.append(word)
    return " ".join(words)


def detect_speech(audio: Audio) -> list[tuple[int, int]]:
    """Energy VAD: (start, end) sample ranges whose speech-band level crosses the threshold."""
    frame = int(FRAME_S * RATE)
    usable = len(audio) // frame * frame
    if usable == 0:
        return []
    voiced = band(audio[:usable], 250.0, 3800.0)
    levels = np.sqrt(np.mean(np.square(voiced.reshape(-1, frame)), axis=1))
    active = levels > VAD_THRESHOLD_RMS
    hang = int(VAD_HANGOVER_S / FRAME_S)
    segments: list[tuple[int, int]] = []
    start = last = -1
    for i, on in enumerate(active):
        if on:
            if start < 0:
                start = i
            elif i - last > hang:
                segments.append((start, last + 1))
                start = i
            last = i
    if start >= 0:
        segments.append((start, last + 1))
    shortest = VAD_MIN_SEGMENT_S / FRAME_S
    return [(a * frame, b * frame) for a, b in segments if b - a >= shortest]


@dataclass
class AudioChannel:
    """One call's audio channel; ``to_agent`` and ``to_caller`` as ``TextChannel`` has them.

    ``keep_audio`` keeps each caller turn's mixed 16 kHz PCM16 in ``audio`` (one
    array per turn) for speech-native agents.
    """

    background: BackgroundName
    rng: np.random.Generator
    level_db: float = DEFAULT_LEVEL_DB
    keep_audio: bool = False
    speaking_rate_wpm: float = 150.0
    lead_s: float = 1.5  # the caller's silence before speaking: the room alone
    tail_s: float = 0.7
    voice: engines.Voice = engines.CALLER  # the caller's voice (see engines.PERSONA_VOICES)
    events: list[ChannelEvent] = field(default_factory=list)
    audio: list[npt.NDArray[np.int16]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stream = BackgroundStream(self.background, self.rng, ratio_for_level(self.level_db))
        self._turn = 0

    @property
    def is_identity(self) -> bool:
        return False

    def mix_turn(self, caller_text: str) -> tuple[Audio, tuple[int, int]]:
        """The caller turn in the room: (mixed 16 kHz audio, the caller's speech sample range)."""
        speech = engines.synthesize(spoken_form(caller_text), self.voice)
        speech = speech * (REFERENCE_RMS / max(active_rms(speech), 1e-9))
        lead, tail = silence(self.lead_s), silence(self.tail_s)
        mixed = np.concatenate([lead, speech, tail])
        mixed += self.stream.take(len(mixed))
        return dither(mixed, self.rng), (len(lead), len(lead) + len(speech))

    def to_agent(self, caller_text: str) -> list[str]:
        """The recognised caller turn, then any spurious turns from the background."""
        self._turn += 1
        mixed, (s0, s1) = self.mix_turn(caller_text)
        if self.keep_audio:
            self.audio.append(to_pcm16(mixed))
        caller_segments: list[tuple[int, int]] = []
        background_segments: list[tuple[int, int]] = []
        for a, b in detect_speech(mixed):
            (caller_segments if a < s1 and b > s0 else background_segments).append((a, b))
        heard = ""
        if caller_segments:
            a = caller_segments[0][0]
            b = caller_segments[-1][1]
            heard = engines.transcribe(mixed[a:b])
        self.events.append(ChannelEvent("recognised", caller_text, heard, self._turn))
        turns = [heard]
        for a, b in background_segments:
            text = engines.transcribe(mixed[a:b])
            if not _WORDLESS.match(text):
                self.events.append(ChannelEvent("spurious_turn", "", text, self._turn))
                turns.append(text)
        return turns

    def to_caller(self, agent_text: str) -> str:
        """What the caller hears of the reply: cut where the detector first fires on the room."""
        words = agent_text.split()
        seconds = len(words) / self.speaking_rate_wpm * 60.0
        room = self.stream.take(int(seconds * RATE))
        if len(words) < 2:
            return agent_text
        segments = detect_speech(room)
        if not segments:
            return agent_text
        at = segments[0][0] / RATE
        kept = max(1, math.floor(len(words) * at / seconds))
        if kept >= len(words):
            return agent_text
        heard = " ".join(words[:kept])
        self.events.append(ChannelEvent("barge_in", agent_text, heard, self._turn))
        return heard
