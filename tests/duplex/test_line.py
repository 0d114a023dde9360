"""Telephony line conditions: G.711 mu-law, the telephone band, seeded frame loss."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

from vamos_env.duplex.engine import FRAME
from vamos_env.duplex.line import Line, line_condition, ulaw_decode, ulaw_encode

RATE = 16_000


def _through(line: Line, audio: np.ndarray) -> np.ndarray:
    return np.concatenate([line(audio[i : i + FRAME]) for i in range(0, len(audio), FRAME)])


def _tone(hz: float, seconds: float = 1.0, level: float = 0.3) -> np.ndarray:
    return level * np.sin(2 * np.pi * hz * np.arange(int(seconds * RATE)) / RATE)


def _gain(line_name: str, hz: float) -> float:
    out = _through(Line(line_condition(line_name), np.random.default_rng(0)), _tone(hz))
    tone = _tone(hz)
    return float(np.sqrt(np.mean(out[4000:] ** 2)) / np.sqrt(np.mean(tone[4000:] ** 2)))


def test_ulaw_matches_the_reference_coder_where_python_still_has_it() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            audioop = importlib.import_module("audioop")  # 3.11/3.12; gone in 3.13
        except ModuleNotFoundError:
            pytest.skip("this Python has no audioop to compare with")
    every = np.arange(-32768, 32768, dtype=np.int16)
    reference = np.frombuffer(audioop.lin2ulaw(every.tobytes(), 2), dtype=np.uint8)
    assert np.array_equal(ulaw_encode(every), reference)
    codes = np.arange(256, dtype=np.uint8)
    decoded = np.frombuffer(audioop.ulaw2lin(codes.tobytes(), 2), dtype=np.int16)
    assert np.array_equal(ulaw_decode(codes), decoded)


def test_ulaw_round_trip_error_is_logarithmic() -> None:
    every = np.arange(-32768, 32768, 7, dtype=np.int16)
    back = ulaw_decode(ulaw_encode(every)).astype(np.int64)
    wide = every.astype(np.int64)
    error = np.abs(back - wide)
    big = np.abs(wide) > 1000
    assert np.max(error[big] / np.abs(wide[big])) < 0.07  # about 3% steps, 6% at most
    assert np.max(error[~big]) <= 64  # small samples keep fine steps
    assert ulaw_encode(np.array([0], dtype=np.int16))[0] == 0xFF


def test_the_telephone_band_passes_speech_frequencies_and_stops_the_rest() -> None:
    for name in ("narrowband", "g711"):
        assert 0.95 < _gain(name, 1000.0) < 1.05
        assert 0.9 < _gain(name, 3000.0) < 1.1
        assert _gain(name, 100.0) < 0.05
        assert _gain(name, 5000.0) < 0.02
    assert _gain("wideband", 5000.0) == pytest.approx(1.0)


def test_frame_loss_is_seeded_and_at_its_rate() -> None:
    audio = _tone(440.0, seconds=40.0)  # 2,000 frames
    first = Line(line_condition("wideband-loss5"), np.random.default_rng(7))
    again = Line(line_condition("wideband-loss5"), np.random.default_rng(7))
    other = Line(line_condition("wideband-loss5"), np.random.default_rng(8))
    a, b, c = _through(first, audio), _through(again, audio), _through(other, audio)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert 60 <= first.lost <= 140  # 5% of 2,000 frames, about 4.5 standard errors
    frames = a.reshape(-1, FRAME)
    silent = np.all(frames == 0, axis=1)
    assert int(silent.sum()) == first.lost


def test_line_names() -> None:
    assert line_condition("wideband").identity
    g711 = line_condition("g711-loss2")
    assert (g711.codec, g711.band_limited, g711.loss, g711.name) == (
        "mulaw",
        True,
        0.02,
        "g711-loss2",
    )
    with pytest.raises(ValueError, match="expected one of"):
        line_condition("satellite")


def _onsets(heard: np.ndarray, settings: object) -> list[float]:
    from vamos_env.duplex.hearing import Onset, StreamingDetector

    detector = StreamingDetector(settings)  # type: ignore[arg-type]
    events = [e for i in range(0, len(heard), FRAME) for e in detector.feed(heard[i : i + FRAME])]
    return [e.start / RATE for e in events if isinstance(e, Onset)]


@pytest.mark.audio
@pytest.mark.parametrize("name", ["narrowband", "g711", "g711-loss2"])
@pytest.mark.parametrize("persona", ["calm", "angry", "sceptic"])
def test_a_listener_on_a_band_limited_line_hears_every_turn(name: str, persona: str) -> None:
    """A sentence, then short replies ("Yes.", "No, that's not right."), in each caller's
    voice down a telephone-band line: the line's detector finds every one, each within
    the recogniser's pre-roll (1 s) of where a wideband listener finds it; the wideband
    detector on the same line misses replies (the faster-whisper export of Silero scores
    telephone-band speech low)."""
    from vamos_env.channel.audio import engines
    from vamos_env.channel.audio.vad import DetectorSettings

    voice = engines.voice_for(persona)
    turns = [
        "My account number is four nine four four, two nine eight seven five.",
        "Yes.",
        "No, that's not right.",
        "Yes, correct.",
    ]
    gap = np.zeros(2 * RATE)
    pieces = [np.zeros(RATE)]
    for text in turns:
        speech = engines.synthesize(text, voice)
        pieces += [0.1 * speech / np.sqrt(np.mean(speech[np.abs(speech) > 0.01] ** 2)), gap]
    audio = np.concatenate(pieces)
    audio = audio[: len(audio) // FRAME * FRAME]
    wide = _onsets(
        _through(Line(line_condition("wideband"), np.random.default_rng(3)), audio),
        DetectorSettings(),
    )
    assert len(wide) == len(turns)
    condition = line_condition(name)
    heard = _through(Line(condition, np.random.default_rng(3)), audio)
    found = _onsets(heard, condition.detector_settings())
    assert len(found) == len(turns), (found, wide)
    assert max(abs(a - b) for a, b in zip(found, wide, strict=True)) < 1.0, (found, wide)
    assert len(_onsets(heard, DetectorSettings())) < len(turns)  # what the model is for


def test_detector_settings_follow_the_line() -> None:
    from vamos_env.channel.audio.vad import DetectorSettings

    assert line_condition("wideband").detector_settings() == DetectorSettings()
    assert line_condition("wideband-loss5").detector_settings().model == "faster-whisper"
    for name in ("narrowband", "g711", "g711-loss2"):
        tuned = line_condition(name).detector_settings()
        assert tuned.model == "silero-release"
        assert tuned.confidence == DetectorSettings().confidence
    stricter = DetectorSettings(confidence=0.8, stop_s=1.0)
    tuned = line_condition("g711").detector_settings(stricter)
    assert (tuned.confidence, tuned.stop_s, tuned.model) == (0.8, 1.0, "silero-release")
    with pytest.raises(ValueError, match="detector model"):
        DetectorSettings(model="webrtc")  # type: ignore[arg-type]
