"""Plain numpy signal processing for the audio channel: resampling, filters, levels, dither.

Everything works on float64 mono arrays in [-1, 1]; PCM16 only at the edges.
No scipy: the filters are FFT masks over a whole buffer, which is all a
synthesized background or one caller turn needs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Audio = npt.NDArray[np.float64]

RATE = 16_000  # what the recogniser and the observations use
PIPER_RATE = 22_050


def resample(audio: Audio, source_rate: int, target_rate: int = RATE) -> Audio:
    """Band-limited resampling by FFT; the output has exactly round(n * target / source) samples.

    22,050 -> 16,000 is the ratio 320/441: a naive sample drop would shift the
    voice's pitch and tempo, which is one of the pitfalls the issue names.
    """
    n = len(audio)
    if n == 0 or source_rate == target_rate:
        return audio.astype(np.float64, copy=True)
    m = round(n * target_rate / source_rate)
    spectrum = np.fft.rfft(audio)
    keep = min(len(spectrum), m // 2 + 1)
    out = np.fft.irfft(spectrum[:keep], m)
    return np.asarray(out * (m / n), dtype=np.float64)


def band(audio: Audio, low_hz: float, high_hz: float, rate: int = RATE) -> Audio:
    """Zero every frequency outside [low_hz, high_hz] (a brick-wall FFT filter)."""
    if len(audio) == 0:
        return audio
    spectrum = np.fft.rfft(audio)
    freqs = np.fft.rfftfreq(len(audio), 1.0 / rate)
    spectrum[(freqs < low_hz) | (freqs > high_hz)] = 0.0
    return np.asarray(np.fft.irfft(spectrum, len(audio)), dtype=np.float64)


def rms(audio: Audio) -> float:
    return float(np.sqrt(np.mean(np.square(audio)))) if len(audio) else 0.0


def active_rms(audio: Audio, rate: int = RATE, frame_s: float = 0.03) -> float:
    """RMS over the frames within 30 dB of the loudest: the level of the speech, not its pauses."""
    frame = max(1, int(rate * frame_s))
    usable = len(audio) // frame * frame
    if usable == 0:
        return rms(audio)
    energies = np.mean(np.square(audio[:usable].reshape(-1, frame)), axis=1)
    loud = energies[energies >= energies.max() * 1e-3]
    return float(np.sqrt(np.mean(loud)))


def scale_to(audio: Audio, target_rms: float, measured_rms: float) -> Audio:
    return audio * (target_rms / measured_rms) if measured_rms > 0 else audio


def ratio_for_level(level_db: float) -> float:
    """Noise-to-speech energy ratio for a level key: 25 dB -> about 0.003 (the published 0.3%)."""
    return float(10.0 ** (-level_db / 10.0))


def dither(audio: Audio, rng: np.random.Generator, amplitude: float = 1.0 / 32768) -> Audio:
    """Add one PCM16 step of triangular noise so digital silence never reaches the recogniser."""
    noise = rng.random(len(audio)) - rng.random(len(audio))
    return audio + amplitude * noise


def to_pcm16(audio: Audio) -> npt.NDArray[np.int16]:
    return np.asarray(np.clip(np.round(audio * 32767.0), -32768, 32767), dtype=np.int16)


def from_pcm16(pcm: npt.NDArray[np.int16]) -> Audio:
    return pcm.astype(np.float64) / 32768.0


def silence(seconds: float) -> Audio:
    return np.zeros(round(seconds * RATE), dtype=np.float64)
