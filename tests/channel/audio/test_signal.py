"""The audio channel's numpy parts, which run without the extra."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from vamos_env.channel.audio.calibration import (
    Measurement,
    _backgrounds,
    _condition,
    _confusions,
    _levels,
    align,
    class_weights,
    exam_corpus,
    measured_bursts,
    normalise_transcript,
)
from vamos_env.channel.audio.channel import spoken_form
from vamos_env.channel.audio.dsp import ratio_for_level, resample, rms
from vamos_env.channel.audio.vad import WINDOW, whole_windows, window_levels_dbfs
from vamos_env.channel.recognition import repetition_loop


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


def test_spoken_form_reads_codes_and_emails() -> None:
    said = spoken_form("Account 44719023, email jane.doe@example.com.")
    assert said == "Account 4 4 7 1 9 0 2 3, email jane dot doe at example dot com"


def test_normalise_and_align_count_error_kinds() -> None:
    heard = normalise_transcript("My email is jane.doe at example.com, account 4471903")
    assert "jane.doe@example.com" in heard
    a = align("My email is jane.doe@example.com, account 44719023", heard)
    assert (a.substitutions, a.deletions, a.insertions) == (0, 1, 0)
    assert a.digit_deletions == 1


def test_normalising_treats_house_style_as_no_error() -> None:
    said = normalise_transcript("I'll pay $75.00 on September 17, 2026.")
    heard = normalise_transcript("I'll pay $75 on September 17th, 2026.")
    a = align(said, heard)
    assert (a.substitutions, a.deletions, a.insertions) == (0, 0, 0)
    assert normalise_transcript("about 1,200 kWh") == "about 1200 kwh"


def test_alignment_lists_the_substitutions_in_order() -> None:
    a = align("The name is Kwame Novak", "The name is Queen Nova")
    assert a.substituted == (("kwame", "queen"), ("novak", "nova"))


@pytest.mark.parametrize(
    ("reference", "hypothesis", "loop"),
    [
        ("I'd like to pay my bill", "I'd like to pay I'd like to pay my bill", (1, 4)),
        ("Yes go ahead", "Yes go ahead go ahead go ahead go ahead", (3, 6)),
        ("no no", "no no", (0, 0)),  # the caller said it twice: not a loop
        ("no no", "no no no no", (1, 2)),  # ... but four times is: "no no" once more
        ("Yes please", "yes yes yes please", (2, 2)),
        ("Yes please", "yes yes please", (0, 0)),  # one word twice is a stutter, not a loop
        ("It's 4 4 1 7", "It's 4 4 1 7", (0, 0)),  # digits that repeat in the reference
    ],
)
def test_repetition_loops_are_counted_against_the_reference(
    reference: str, hypothesis: str, loop: tuple[int, int]
) -> None:
    assert repetition_loop(reference, hypothesis) == loop


def test_a_condition_is_derived_from_its_counts() -> None:
    m = Measurement("television", 10, turns=20, words=200, substitutions=12, deletions=6)
    m.insertions, m.leaks, m.leaked_words, m.loops, m.looped_words = 9, 2, [3, 2], [2], 2
    m.spurious, m.replies_cut, m.emails, m.emails_wrong = 4, 5, 2, 1
    m.digit_errors, m.digit_deletions = 4, 1
    m.speaking = [True] * 8 + [False] * 12
    c = _condition(m, minutes_per_reply=10 / 60)
    assert c["word_error_rate"] == round((25 - 5) / 200, 3)  # leaked words apart
    assert c["substitution"] + c["deletion"] + c["insertion"] == pytest.approx(1.0)
    assert (c["substitution"], c["deletion"]) == (0.6, 0.3)  # 12, 6 and 2 of 20 errors
    assert c["leak_rate"] == round(2 / 20 / 0.4, 3) and c["leak_words"] == [2, 3]
    assert c["repetition_loop_rate"] == round(1 / 20 / 0.4, 3)
    assert c["repetition_repeats"] == [2, 2]
    assert c["spurious_turn_rate"] == round(4 / 20 / 0.4, 3)
    assert c["digit_deletion"] == 0.25 and c["email_error_rate"] == 0.5
    assert c["expected"]["word_error_rate"] == {"low": 0.068, "high": 0.203}
    assert c["expected"]["loops_per_turn"] == {"low": 0.025, "high": 0.075}


def test_confusions_keep_words_and_digits_most_frequent_first() -> None:
    m = Measurement("street", 25)
    m.substituted = [("kwame", "queen")] * 3 + [("kwame", "come")] * 2 + [("4", "0")] * 2
    m.substituted += [("$75", "75")] * 2 + [("august", "this"), ("9", "1")]  # format; once
    table = _confusions([m])
    assert table == {"words": {"kwame": ["queen", "come"]}, "digits": {"4": ["0"]}}


def test_bad_command_arguments_say_what_was_expected() -> None:
    assert _levels("25,10") == [25, 10]
    with pytest.raises(argparse.ArgumentTypeError, match="expected whole dB levels"):
        _levels("25,loud")
    with pytest.raises(argparse.ArgumentTypeError, match="expected backgrounds from"):
        _backgrounds("street,clean")


def test_the_corpus_comes_from_the_exam_and_the_seed() -> None:
    corpus = exam_corpus(turns=30, seed=3)
    assert len(corpus) == 30 and len(set(corpus)) == 30
    assert corpus == exam_corpus(turns=30, seed=3)
    assert sum("@" in turn for turn in corpus) == 6
    assert any(any(ch.isdigit() for ch in turn) for turn in corpus)


def test_levels_are_smoothed_per_window_and_chunks_are_whole_windows() -> None:
    loud = np.full(4 * WINDOW, 0.1)
    levels = window_levels_dbfs(loud, smoothing=0.2, start=-100.0)
    assert levels[0] == pytest.approx(-100 + 0.2 * (-20 + 100))
    assert levels[-1] < -20 and levels[-1] > levels[0]
    assert whole_windows(1) == WINDOW and whole_windows(WINDOW) == WINDOW


def test_bursts_are_measured_in_caller_turns() -> None:
    m = Measurement("television", 25)
    m.speaking = [True, True, True, False, False, False, False, True, True, True, False, False]
    assert measured_bursts(m) == {"on_turns": 3, "off_turns": 3}
    m.speaking = [True] * 5
    assert measured_bursts(m) == {"on_turns": 5, "off_turns": 1}


def test_alignment_marks_the_reference_words_missed() -> None:
    a = align("The name is Kwame Novak please", "The name is Queen please")
    assert a.missed == (3, 4)  # kwame substituted, novak deleted


def test_class_weights_are_miss_rates_over_the_pooled_rate_with_a_prior() -> None:
    m = Measurement("street", 25)
    m.class_tokens.update({"name": 20, "number": 20, "code": 60, "other": 100})
    m.class_missed.update({"name": 8, "number": 2, "code": 6, "other": 4})
    weights = class_weights([m], prior_tokens=20)
    pooled = 20 / 200
    assert weights["name"] == round((8 + 20 * pooled) / 40 / pooled, 3)  # 2.5
    assert weights["other"] == round((4 + 20 * pooled) / 120 / pooled, 3)
    assert class_weights([Measurement("clean", 25)]) == dict.fromkeys(
        ("name", "number", "code", "other"), 1.0
    )


def _street_like(**changes: object) -> Measurement:
    """A measurement shaped like the shipped street-at-25-dB condition (80 turns)."""
    m = Measurement("street", 25, turns=80, words=900, substitutions=34, deletions=6,
                    insertions=2, digit_errors=15, digit_deletions=2, emails=6, emails_wrong=6,
                    spurious=0, replies_cut=0, speaking=[True] * 80)  # fmt: skip
    for key, value in changes.items():
        setattr(m, key, value)
    return m


def test_a_re_measurement_within_sampling_error_keeps_the_file() -> None:
    from vamos_env.channel.audio.calibration import sampling_disagreements

    entry = _condition(_street_like(), 25 / 150)
    # Another build moves a few transcripts: a few more errors, a dropped digit more.
    moved = _street_like(substitutions=38, deletions=9, digit_deletions=4)
    assert sampling_disagreements(moved, entry) == []
    assert sampling_disagreements(_street_like(), entry) == []


@pytest.mark.parametrize(
    "regression",
    [
        {"substitutions": 120},  # the recogniser got much worse
        {"deletions": 60, "substitutions": 10},  # words dropped instead of misheard
        {"spurious": 25},  # the detector opens turns on street noise
        {"replies_cut": 30},  # and cuts replies
        {"emails_wrong": 0},  # emails suddenly perfect: a different recogniser
    ],
)
def test_a_real_regression_falls_outside_the_bands(regression: dict[str, int]) -> None:
    from vamos_env.channel.audio.calibration import sampling_disagreements

    entry = _condition(_street_like(), 25 / 150)
    assert sampling_disagreements(_street_like(**regression), entry)


def test_provenance_differences_name_what_moved() -> None:
    from vamos_env.channel.audio.provenance import differences, recorded_on

    here = recorded_on()
    assert differences(here, here) == []
    older = {**here, "libraries": {**here["libraries"], "ctranslate2": "4.6.0"}}
    [line] = differences(older, here)
    assert line.startswith("libraries.ctranslate2: recorded '4.6.0'")
