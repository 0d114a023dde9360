"""Listening to a stream of 20 ms frames: the audio channel's detector, run as a stream.

``SpeechDetector`` (``vamos_env.channel.audio.vad``) scores 32 ms windows with Silero
behind a loudness gate, with the model's state and the smoothed level running across
the call; its start/stop rule runs per chunk. A duplex call needs the rule to run
across frames too (20 ms frames do not line up with 32 ms windows), so
``StreamingDetector`` buffers frames into windows, asks the detector which windows are
voiced, and keeps the same start/stop state machine (start after ``start_s`` of voiced
windows, stop after ``stop_s`` without) across the whole call, reporting each start
and stop as it happens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.channel.audio.vad import WINDOW, DetectorSettings, SpeechDetector


@dataclass(frozen=True)
class Onset:
    """Speech confirmed: it began at ``start`` (sample) and was confirmed at ``at``."""

    start: int
    at: int


@dataclass(frozen=True)
class Offset:
    """Speech stopped: the segment ran [start, end) (samples, no roll); confirmed at ``at``."""

    start: int
    end: int
    at: int


class StreamingDetector:
    """One listener's detector over a call, fed frame by frame."""

    def __init__(self, settings: DetectorSettings | None = None) -> None:
        self.settings = settings or DetectorSettings()
        self._detector = SpeechDetector(self.settings)
        self._pending: Audio = np.zeros(0)
        self._window = 0  # windows scored so far
        self._start_windows = max(1, round(self.settings.start_s * RATE / WINDOW))
        self._stop_windows = max(1, round(self.settings.stop_s * RATE / WINDOW))
        self._streak = 0
        self._begin = -1
        self._last = -1
        self.speaking = False
        self.segment_start = -1  # sample where the current confirmed speech began

    def feed(self, frame: Audio) -> list[Onset | Offset]:
        """The next samples of the stream; the starts and stops they confirm, in order."""
        self._pending = np.concatenate([self._pending, frame])
        usable = len(self._pending) // WINDOW * WINDOW
        if usable == 0:
            return []
        chunk, self._pending = self._pending[:usable], self._pending[usable:]
        events: list[Onset | Offset] = []
        for on in self._detector.voiced(chunk):
            i = self._window
            self._window += 1
            if not self.speaking:
                self._streak = self._streak + 1 if on else 0
                if self._streak == 1:
                    self._begin = i
                if self._streak >= self._start_windows:
                    self.speaking, self._last = True, i
                    self.segment_start = self._begin * WINDOW
                    events.append(Onset(self.segment_start, (i + 1) * WINDOW))
            elif on:
                self._last = i
            elif i - self._last >= self._stop_windows:
                events.append(
                    Offset(self._begin * WINDOW, (self._last + 1) * WINDOW, (i + 1) * WINDOW)
                )
                self.speaking, self._streak = False, 0
        return events
