"""Real-time factors of the audio channel's engines and detector, and time per caller turn.

Needs the extra (vamos-env[audio]).

Run: .venv/bin/python benchmarks/audio.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from vamos_env.channel.audio import SAMPLE_CORPUS, AudioChannel, missing_reason
from vamos_env.channel.audio.channel import spoken_form
from vamos_env.channel.audio.dsp import RATE
from vamos_env.channel.audio.engines import synthesize, transcribe
from vamos_env.channel.audio.vad import SileroStream, whole_windows


def main() -> None:
    reason = missing_reason()
    if reason:
        raise SystemExit(reason)
    synthesize("Warm up.")
    transcribe(np.zeros(RATE))
    tts, asr, vad = [], [], []
    for text in SAMPLE_CORPUS:
        start = time.perf_counter()
        audio = synthesize(spoken_form(text) + " ")  # the trailing space defeats the cache
        seconds = len(audio) / RATE
        tts.append((time.perf_counter() - start) / seconds)
        start = time.perf_counter()
        transcribe(audio)
        asr.append((time.perf_counter() - start) / seconds)
        clip = np.zeros(whole_windows(len(audio)))
        clip[: len(audio)] = audio
        start = time.perf_counter()
        SileroStream().probabilities(clip)
        vad.append((time.perf_counter() - start) / seconds)
    tts_rtf, asr_rtf = statistics.median(tts), statistics.median(asr)
    print(
        f"Piper RTF median {tts_rtf:.3f}; Whisper RTF median {asr_rtf:.3f}; "
        f"Silero VAD RTF median {statistics.median(vad):.4f}"
    )
    for background in ("clean", "street", "cafe", "television"):
        channel = AudioChannel(background, np.random.default_rng(0))
        start = time.perf_counter()
        for text in SAMPLE_CORPUS:
            channel.to_agent(text)
            channel.to_caller("I can help with that. Let me look at your account for a moment.")
        per_turn = (time.perf_counter() - start) / len(SAMPLE_CORPUS)
        print(f"{background}: {per_turn:.2f} s per caller turn and reply (25 dB)")


if __name__ == "__main__":
    main()
