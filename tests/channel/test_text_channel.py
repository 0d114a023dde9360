"""The text channel: identity when clean, rates within the parameter file's bands, bursts, seeds."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from vamos_env.channel import (
    BACKGROUNDS,
    TextChannel,
    measure_rates,
    shipped_parameters,
    word_error_rate,
    word_errors,
)
from vamos_env.channel.parameters import ParameterFileError, parse_parameters
from vamos_env.channel.recognition import CONFUSABLE, Recogniser, tokens

# Caller turns of the kinds a call has: identity, codes, amounts, an email, requests, answers.
CALLER_TURNS = [
    "Hi, I'd like to pay my bill please.",
    "My account number is 4417-90781.",
    "Dana Whitfield.",
    "The card on file ends in 4242.",
    "My postal code is 15213.",
    "Yes, that's right, go ahead and put it on the card.",
    "Can you tell me why my bill went up this month?",
    "I want to set up a payment plan over six months.",
    "The email is dana.whitfield@example.com.",
    "No, that's not right. It's 4417-90781.",
    "Okay, I'll hold.",
    "I paid $120.00 on September 8th.",
]
AGENT_REPLY = " ".join(["word"] * shipped_parameters().reference_agent_words)
CONDITIONS = [
    (background, int(level))
    for background in BACKGROUNDS
    if background != "clean"
    for level in shipped_parameters().backgrounds[background].levels
]


def channel(background: str, level: int = 25, seed: int = 0) -> TextChannel:
    return TextChannel(background, np.random.default_rng(seed), level)


def test_clean_is_the_identity_and_draws_nothing() -> None:
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    clean = TextChannel("clean", rng)
    for text in CALLER_TURNS:
        assert clean.to_agent(text) == [text]
        assert clean.to_caller(text) == text
    assert clean.is_identity and clean.events == []
    assert rng.bit_generator.state == before


@pytest.mark.parametrize(("background", "level"), CONDITIONS)
def test_rates_fall_in_the_parameter_file_bands(background: str, level: int) -> None:
    expected = shipped_parameters().backgrounds[background].levels[str(level)].expected
    rates = measure_rates(background, level, CALLER_TURNS, AGENT_REPLY, calls=250, seed=11)
    assert rates.word_error_rate in expected.word_error_rate, rates.word_error_rate
    assert rates.spurious_turns_per_turn in expected.spurious_turns_per_turn, rates
    assert rates.barge_in_rate in expected.barge_in_rate, rates.barge_in_rate


def test_harder_levels_are_harder() -> None:
    wer = {
        level: measure_rates(
            "television", level, CALLER_TURNS, AGENT_REPLY, calls=100, seed=3
        ).word_error_rate
        for level in (25, 10, 5)
    }
    assert wer[25] < wer[10] < wer[5]


def test_television_insertions_come_in_bursts_and_cafe_ones_do_not() -> None:
    def clustering(background: str) -> float:
        rates = measure_rates(background, 25, CALLER_TURNS, AGENT_REPLY, calls=400, seed=8)
        after_one = [b for call in rates.spurious_by_turn for a, b in pairwise(call) if a]
        return (sum(after_one) / len(after_one)) / rates.spurious_turns_per_turn

    # A spurious turn makes the next one far likelier on television (a burst), not in a cafe.
    assert clustering("television") > 1.6
    assert 0.5 < clustering("cafe") < 1.5


def test_television_reads_on_where_it_left_off() -> None:
    tv = TextChannel("television", np.random.default_rng(2), 5)
    for _ in range(40):
        tv.to_agent("Okay.")
    sent = [e.sent for e in tv.events if e.kind == "spurious_turn"]
    programme = list(tv._sentences)
    positions = [programme.index(s) for s in sent]
    steps = [(b - a) % len(programme) for a, b in pairwise(positions)]
    assert len(sent) >= 5 and all(step == 1 for step in steps)


def test_all_noise_is_reproducible_from_the_seed() -> None:
    def run(seed: int) -> list[object]:
        tv = channel("television", 10, seed)
        out: list[object] = []
        for text in CALLER_TURNS * 3:
            out.append(tv.to_agent(text))
            out.append(tv.to_caller(AGENT_REPLY))
        return [*out, *tv.events]

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_barge_in_keeps_the_first_part_of_the_reply() -> None:
    tv = channel("television", 5, 1)
    cuts = []
    for _ in range(200):
        tv.to_agent("Okay.")
        heard = tv.to_caller(AGENT_REPLY + " end")
        if heard != AGENT_REPLY + " end":
            cuts.append(heard)
    assert cuts
    for heard in cuts:
        assert (AGENT_REPLY + " end").startswith(heard) and 1 <= len(heard.split()) <= 25


def test_recognition_errors_look_like_a_recogniser() -> None:
    condition = shipped_parameters().condition("television", 5)
    assert condition is not None
    recogniser = Recogniser(condition, np.random.default_rng(0))
    outputs = [recogniser.transcribe("My account number is 4417-90781.") for _ in range(300)]
    dropped = [o for o in outputs if len([c for c in o if c.isdigit()]) == 8]
    assert dropped, "dropped digits in a code read digit by digit"
    emails = {recogniser.transcribe("dana.whitfield@example.com") for _ in range(200)}
    assert len(emails) > 2 and "dana.whitfield@example.com" in emails
    holds = {recogniser.transcribe("hold") for _ in range(200)}
    assert "cold" in holds and CONFUSABLE["zip"] == "lip"


def test_word_errors_counts_code_digits_one_by_one() -> None:
    assert tokens("My account is 4417-90781.") == ["my", "account", "is", *"441790781"]
    assert word_errors("It's 4417-90781.", "It's 441790781") == (0, 10)
    assert word_errors("It's 4417-90781.", "It's 4417-9781") == (1, 10)
    assert word_errors("hold the line", "cold the line uh") == (2, 3)
    assert word_error_rate([("a b", "a b"), ("c d", "c")]) == 0.25


def test_unknown_level_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"expected one of \['25', '10', '5'\] dB, got 17"):
        channel("cafe", 17)


def test_parameter_file_is_strict() -> None:
    raw = shipped_parameters().model_dump(mode="json")
    raw["backgrounds"]["cafe"]["levels"]["25"]["word_error_rat"] = 0.1
    with pytest.raises(ParameterFileError, match="word_error_rat"):
        parse_parameters(raw)
    raw = shipped_parameters().model_dump(mode="json")
    raw["backgrounds"]["street"]["levels"]["25"]["deletion"] = 0.5
    with pytest.raises(ParameterFileError, match="must be 1"):
        parse_parameters(raw)
    raw = shipped_parameters().model_dump(mode="json")
    raw["backgrounds"]["clean"]["levels"] = raw["backgrounds"]["cafe"]["levels"]
    with pytest.raises(ParameterFileError, match="identity"):
        parse_parameters(raw)


def test_television_pauses_periodically_and_is_silent_in_the_gaps() -> None:
    tv = channel("television", 5, 9)
    speaking = []
    for _ in range(40):
        tv.to_agent("Okay.")
        speaking.append(tv.background_speaking)
    assert speaking[:30] == speaking[10:40] and sum(speaking[:10]) == 4  # 4 on, 6 off
    spurious_turns = {e.turn for e in tv.events if e.kind == "spurious_turn"}
    assert spurious_turns and all(speaking[t - 1] for t in spurious_turns)
