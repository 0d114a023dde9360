"""The audio channel: the text channel's interface, run on real speech.

For each caller turn: Piper speaks the caller's words, the call's background
(continuing from the last turn) is mixed under them, digital silence is dithered,
the pipeline's voice-activity detector (Silero behind a loudness gate, see
``vad``) cuts the mix into segments, and Whisper recognises each. Segments that
touch the caller's speech make the recognised turn; segments of background alone
become spurious turns. For each agent reply the detector listens to the background
while the agent speaks: where it first confirms speech, the reply is cut (a false
barge-in), and what the recogniser makes of that speech reaches the agent with the
caller's next turn, as a deployed pipeline would pass it on.

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
    dither,
    ratio_for_level,
    silence,
    to_pcm16,
)
from vamos_env.channel.audio.vad import SpeechDetector, whole_windows
from vamos_env.channel.parameters import DEFAULT_LEVEL_DB, BackgroundName
from vamos_env.channel.recognition import is_code, repetition_loop
from vamos_env.channel.text import ChannelEvent

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
    """(start, end) sample ranges of speech in a clip, by a fresh detector (zero-padded)."""
    padded = np.zeros(whole_windows(len(audio)))
    padded[: len(audio)] = audio
    return [(a, min(b, len(audio))) for a, b in SpeechDetector().segments(padded)]


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
        self.detector = SpeechDetector()  # runs over the whole call, turn after turn
        # Background speech that interrupted a reply: the recogniser transcribed it, and the
        # agent receives it with the caller's next turn.
        self._overheard: list[str] = []
        self._turn = 0

    @property
    def is_identity(self) -> bool:
        return False

    def mix_turn(self, caller_text: str) -> tuple[Audio, tuple[int, int]]:
        """The caller turn in the room: (mixed 16 kHz audio, the caller's speech sample range)."""
        speech = engines.synthesize(spoken_form(caller_text), self.voice)
        speech = speech * (REFERENCE_RMS / max(active_rms(speech), 1e-9))
        lead = silence(self.lead_s)
        # The tail rounds the turn to whole detector windows (the detector streams the call).
        tail = np.zeros(whole_windows(len(lead) + len(speech) + len(silence(self.tail_s))))
        tail = tail[len(lead) + len(speech) :]
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
        for a, b in self.detector.segments(mixed):
            (caller_segments if a < s1 and b > s0 else background_segments).append((a, b))
        heard = ""
        if caller_segments:
            a = caller_segments[0][0]
            b = caller_segments[-1][1]
            heard = engines.transcribe(mixed[a:b])
        if repetition_loop(caller_text, heard)[0]:
            self.events.append(ChannelEvent("loop", caller_text, heard, self._turn))
        self.events.append(ChannelEvent("recognised", caller_text, heard, self._turn))
        turns = [heard]
        for text in self._overheard:
            self.events.append(ChannelEvent("spurious_turn", "", text, self._turn))
            turns.append(text)
        self._overheard = []
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
        room = self.stream.take(whole_windows(int(seconds * RATE)))
        heard = self.detector.listen(room)  # it hears the room even under a one-word reply
        for a, b in heard.segments:
            text = engines.transcribe(room[a:b])
            if not _WORDLESS.match(text):
                self._overheard.append(text)
        if len(words) < 2 or not heard.onsets:
            return agent_text
        at = heard.onsets[0] / RATE
        kept = max(1, math.floor(len(words) * at / seconds))
        if kept >= len(words):
            return agent_text
        cut = " ".join(words[:kept])
        self.events.append(ChannelEvent("barge_in", agent_text, cut, self._turn))
        return cut
