"""The audio channel's numpy parts, which run without the extra."""

from __future__ import annotations

import numpy as np

from vamos_env.channel.audio.calibration import align, normalise_transcript
from vamos_env.channel.audio.channel import detect_speech, spoken_form
from vamos_env.channel.audio.dsp import RATE, ratio_for_level, resample, rms


def test_resample_22050_to_16k_keeps_length_and_pitch() -> None:
    t = np.arange(22050) / 22050
    tone = np.sin(2 * np.pi * 440 * t)
    out = resample(tone, 22050, 16000)
    assert len(out) == 16000
    peak = np.argmax(np.abs(np.fft.rfft(out)))  # 1 Hz bins for a 1 s signal
    assert peak == 440
    assert abs(rms(out) - rms(tone)) < 1e-3


def test_default_level_is_the_published_share() -> None:
    assert abs(ratio_for_level(25) - 0.00316) < 1e-4


def test_detector_finds_a_tone_burst_and_ignores_quiet() -> None:
    audio = np.full(3 * RATE, 1e-4)
    t = np.arange(RATE) / RATE
    audio[RATE : 2 * RATE] += 0.2 * np.sin(2 * np.pi * 1000 * t)
    [(start, end)] = detect_speech(audio)
    assert abs(start - RATE) < 0.05 * RATE and abs(end - 2 * RATE) < 0.05 * RATE


def test_spoken_form_reads_codes_and_emails() -> None:
    said = spoken_form("Account 44719023, email jane.doe@example.com.")
    assert said == "Account 4 4 7 1 9 0 2 3, email jane dot doe at example dot com"


def test_normalise_and_align_count_error_kinds() -> None:
    heard = normalise_transcript("My email is jane.doe at example.com, account 4471903")
    assert "jane.doe@example.com" in heard
    a = align("My email is jane.doe@example.com, account 44719023", heard)
    assert (a.substitutions, a.deletions, a.insertions) == (0, 1, 0)
    assert a.digit_deletions == 1
