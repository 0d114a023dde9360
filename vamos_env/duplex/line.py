"""Telephony line conditions: what a phone line does to audio between the two sides.

A ``LineCondition`` is named in the casting and the run manifest; ``Line`` applies one
to a stream of 20 ms frames (16 kHz float in, 16 kHz float out), frame by frame, so the
duplex engine can put it between the caller's room and the agent and back:

- **band-limiting** to the telephone band as ITU-T G.712 draws a PCM channel's mask:
  flat from 300 to 3400 Hz (within 0.1 dB), mains hum at 50/60 Hz and everything from
  4 kHz up more than 55 dB down. A 257-tap windowed-sinc FIR band-pass, its 6 dB
  points at 200 and 3500 Hz, run as a stream (its history carries across frames; 8 ms
  of delay). A filter whose 6 dB points sit at 300 and 3400 Hz would take a further
  6 dB off both ends of the band the standard keeps flat;
- **G.711 mu-law at 8 kHz**: band-limited, decimated to 8 kHz, each sample encoded to
  the 8-bit G.711 code and decoded back (the segmented mu-law of ITU-T G.711, bias 132,
  as telephone networks and Twilio carry it), then interpolated back to 16 kHz;
- **frame loss**: each 20 ms frame is lost with probability ``loss``, drawn from the
  line's own seeded generator, and replaced by silence (no concealment).

A band-limited line also changes how a speech detector hears it. The faster-whisper
export of Silero that the audio channel uses scores telephone-band speech far lower than
the same speech at full band: on a G.711 line it finds 64% of the speech windows at its
0.7 confidence (98% on a wideband one) and short replies ("Yes.", "No.") not at all, so
a listener with it misses whole turns. ``LineCondition.detector_settings`` is the
detector a listener on the line uses: on a band-limited line, Silero's release model
(``DetectorSettings.model`` ``"silero-release"``, the file Pipecat bundles for telephony),
which finds 95% at the same confidence, short replies included
(``benchmarks/line_detector.py`` measures both, with how often each room alone passes).

Only numpy: Python's ``audioop`` (which has ``lin2ulaw``) is deprecated in 3.11 and gone
in 3.13, and the codec is a formula.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.channel.audio.vad import DetectorSettings

BAND_HZ = (200.0, 3500.0)  # the filter's 6 dB points; flat over 300-3400 Hz
TAPS = 257
_BIAS = 0x21  # 132 in 16-bit terms, as the 14-bit coder adds it
_CLIP = 8159


def ulaw_encode(pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.uint8]:
    """16-bit linear samples to G.711 mu-law codes (one byte each).

    The 14-bit form of the reference coder: the sample shifted right by two (rounding
    towards minus infinity), its magnitude clipped and biased, then a segment (the
    exponent) and four mantissa bits, all bits inverted (sign included for positives).
    """
    shifted = pcm.astype(np.int32) >> 2
    negative = shifted < 0
    magnitude = np.minimum(np.abs(shifted), _CLIP) + _BIAS
    segment = np.floor(np.log2(magnitude)).astype(np.int32) - 5
    mantissa = (magnitude >> np.minimum(segment + 1, 8)) & 0x0F
    mask = np.where(negative, 0x7F, 0xFF)
    code = np.where(segment >= 8, 0x7F, (segment << 4) | mantissa)  # the clipped top
    return np.asarray(code ^ mask, dtype=np.uint8)


def ulaw_decode(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.int16]:
    """G.711 mu-law codes back to 16-bit linear samples."""
    c = ~codes.astype(np.int32) & 0xFF
    segment = (c >> 4) & 0x07
    mantissa = c & 0x0F
    magnitude = (((mantissa << 3) + 0x84) << segment) - 0x84
    return np.asarray(np.where(c & 0x80, -magnitude, magnitude), dtype=np.int16)


def band_pass_taps(low_hz: float, high_hz: float, rate: int = RATE, taps: int = TAPS) -> Audio:
    """A linear-phase FIR band-pass (windowed sinc, Hamming window), unit gain in the band."""
    n = np.arange(taps) - (taps - 1) / 2
    window = np.hamming(taps)

    def low_pass(cutoff: float) -> Audio:
        return np.asarray(2 * cutoff / rate * np.sinc(2 * cutoff / rate * n), dtype=np.float64)

    response = (low_pass(high_hz) - (low_pass(low_hz) if low_hz > 0 else 0.0)) * window
    centre = np.exp(-2j * np.pi * np.sqrt(low_hz * high_hz) / rate * n) if low_hz > 0 else 1.0
    gain = abs(np.sum(response * centre))
    return np.asarray(response / gain, dtype=np.float64)


class _Fir:
    """An FIR filter over a stream: each call filters the next samples, history kept."""

    def __init__(self, taps: Audio) -> None:
        self.taps = taps
        self._history = np.zeros(len(taps) - 1)

    def __call__(self, samples: Audio) -> Audio:
        joined = np.concatenate([self._history, samples])
        self._history = joined[len(joined) - len(self._history) :]
        return np.asarray(np.convolve(joined, self.taps, mode="valid"), dtype=np.float64)


@dataclass(frozen=True)
class LineCondition:
    """A line's effects; ``name`` is how the casting and the manifest say it."""

    name: str = "wideband"
    codec: str = "pcm16"  # "pcm16" (16 kHz linear) or "mulaw" (G.711 at 8 kHz)
    band_limited: bool = False
    loss: float = 0.0

    def __post_init__(self) -> None:
        if self.codec not in ("pcm16", "mulaw"):
            raise ValueError(f"line codec: expected 'pcm16' or 'mulaw', got {self.codec!r}")
        if not 0.0 <= self.loss < 1.0:
            raise ValueError(f"line loss: expected a rate in [0, 1), got {self.loss!r}")

    @property
    def identity(self) -> bool:
        return self.codec == "pcm16" and not self.band_limited and self.loss == 0.0

    @property
    def narrow(self) -> bool:
        """Whether the line carries only the telephone band."""
        return self.band_limited or self.codec == "mulaw"

    def detector_settings(self, settings: DetectorSettings | None = None) -> DetectorSettings:
        """``settings`` (the wideband defaults when ``None``) as a listener on this line
        uses them: on a band-limited line, with Silero's release model."""
        settings = settings or DetectorSettings()
        return replace(settings, model="silero-release") if self.narrow else settings


LINES: dict[str, LineCondition] = {
    "wideband": LineCondition(),
    "narrowband": LineCondition("narrowband", band_limited=True),
    "g711": LineCondition("g711", codec="mulaw", band_limited=True),
}
_LOSSY = re.compile(r"^(wideband|narrowband|g711)-loss(\d+(?:\.\d+)?)$")


def line_condition(name: str) -> LineCondition:
    """A named line: ``wideband``, ``narrowband``, ``g711``, or any of them with
    ``-loss<percent>`` (``g711-loss2`` loses 2% of frames)."""
    if name in LINES:
        return LINES[name]
    match = _LOSSY.match(name)
    if match is None:
        raise ValueError(
            f"line: expected one of {sorted(LINES)} or NAME-loss<percent>, got {name!r}"
        )
    base = LINES[match.group(1)]
    return LineCondition(name, base.codec, base.band_limited, float(match.group(2)) / 100.0)


class Line:
    """One direction of one call's line: apply ``condition`` to each 20 ms frame in order."""

    def __init__(self, condition: LineCondition, rng: np.random.Generator) -> None:
        self.condition = condition
        self.rng = rng
        self.frames = 0
        self.lost = 0
        self._band = _Fir(band_pass_taps(*BAND_HZ)) if condition.band_limited else None
        # 8 kHz -> 16 kHz: zero-stuffing, then a low-pass at 3.6 kHz with gain 2.
        self._up = _Fir(2.0 * band_pass_taps(0.0, 3600.0)) if condition.codec == "mulaw" else None

    def __call__(self, frame: Audio) -> Audio:
        self.frames += 1
        c = self.condition
        out = frame
        if self._band is not None:
            out = self._band(out)
        if self._up is not None:
            narrow = out[::2]  # band-limited below 4 kHz, so decimation does not alias
            pcm = np.clip(np.round(narrow * 32768.0), -32768, 32767).astype(np.int16)
            narrow = ulaw_decode(ulaw_encode(pcm)).astype(np.float64) / 32768.0
            stuffed = np.zeros(len(out))
            stuffed[::2] = narrow
            out = self._up(stuffed)
        if c.loss > 0.0 and self.rng.random() < c.loss:
            self.lost += 1
            return np.zeros(len(frame))
        return out
