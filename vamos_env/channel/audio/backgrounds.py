"""Backgrounds synthesized without downloads, seeded, and continuing across the call.

- **street**: band-limited brown noise, passing engines (a low harmonic hum that
  swells and fades), horns, the odd passer-by's line;
- **cafe**: six other tables talking at once in six different voices (espeak-ng,
  flite and Piper), low-passed and reverberated together in a room with a 0.7 s
  reverberation time, so they blur into babble as real cafe talk does, with cup
  and cutlery clinks and a room rumble;
- **television**: a tech-news reading in order, in flite's ``rms`` voice (unlike
  every caller voice), that runs ``TV_ON_S`` seconds and pauses ``TV_OFF_S``,
  from a seeded point in that cycle.

Voices of an engine that is not installed (the Debian packages espeak-ng and
flite) fall back to the Piper voice at another pitch; the calibration's header
names the voices it ran with.

A stream is one call's background: ``take(n)`` hands out the next ``n`` samples,
so a burst that began while the agent spoke carries on into the caller's turn.
Each background is scaled by its measured RMS (television: during a burst) to
``ratio * REFERENCE_RMS ** 2`` of energy, the reference speech energy being the
caller's speech level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from vamos_env.channel.audio import engines
from vamos_env.channel.audio.dsp import RATE, Audio, active_rms, band, rms
from vamos_env.channel.parameters import BackgroundName, background_speech

REFERENCE_RMS = 0.1  # the caller's active speech level; backgrounds are set relative to it
BLOCK_S = 8.0
TV_ON_S = 40.0
TV_OFF_S = 60.0
CAFE_RT60_S = 0.7
# Each voice with the Piper stand-in used when its engine is missing.
_CAFE_VOICES = (
    (engines.Voice(engine="espeak-ng", name="en-gb+f2", words_per_minute=160), engines.Voice(1.3)),
    (engines.Voice(engine="flite", name="awb"), engines.Voice(0.86, 1.05)),
    (engines.Voice(0.84, 1.05), engines.Voice(0.84, 1.05)),
    (engines.Voice(engine="espeak-ng", name="en-us+m3", words_per_minute=150), engines.Voice(0.9)),
    (engines.Voice(engine="flite", name="kal16"), engines.Voice(1.15, 0.95)),
    (engines.Voice(1.12, 1.0), engines.Voice(1.12, 1.0)),
)
_STREET_VOICE = engines.Voice(0.92, 1.0)
_TV_VOICE = (engines.Voice(engine="flite", name="rms"), engines.NEWSREADER)


def _installed(voice: engines.Voice, stand_in: engines.Voice) -> engines.Voice:
    return voice if engines.engine_missing(voice.engine) is None else stand_in


def background_voices(name: BackgroundName) -> tuple[engines.Voice, ...]:
    """The voices a background speaks with on this machine."""
    if name == "television":
        return (_installed(*_TV_VOICE),)
    if name == "cafe":
        return tuple(_installed(*pair) for pair in _CAFE_VOICES)
    if name == "street":
        return (_STREET_VOICE,)
    return ()


def _room_response(rng: np.random.Generator, rt60_s: float) -> Audio:
    """A diffuse room's impulse response: a direct path and exponentially decaying noise."""
    t = np.arange(int(rt60_s * RATE)) / RATE
    tail = rng.standard_normal(len(t)) * np.exp(-6.91 * t / rt60_s)  # -60 dB at rt60
    tail[0] = 1.0
    return np.asarray(tail / np.sqrt(np.sum(np.square(tail))), dtype=np.float64)


def _convolve(audio: Audio, response: Audio) -> Audio:
    """Full linear convolution by FFT (len(audio) + len(response) - 1 samples)."""
    n = len(audio) + len(response) - 1
    size = 1 << (n - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(audio, size) * np.fft.rfft(response, size), size)[:n]
    return np.asarray(out, dtype=np.float64)


@dataclass
class _SpeechTrack:
    """Lines from a list read one after another with pauses; ``ordered`` keeps the list order."""

    lines: tuple[str, ...]
    voice: engines.Voice
    rng: np.random.Generator
    pause_s: tuple[float, float]
    ordered: bool
    cursor: int = 0
    pending: Audio = field(default_factory=lambda: np.zeros(0))
    said: list[str] = field(default_factory=list)

    def take(self, n: int) -> Audio:
        while len(self.pending) < n:
            if self.ordered:
                line = self.lines[self.cursor % len(self.lines)]
                self.cursor += 1
            else:
                line = self.lines[int(self.rng.integers(len(self.lines)))]
            self.said.append(line)
            speech = engines.synthesize(line, self.voice)
            speech = speech / max(active_rms(speech), 1e-9)  # unit level per line
            pause = np.zeros(int(self.rng.uniform(*self.pause_s) * RATE))
            self.pending = np.concatenate([self.pending, speech, pause])
        out, self.pending = self.pending[:n], self.pending[n:]
        return out


def _brown(rng: np.random.Generator, n: int, low: float, high: float) -> Audio:
    walk = np.cumsum(rng.standard_normal(n))
    shaped = band(walk - walk.mean(), low, high)
    return shaped / max(rms(shaped), 1e-12)


def _events(rng: np.random.Generator, n: int, per_second: float) -> list[int]:
    count = int(rng.poisson(per_second * n / RATE))
    return sorted(int(x) for x in rng.integers(0, n, size=count))


def _add(buffer: Audio, start: int, sound: Audio) -> None:
    end = min(len(buffer), start + len(sound))
    buffer[start:end] += sound[: end - start]


def _engine(rng: np.random.Generator) -> Audio:
    seconds = rng.uniform(2.0, 4.5)
    t = np.arange(int(seconds * RATE)) / RATE
    f0 = rng.uniform(35.0, 80.0) * (1.0 + 0.08 * np.sin(np.pi * t / seconds))
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    hum = sum(np.sin(k * phase) / k for k in range(1, 8))
    swell = np.sin(np.pi * t / seconds) ** 2
    return np.asarray(2.5 * hum * swell, dtype=np.float64)


def _horn(rng: np.random.Generator) -> Audio:
    seconds = rng.uniform(0.3, 0.8)
    t = np.arange(int(seconds * RATE)) / RATE
    f = rng.uniform(380.0, 520.0)
    tone = np.sign(np.sin(2 * np.pi * f * t)) + np.sign(np.sin(2 * np.pi * f * 1.26 * t))
    return np.asarray(1.5 * band(tone * np.minimum(1.0, t / 0.02), 200, 4000), dtype=np.float64)


def _clink(rng: np.random.Generator) -> Audio:
    t = np.arange(int(0.25 * RATE)) / RATE
    f = rng.uniform(2200.0, 5200.0)
    ring = np.sin(2 * np.pi * f * t) + 0.5 * np.sin(2 * np.pi * f * 2.7 * t)
    return np.asarray(2.0 * ring * np.exp(-t * rng.uniform(25.0, 50.0)), dtype=np.float64)


@dataclass
class BackgroundStream:
    """One call's background, ``ratio`` of the reference speech energy (0.003 = 25 dB)."""

    name: BackgroundName
    rng: np.random.Generator
    ratio: float = 0.003
    unscaled: bool = False  # the probe that measures the scale

    def __post_init__(self) -> None:
        self._buffer: Audio = np.zeros(0)
        self._elapsed = 0
        self._consumed = 0
        lines = background_speech()
        self._tracks: list[_SpeechTrack] = []
        self._tv_offset = 0
        self._tail: Audio = np.zeros(0)  # the cafe's reverberation running into the next block
        self._room: Audio = np.zeros(0)
        voices = background_voices(self.name)
        if self.name == "television":
            start = int(self.rng.integers(len(lines.television)))
            self._tracks.append(
                _SpeechTrack(lines.television, voices[0], self.rng, (0.7, 1.6), True, start)
            )
            self._tv_offset = int(self.rng.uniform(0.0, TV_ON_S + TV_OFF_S) * RATE)
        elif self.name == "cafe":
            self._tracks = [
                _SpeechTrack(lines.cafe, v, self.rng, (0.3, 2.5), False) for v in voices
            ]
            self._room = _room_response(self.rng, CAFE_RT60_S)
        elif self.name == "street":
            self._tracks.append(_SpeechTrack(lines.street, voices[0], self.rng, (8.0, 25.0), False))
        self._gain = 0.0
        if self.name != "clean":
            target = np.sqrt(self.ratio) * REFERENCE_RMS
            self._gain = 1.0 if self.unscaled else target / _probe_rms(self.name)

    @property
    def lines_said(self) -> list[str]:
        """The background lines started so far (to tell leaked words from misrecognitions)."""
        return [line for track in self._tracks for line in track.said]

    def burst_on(self, sample: int) -> bool:
        """Whether the television is reading at this sample of the call (always for others)."""
        if self.name != "television":
            return self.name != "clean"
        cycle = int((TV_ON_S + TV_OFF_S) * RATE)
        return (sample + self._tv_offset) % cycle < int(TV_ON_S * RATE)

    @property
    def elapsed(self) -> int:
        return self._elapsed

    @property
    def consumed(self) -> int:
        """Samples handed out so far: where the call is in the background's timeline."""
        return self._consumed

    def speaking_between(self, start: int, end: int) -> bool:
        """Whether the background speaks at any point of [start, end) (checked every 0.25 s)."""
        return any(self.burst_on(s) for s in range(start, max(end, start + 1), RATE // 4))

    def take(self, n: int) -> Audio:
        """The next ``n`` samples of the background."""
        self._consumed += n
        while len(self._buffer) < n:
            self._buffer = np.concatenate([self._buffer, self._block()])
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def _block(self) -> Audio:
        n = int(BLOCK_S * RATE)
        start = self._elapsed
        self._elapsed += n
        if self.name == "clean":
            return np.zeros(n)
        rng = self.rng
        if self.name == "street":
            out = _brown(rng, n, 20.0, 1200.0)
            for at in _events(rng, n, 1 / 6):
                _add(out, at, _engine(rng))
            for at in _events(rng, n, 1 / 25):
                _add(out, at, _horn(rng))
            out += 0.5 * band(self._tracks[0].take(n), 150.0, 3500.0)
        elif self.name == "cafe":
            talk = band(np.asarray(sum(track.take(n) for track in self._tracks)), 100.0, 2500.0)
            wet = _convolve(talk, self._room)
            wet[: len(self._tail)] += self._tail
            self._tail = wet[n:]
            out = 0.8 * wet[:n]
            out += 0.5 * _brown(rng, n, 20.0, 180.0)
            for at in _events(rng, n, 1 / 3):
                _add(out, at, _clink(rng))
        else:
            speech = band(self._tracks[0].take(n), 180.0, 6000.0)
            on = np.array([self.burst_on(start + i) for i in range(0, n, 160)])
            # The programme runs on muted through a gap, so a burst starts mid-bulletin.
            gate = np.repeat(on, 160)[:n].astype(np.float64)
            out = speech * gate
        return np.asarray(out * self._gain, dtype=np.float64)


@lru_cache(maxsize=8)
def _probe_rms(name: BackgroundName) -> float:
    """The unscaled background's RMS over a fixed 32 s probe (television: during bursts)."""
    probe = BackgroundStream(name, np.random.default_rng(20260910), unscaled=True)
    if name == "television":
        # Start the probe inside a burst so it measures the reading, not the gap.
        probe._tv_offset = 0
        return active_rms(probe.take(int(32 * RATE)))
    return rms(probe.take(int(32 * RATE)))
