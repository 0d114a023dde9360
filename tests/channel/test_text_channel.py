"""The text channel: identity when clean, rates within the parameter file's bands, bursts, seeds."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from vamos_env.channel import (
    BACKGROUNDS,
    BackgroundName,
    TextChannel,
    measure_rates,
    shipped_parameters,
    word_error_rate,
    word_errors,
)
from vamos_env.channel.parameters import (
    ChannelParameters,
    Expected,
    ParameterFileError,
    parse_parameters,
)
from vamos_env.channel.rates import MeasuredRates
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


def channel(background: BackgroundName, level: int = 25, seed: int = 0) -> TextChannel:
    return TextChannel(background, np.random.default_rng(seed), level)


def with_condition(background: BackgroundName, level: int, **changes: Any) -> ChannelParameters:
    """The shipped parameters with one condition's fields changed."""
    raw = shipped_parameters().model_dump(mode="json")
    raw["backgrounds"][background]["levels"][str(level)].update(changes)
    return parse_parameters(raw)


def assert_in_bands(rates: MeasuredRates, expected: Expected) -> None:
    assert rates.word_error_rate in expected.word_error_rate, rates.word_error_rate
    assert rates.spurious_turns_per_turn in expected.spurious_turns_per_turn, rates
    assert rates.barge_in_rate in expected.barge_in_rate, rates.barge_in_rate
    if expected.loops_per_turn is not None:
        assert rates.loops_per_turn in expected.loops_per_turn, rates.loops_per_turn


@pytest.mark.parametrize("background", BACKGROUNDS)
def test_the_ideal_recogniser_is_the_identity_in_every_room_and_draws_nothing(
    background: BackgroundName,
) -> None:
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    ideal = TextChannel(background, rng, persona="angry", recogniser="ideal")
    for text in CALLER_TURNS:
        assert ideal.to_agent(text) == [text]
        assert ideal.to_caller(text) == text
    assert ideal.is_identity and ideal.events == []
    assert rng.bit_generator.state == before


def test_an_unknown_recogniser_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"expected one of \['whisper-tiny.en', 'ideal'\]"):
        TextChannel("clean", np.random.default_rng(0), recogniser="perfect")  # type: ignore[arg-type]


def test_a_file_without_a_quiet_condition_keeps_the_clean_room_the_identity() -> None:
    raw = shipped_parameters().model_dump(mode="json")
    raw["backgrounds"]["clean"].pop("quiet", None)
    raw["voices"], raw["personas"] = {}, {}
    old = parse_parameters(raw)
    clean = TextChannel("clean", np.random.default_rng(0), parameters=old, persona="angry")
    assert clean.is_identity and clean.to_agent(CALLER_TURNS[1]) == [CALLER_TURNS[1]]


def test_the_clean_room_has_the_recogniser_in_the_callers_voice() -> None:
    """A quiet room is not a perfect ear: each persona's voice has its measured quiet-room rate."""
    params = shipped_parameters()
    assert params.backgrounds["clean"].quiet is not None
    for persona in ("calm", "angry"):
        clean = TextChannel("clean", np.random.default_rng(0), persona=persona)
        assert not clean.is_identity
        assert clean.condition == params.condition("clean", 25, params.voice_of(persona))
        rates = measure_rates(
            "clean", 25, CALLER_TURNS, AGENT_REPLY, calls=300, seed=3, persona=persona
        )
        assert clean.condition is not None
        assert_in_bands(rates, clean.condition.expected)
        assert rates.spurious_turns_per_turn == 0 and rates.barge_in_rate == 0


def test_each_persona_speaks_with_its_measured_voice() -> None:
    params = shipped_parameters()
    assert params.voice_of("calm") == params.default_voice
    assert params.voice_of("angry") != params.default_voice
    assert params.voice_of("nobody") == params.default_voice  # an unmeasured persona
    angry = TextChannel("street", np.random.default_rng(0), persona="angry")
    calm = TextChannel("street", np.random.default_rng(0), persona="calm")
    assert angry.condition != calm.condition
    # The voices' rooms in their own bands, at the default level.
    for background in ("street", "cafe", "television"):
        condition = params.condition(background, 25, params.voice_of("angry"))
        assert condition is not None
        rates = measure_rates(
            background, 25, CALLER_TURNS, AGENT_REPLY, calls=300, seed=4, persona="angry"
        )
        assert_in_bands(rates, condition.expected)


def test_personas_must_name_voices_of_the_file() -> None:
    raw = shipped_parameters().model_dump(mode="json")
    raw["personas"]["calm"] = "a voice nobody measured"
    with pytest.raises(ParameterFileError, match="personas: expected voices of the file"):
        parse_parameters(raw)
    raw = shipped_parameters().model_dump(mode="json")
    for voice in raw["voices"].values():
        voice["levels"].pop("cafe")
    if raw["voices"]:
        with pytest.raises(ParameterFileError, match="expected the noisy rooms"):
            parse_parameters(raw)


@pytest.mark.parametrize(("background", "level"), CONDITIONS)
def test_rates_fall_in_the_parameter_file_bands(background: BackgroundName, level: int) -> None:
    expected = shipped_parameters().backgrounds[background].levels[str(level)].expected
    rates = measure_rates(background, level, CALLER_TURNS, AGENT_REPLY, calls=250, seed=11)
    assert_in_bands(rates, expected)


def test_harder_levels_are_harder() -> None:
    wer = {
        level: measure_rates(
            "television", level, CALLER_TURNS, AGENT_REPLY, calls=100, seed=3
        ).word_error_rate
        for level in (25, 10, 5)
    }
    assert wer[25] < wer[10] < wer[5]


def test_television_insertions_come_in_bursts_and_cafe_ones_do_not() -> None:
    def clustering(background: BackgroundName, level: int) -> float:
        """P(spurious next turn | spurious now) / P(spurious in a turn)."""
        rates = measure_rates(background, level, CALLER_TURNS, AGENT_REPLY, calls=400, seed=8)
        after_one = [b for call in rates.spurious_by_turn for a, b in pairwise(call) if a]
        flags = [flag for call in rates.spurious_by_turn for flag in call]
        return (sum(after_one) / len(after_one)) / (sum(flags) / len(flags))

    # A spurious turn makes the next one likelier on television (a burst), not in a cafe.
    bursts = shipped_parameters().backgrounds["television"].bursts
    assert bursts is not None
    # With every turn of a burst spurious, the ratio is ((on - 1) / on) / on_fraction.
    burst_ratio = (bursts.on_turns - 1) / bursts.on_turns / bursts.on_fraction
    assert clustering("television", 25) > 0.9 * burst_ratio > 1.0
    assert 0.9 < clustering("cafe", 10) < 1.1


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
    # The shipped emails are always mangled (Whisper tiny misspells the names); half here.
    condition = with_condition("television", 5, email_error_rate=0.5).condition("television", 5)
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
    with pytest.raises(ParameterFileError, match="no levels"):
        parse_parameters(raw)


def test_television_pauses_periodically_and_is_silent_in_the_gaps() -> None:
    bursts = shipped_parameters().backgrounds["television"].bursts
    assert bursts is not None
    cycle = bursts.on_turns + bursts.off_turns
    tv = channel("television", 5, 9)
    speaking = []
    for _ in range(4 * cycle):
        tv.to_agent("Okay.")
        speaking.append(tv.background_speaking)
    assert speaking[: 3 * cycle] == speaking[cycle:]
    assert sum(speaking[:cycle]) == bursts.on_turns
    spurious_turns = {e.turn for e in tv.events if e.kind == "spurious_turn"}
    assert spurious_turns and all(speaking[t - 1] for t in spurious_turns)


def test_loops_come_at_the_configured_rate_and_only_during_bursts() -> None:
    parameters = with_condition("television", 10, repetition_loop_rate=0.5)
    on_turns = loops = 0
    for seed in range(150):
        tv = TextChannel("television", np.random.default_rng(seed), 10, parameters)
        speaking = []
        for text in CALLER_TURNS:
            tv.to_agent(text)
            speaking.append(tv.background_speaking)
        loop_turns = [e.turn for e in tv.events if e.kind == "loop"]
        assert all(speaking[t - 1] for t in loop_turns)
        on_turns += sum(speaking)
        loops += len(loop_turns)
    assert on_turns > 500 and 0.44 < loops / on_turns < 0.56


def test_a_loop_repeats_a_phrase_of_the_recognised_turn_right_after_itself() -> None:
    # No recognition errors and no leaks, so the recognised turn is the caller's text.
    parameters = with_condition(
        "cafe",
        25,
        word_error_rate=0.0,
        email_error_rate=0.0,
        leak_rate=0.0,
        repetition_loop_rate=1.0,
        repetition_repeats=[2, 4],
    )
    cafe = TextChannel("cafe", np.random.default_rng(1), 25, parameters)
    lengths, repeats = set(), set()
    for text in CALLER_TURNS * 10:
        before = len(cafe.events)
        heard = cafe.to_agent(text)[0]
        (loop,) = [e for e in cafe.events[before:] if e.kind == "loop"]
        assert loop.received == heard
        words, phrase = text.split(), loop.sent.split()
        assert 2 <= len(phrase) <= 5 or phrase == words
        matches = [
            (start, k)
            for start in range(len(words) - len(phrase) + 1)
            for k in (2, 3, 4)
            if words[start : start + len(phrase)] == phrase
            and heard.split()
            == [*words[: start + len(phrase)], *phrase * k, *words[start + len(phrase) :]]
        ]
        assert matches, (text, heard)
        lengths.add(len(phrase))
        repeats.add(matches[0][1])
    assert lengths == {2, 3, 4, 5} and repeats == {2, 3, 4}
    one_word = TextChannel("cafe", np.random.default_rng(2), 25, parameters).to_agent("Okay.")[0]
    assert one_word in {"Okay. Okay. Okay.", "Okay. Okay. Okay. Okay.", "Okay. " * 4 + "Okay."}


def test_loop_bands_are_checked_when_present() -> None:
    bursts = shipped_parameters().backgrounds["television"].bursts
    assert bursts is not None
    mean = 0.5 * bursts.on_fraction  # loops at 0.5 per turn, only during bursts
    band = {"low": mean - 0.05, "high": mean + 0.05}
    expected = shipped_parameters().backgrounds["television"].levels["10"].expected
    parameters = with_condition(
        "television",
        10,
        repetition_loop_rate=0.5,
        expected=expected.model_dump() | {"loops_per_turn": band},
    )
    condition = parameters.condition("television", 10)
    assert condition is not None and condition.expected.loops_per_turn is not None
    rates = measure_rates(
        "television", 10, CALLER_TURNS, AGENT_REPLY, calls=100, seed=11, parameters=parameters
    )
    # Loops add words, so only the loop band is held here.
    assert rates.loops_per_turn in condition.expected.loops_per_turn
    wrong = condition.expected.model_copy(
        update={
            "loops_per_turn": condition.expected.loops_per_turn.model_copy(update={"high": 0.1}),
            "word_error_rate": condition.expected.word_error_rate.model_copy(update={"high": 1}),
        }
    )
    with pytest.raises(AssertionError):
        assert_in_bands(rates, wrong)
    no_loops = with_condition("television", 10, repetition_loop_rate=0.0)
    without = measure_rates(
        "television", 10, CALLER_TURNS, AGENT_REPLY, calls=20, seed=11, parameters=no_loops
    )
    assert without.loops_per_turn == 0.0


def test_repetition_repeats_are_validated() -> None:
    for repeats, actual in (([0, 2], r"\(0, 2\)"), ([3, 2], r"\(3, 2\)")):
        with pytest.raises(
            ParameterFileError,
            match=rf"repetition_repeats must be .*1 <= low <= high, got {actual}",
        ):
            with_condition("cafe", 25, repetition_repeats=repeats)
    with pytest.raises(ParameterFileError, match="repetition_loop_rate"):
        with_condition("cafe", 25, repetition_loop_rate=1.5)
    raw = shipped_parameters().model_dump(mode="json")
    raw["backgrounds"]["street"]["speech"] = "none"
    for condition in raw["backgrounds"]["street"]["levels"].values():
        condition.update(leak_rate=0.0, spurious_turn_rate=0.0, repetition_loop_rate=0.1)
    with pytest.raises(ParameterFileError, match="loops need a speech source"):
        parse_parameters(raw)


def test_a_spurious_rate_above_one_gives_several_turns_while_the_room_speaks() -> None:
    parameters = with_condition("street", 25, spurious_turn_rate=2.5, leak_rate=0.0)
    counts = []
    for seed in range(40):
        ch = TextChannel("street", np.random.default_rng(seed), 25, parameters)
        counts.extend(len(ch.to_agent("Yes, that's right.")) - 1 for _ in range(5))
    assert set(counts) == {2, 3}
    assert abs(np.mean(counts) - 2.5) < 0.1
    with pytest.raises(ParameterFileError, match="spurious_turn_rate"):
        with_condition("street", 25, spurious_turn_rate=5.5)
