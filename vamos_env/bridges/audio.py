"""Audio plumbing the bridges share: one streaming resampler, PCM16 and mu-law bytes, and a
playback buffer for audio that arrives faster than real time.

- ``Resampler(rate_in, rate_out)``: rational resampling of a stream of float chunks
  (any sizes, in order) as a polyphase windowed-sinc FIR. The filter is the line's design
  (``line.band_pass_taps``: Hamming-windowed sinc), a low-pass at 45% of the lower rate,
  ``2 * taps_per_phase * max(up, down) + 1`` taps at the intermediate rate; only the
  outputs kept are computed. Its history and output phase run across chunks, so any
  chunking gives the same samples as the whole signal at once: no click at a chunk edge.
  ``n`` input samples give ``ceil(n * up / down)`` output samples in all (a 20 ms frame of
  16 kHz gives exactly 480 samples at 24 kHz, 160 at 8 kHz). The filter delays by
  ``delay_s``; ``flush`` pushes the rest of the filter out with zeros.
- ``resample_whole``: a whole signal (one utterance) resampled, the delay taken out.
- ``pcm_bytes``/``pcm_audio``: float samples <-> PCM16 little-endian bytes
  (``dsp.to_pcm16``/``dsp.from_pcm16``).
- ``mulaw_bytes``/``mulaw_audio``: float samples <-> G.711 mu-law bytes
  (``line.ulaw_encode``/``line.ulaw_decode``).
- ``Playback``: the other side's audio queued for playing, taken a frame at a time, with
  the samples played of each item (for truncating what the caller heard) and marks that are
  done once the audio before them has played (Twilio's ``mark``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from vamos_env.channel.audio.dsp import RATE, Audio, from_pcm16, to_pcm16
from vamos_env.duplex.line import band_pass_taps, ulaw_decode, ulaw_encode

TAPS_PER_PHASE = 64


# -- resampling -----------------------------------------------------------------------------------
@lru_cache(maxsize=32)
def _polyphase(up: int, down: int, taps_per_phase: int) -> npt.NDArray[np.float64]:
    """The filter's taps by phase: row ``p`` holds ``h[p], h[p + up], ...`` (read-only)."""
    length = 2 * taps_per_phase * max(up, down) + 1
    # at the intermediate rate (rate_in * up), 45% of the lower rate; gain ``up`` makes
    # up for the zeros stuffed between the input samples
    h = up * band_pass_taps(0.0, 0.45 * min(up, down), rate=up * down, taps=length)
    per_phase = -(-length // up)
    padded = np.zeros(per_phase * up)
    padded[:length] = h
    phases = padded.reshape(per_phase, up).T.copy()
    phases.flags.writeable = False
    return phases


class Resampler:
    """A streaming rational resampler from ``rate_in`` to ``rate_out`` (see the module's
    docstring). ``Resampler(24_000)`` goes to the line's 16 kHz."""

    def __init__(
        self, rate_in: int, rate_out: int = RATE, taps_per_phase: int = TAPS_PER_PHASE
    ) -> None:
        g = math.gcd(rate_in, rate_out)
        self.rate_in, self.rate_out = rate_in, rate_out
        self.up, self.down = rate_out // g, rate_in // g
        self.identity = self.up == self.down
        self._phases = (
            np.ones((1, 1)) if self.identity else _polyphase(self.up, self.down, taps_per_phase)
        )
        self.k = self._phases.shape[1]  # taps per phase: input samples each output reads
        self._reversed = self._phases[:, ::-1].copy()  # to meet a window oldest sample first
        # the filter's group delay, at the intermediate rate
        self._delay = 0 if self.identity else taps_per_phase * max(self.up, self.down)
        self.reset()

    @property
    def delay_s(self) -> float:
        """How late the output is against the input, in seconds."""
        return self._delay / (self.rate_in * self.up)

    @property
    def delay_out(self) -> int:
        """The delay in output samples (rounded)."""
        return round(self._delay / self.down)

    def reset(self) -> None:
        """Forget the stream: the next chunk starts a new one."""
        self._history = np.zeros(self.k - 1)
        self._consumed = 0  # input samples taken so far
        self._made = 0  # output samples given so far

    def __call__(self, samples: Audio) -> Audio:
        samples = np.asarray(samples, dtype=np.float64)
        if self.identity:
            return samples.copy()
        x = np.concatenate([self._history, samples])
        total = self._consumed + len(samples)
        stop = -(-total * self.up // self.down)  # ceil: output m reads input m*down//up
        out = np.empty(max(stop - self._made, 0))
        if len(out):
            windows = sliding_window_view(x, self.k)  # windows[t] = x[t : t + k], a view
            for first in range(min(self.up, len(out))):
                # outputs first, first + up, ... share a phase; their windows step by ``down``
                m = self._made + first
                pos = m * self.down
                start = pos // self.up - self._consumed  # the window ending at input m*down//up
                rows = windows[
                    start : start + (len(out) - first - 1) // self.up * self.down + 1 : self.down
                ]
                # one dot per row, in the same order whatever the chunking: identical samples
                out[first :: self.up] = np.einsum("ij,j->i", rows, self._reversed[pos % self.up])
        self._history = x[len(x) - (self.k - 1) :]
        self._consumed = total
        self._made = int(stop)
        return out

    def flush(self) -> Audio:
        """The rest of the filter's response to what went in (the stream then goes on as if
        that much silence had come)."""
        return np.zeros(0) if self.identity else self(np.zeros(self.k))


def resample_whole(audio: Audio, rate_in: int, rate_out: int = RATE) -> Audio:
    """A whole signal resampled with the streaming filter, its delay taken out:
    ``round(n * rate_out / rate_in)`` samples, aligned with the input."""
    r = Resampler(rate_in, rate_out)
    full = np.concatenate([r(audio), r.flush()])
    n = round(len(audio) * rate_out / rate_in)
    return full[r.delay_out : r.delay_out + n]


# -- bytes ----------------------------------------------------------------------------------------
def pcm_bytes(audio: Audio) -> bytes:
    """Float samples as PCM16 little-endian bytes."""
    return to_pcm16(np.asarray(audio, dtype=np.float64)).astype("<i2").tobytes()


def pcm_audio(data: bytes) -> Audio:
    """PCM16 little-endian bytes (an even count) as float samples."""
    return from_pcm16(np.frombuffer(data, dtype="<i2"))


def mulaw_bytes(audio: Audio) -> bytes:
    """Float samples (8 kHz for G.711) as mu-law bytes, one a sample."""
    return ulaw_encode(to_pcm16(np.asarray(audio, dtype=np.float64))).tobytes()


def mulaw_audio(codes: bytes) -> Audio:
    """G.711 mu-law bytes as float samples."""
    return from_pcm16(ulaw_decode(np.frombuffer(codes, dtype=np.uint8)))


# -- playback -------------------------------------------------------------------------------------
class Playback:
    """Audio waiting to be played (it arrives faster than real time), taken a frame at a time.

    ``push(audio, item)`` queues audio, optionally of an item (any hashable key, e.g. a
    Realtime item id): ``played_of[item]`` counts its samples played. ``take(n)`` gives the
    next ``n`` samples (silence where none is queued). ``clear()`` drops what has not played
    and returns the items it dropped audio of, in order.

    Positions count samples over the whole call: ``queued`` (ever queued, dropped ones
    included), ``played`` (played or dropped), ``pending`` (waiting). ``mark(name)`` sits
    after the audio queued so far and is done once playback has passed it, or a clear has
    dropped the audio before it; ``marks_done()`` gives (and forgets) the marks now done."""

    def __init__(self) -> None:
        self._chunks: deque[tuple[Audio, Hashable | None]] = deque()
        self.queued = 0
        self.played = 0
        self.played_of: dict[Hashable, int] = {}
        self._marks: deque[tuple[int, str]] = deque()

    @property
    def pending(self) -> int:
        return self.queued - self.played

    def push(self, audio: Audio, item: Hashable | None = None) -> None:
        if len(audio):
            self._chunks.append((np.asarray(audio, dtype=np.float64), item))
            self.queued += len(audio)

    def mark(self, name: str) -> None:
        self._marks.append((self.queued, name))

    def take(self, samples: int) -> Audio:
        out = np.zeros(samples)
        filled = 0
        while filled < samples and self._chunks:
            chunk, item = self._chunks[0]
            piece = chunk[: samples - filled]
            out[filled : filled + len(piece)] = piece
            filled += len(piece)
            if item is not None:
                self.played_of[item] = self.played_of.get(item, 0) + len(piece)
            if len(piece) == len(chunk):
                self._chunks.popleft()
            else:
                self._chunks[0] = (chunk[len(piece) :], item)
        self.played += filled
        return out

    def clear(self) -> list[Hashable]:
        dropped: list[Hashable] = []
        for _, item in self._chunks:
            if item is not None and item not in dropped:
                dropped.append(item)
        self._chunks.clear()
        self.played = self.queued
        return dropped

    def marks_done(self) -> list[str]:
        done = []
        while self._marks and self._marks[0][0] <= self.played:
            done.append(self._marks.popleft()[1])
        return done


__all__ = [
    "Playback",
    "Resampler",
    "mulaw_audio",
    "mulaw_bytes",
    "pcm_audio",
    "pcm_bytes",
    "resample_whole",
]
