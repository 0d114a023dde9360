"""How the calibration assembles the parameter file from measured conditions (no audio needed).

Each condition's measurement is replaced by a made-up one, so what is tested is the file:
the recogniser in the clean room, one profile per caller voice, the persona map, and the
cache that lets an interrupted calibration resume.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from vamos_env.channel.audio import calibration
from vamos_env.channel.audio.calibration import (
    Measurement,
    calibrate,
    measurement_from_json,
    measurement_json,
    voice_label,
)
from vamos_env.channel.audio.engines import PERSONA_VOICES, Voice
from vamos_env.channel.parameters import parse_parameters
from vamos_env.channel.text import TextChannel


def made_up(voice: Voice, background: str, level: int) -> Measurement:
    """A measurement whose error count says which voice and room it came from."""
    hard = {"piper": 2 if voice.pitch == 1.0 else 4, "espeak-ng": 12, "flite": 6}[voice.engine]
    noisy = 0 if background == "clean" else 30 // level
    m = Measurement(background, level)  # type: ignore[arg-type]
    m.turns, m.words = 80, 1000
    m.substitutions, m.deletions, m.insertions = 30 * hard + noisy, 10 * hard, 2
    m.digit_errors, m.digit_deletions = 4 * hard, hard
    m.emails, m.emails_wrong = 6, 5
    m.speaking = [background != "clean"] * 80
    m.spurious = 0 if background in ("clean", "street") else 40
    m.replies_cut = m.spurious // 2
    m.class_tokens = Counter({"name": 50, "number": 20, "code": 200, "other": 800})
    m.class_missed = Counter({"name": 2 * hard, "number": hard, "code": 4 * hard, "other": hard})
    m.substituted = [("novak", "navak"), ("novak", "navak")]
    return m


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, int]]:
    calls: list[tuple[str, str, int]] = []

    def fake(
        folder: Path | None, voice: Voice, background: Any, level: int, seed: int, corpus: Any
    ) -> Measurement:
        calls.append((voice_label(voice), background, level))
        return made_up(voice, background, level)

    monkeypatch.setattr(calibration, "cached_measurement", fake)
    return calls


def test_the_file_has_the_recogniser_in_the_clean_room_and_a_profile_per_voice(
    measured: list[tuple[str, str, int]],
) -> None:
    text = calibrate([25, 10], seed=0, personas=("calm", "angry", "sceptic"))
    raw = yaml.safe_load(text)
    params = parse_parameters(raw)
    assert "Recogniser profile: whisper-tiny.en" in text
    assert "--personas calm,angry,sceptic" in text
    assert params.default_voice == voice_label(PERSONA_VOICES["calm"])
    assert params.personas == {
        p: voice_label(PERSONA_VOICES[p]) for p in ("calm", "angry", "sceptic")
    }
    assert sorted(params.voices) == sorted(
        voice_label(PERSONA_VOICES[p]) for p in ("angry", "sceptic")
    )
    quiet = params.backgrounds["clean"].quiet
    assert quiet is not None and quiet.word_error_rate > 0
    assert quiet.spurious_turn_rate == 0 and quiet.barge_in_per_minute == 0
    # A harder voice has a harder quiet room and harder noisy rooms.
    angry = params.voice_of("angry")
    assert params.voices[angry].clean.word_error_rate > quiet.word_error_rate
    assert (
        params.voices[angry].levels["street"]["25"].word_error_rate
        > params.backgrounds["street"].levels["25"].word_error_rate
    )
    # Every voice is measured in every room at every level, the quiet room once.
    assert len(measured) == 3 * (1 + 3 * 2)


def test_the_assembled_file_is_the_same_bytes_twice(measured: list[Any]) -> None:
    first = calibrate([25], seed=0, personas=("calm", "angry"))
    assert calibrate([25], seed=0, personas=("calm", "angry")) == first


def test_the_channel_uses_the_callers_voice_profile(measured: list[Any]) -> None:
    import numpy as np

    params = parse_parameters(yaml.safe_load(calibrate([25], personas=("calm", "angry"))))
    calm = TextChannel("clean", np.random.default_rng(0), parameters=params, persona="calm")
    angry = TextChannel("clean", np.random.default_rng(0), parameters=params, persona="angry")
    assert calm.condition is not None and angry.condition is not None
    assert angry.condition.word_error_rate > calm.condition.word_error_rate
    assert angry.voice == voice_label(PERSONA_VOICES["angry"])


def test_an_unknown_persona_is_refused() -> None:
    with pytest.raises(ValueError, match="personas: expected some of"):
        calibrate([25], personas=("grumpy",))


def test_a_measurement_survives_the_cache() -> None:
    m = made_up(PERSONA_VOICES["angry"], "cafe", 10)
    assert measurement_from_json(measurement_json(m)) == m


def test_the_cache_reuses_a_measurement_made_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []

    def measure_once(background: Any, level: int, seed: int, corpus: Any, voice: Voice) -> Any:
        made.append(level)
        return made_up(voice, background, level)

    monkeypatch.setattr(calibration, "measure_condition", measure_once)
    voice = PERSONA_VOICES["calm"]
    first = calibration.cached_measurement(tmp_path, voice, "street", 25, 0, ("a turn.",))
    again = calibration.cached_measurement(tmp_path, voice, "street", 25, 0, ("a turn.",))
    assert first == again and made == [25]
    calibration.cached_measurement(tmp_path, voice, "street", 25, 0, ("another corpus.",))
    assert made == [25, 25]


def test_a_kept_file_gives_its_voices_and_only_new_voices_are_measured(
    tmp_path: Path, measured: list[tuple[str, str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    personas = ("calm", "angry", "sceptic")
    first = calibrate([25, 10], seed=0, personas=personas)
    earlier = tmp_path / "earlier.yaml"
    earlier.write_text(first)
    measured.clear()
    again = calibrate([25, 10], seed=0, personas=personas, keep=earlier)
    assert measured == []  # every voice kept
    assert yaml.safe_load(again) == yaml.safe_load(first)
    assert f"--keep {earlier}" in again
    assert (
        again.split("# Measured, by caller voice:")[1]
        == first.split("# Measured, by caller voice:")[1]
    )  # the same table, line for line
    # A persona whose voice changed is measured; the others are still kept.
    monkeypatch.setitem(PERSONA_VOICES, "angry", Voice(pitch=1.3))
    mixed = yaml.safe_load(calibrate([25, 10], seed=0, personas=personas, keep=earlier))
    assert {label for label, _, _ in measured} == {voice_label(Voice(pitch=1.3))}
    assert len(measured) == 1 + 3 * 2
    assert mixed["personas"]["angry"] == voice_label(Voice(pitch=1.3))
    assert mixed["voices"]["flite slt"] == yaml.safe_load(first)["voices"]["flite slt"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda raw: raw["recorded_on"]["cpu"].update(model="Another CPU"), "recorded on"),
        (lambda raw: raw.update(source="defaults"), "expected a calibrated"),
    ],
    ids=["other_machine", "not_calibrated"],
)
def test_a_kept_file_from_elsewhere_is_refused(
    tmp_path: Path, measured: list[Any], change: Any, message: str
) -> None:
    text = calibrate([25, 10], seed=0, personas=("calm",))
    header = text.split("version: 1")[0]
    raw = yaml.safe_load(text)
    change(raw)
    path = tmp_path / "earlier.yaml"
    path.write_text(header + yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(ValueError, match=message):
        calibrate([25, 10], seed=0, personas=("calm",), keep=path)


def test_a_kept_file_of_other_levels_is_refused(tmp_path: Path, measured: list[Any]) -> None:
    path = tmp_path / "earlier.yaml"
    path.write_text(calibrate([25, 10], seed=0, personas=("calm",)))
    with pytest.raises(ValueError, match="levels, seed, corpus, rooms"):
        calibrate([25], seed=0, personas=("calm",), keep=path)
    with pytest.raises(ValueError, match="levels, seed, corpus, rooms"):
        calibrate([25, 10], seed=1, personas=("calm",), keep=path)
