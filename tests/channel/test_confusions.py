"""Measured substitution tables: used when present, validated, and a no-op when empty."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import yaml
from pydantic import ValidationError

from vamos_env.channel import BackgroundName, TextChannel, shipped_parameters
from vamos_env.channel.parameters import (
    NO_CONFUSIONS,
    ChannelParameters,
    ClassWeights,
    Condition,
    Confusions,
    ParameterFileError,
    parse_parameters,
)
from vamos_env.channel.recognition import DIGIT_CONFUSIONS, Recogniser, token_classes, tokens

ALWAYS_SUBSTITUTE = {
    "word_error_rate": 1.0,
    "substitution": 1.0,
    "deletion": 0.0,
    "insertion": 0.0,
    "digit_deletion": 0.0,
    "email_error_rate": 0.0,
    "leak_rate": 0.0,
    "spurious_turn_rate": 0.0,
    "barge_in_per_minute": 0.0,
}
TABLES = {
    "words": {"bill": ["pill", "build", "be ill"]},
    "digits": {"4": ["1"], "7": ["1", "2"]},
}


def condition(**fields: Any) -> Condition:
    wide = {"low": 0.0, "high": 1.0}
    expected = {"word_error_rate": wide, "spurious_turns_per_turn": wide, "barge_in_rate": wide}
    return Condition.model_validate(fields | {"expected": expected})


def with_confusions(confusions: Any, **changes: Any) -> ChannelParameters:
    """The shipped parameters with confusions, and the street's default level changed."""
    raw = shipped_parameters().model_dump(mode="json")
    raw["confusions"] = confusions
    raw["class_weights"] = {}  # every class at the condition's own rate
    raw["backgrounds"]["street"]["levels"]["25"].update(changes)
    return parse_parameters(raw)


def test_a_substituted_word_becomes_one_of_its_measured_replacements() -> None:
    tables = Confusions.model_validate(TABLES)
    recogniser = Recogniser(condition(**ALWAYS_SUBSTITUTE), np.random.default_rng(0), tables)
    assert {recogniser.transcribe("bill") for _ in range(100)} == {"pill", "build", "be ill"}
    assert {recogniser.transcribe("Bill.") for _ in range(100)} == {"Pill.", "Build.", "Be ill."}
    # Words the table does not know keep the built-in pairs.
    assert recogniser.transcribe("hold") == "cold"


def test_the_channel_passes_the_file_tables_to_its_recogniser() -> None:
    parameters = with_confusions(TABLES, **ALWAYS_SUBSTITUTE)
    street = TextChannel("street", np.random.default_rng(3), 25, parameters)
    heard = {street.to_agent("bill")[0] for _ in range(60)}
    assert heard == {"pill", "build", "be ill"}


def test_misheard_code_digits_follow_the_digit_table_and_fall_back_on_the_built_in_one() -> None:
    tables = Confusions.model_validate(TABLES)
    recogniser = Recogniser(condition(**ALWAYS_SUBSTITUTE), np.random.default_rng(1), tables)
    heard = {recogniser.transcribe("4417-90781") for _ in range(100)}
    # 4 -> 1 and 7 -> 1 or 2 from the table; 1, 9, 0 and 8 from the built-in pairs.
    nine, zero, eight, one = (DIGIT_CONFUSIONS[d] for d in "9081")
    assert heard == {f"11{one}{a}-{nine}{zero}{b}{eight}{one}" for a in "12" for b in "12"}
    # A digit inside an ordinary numeral is misheard the same way.
    assert {recogniser.transcribe("$40") for _ in range(50)} == {"$10", f"$4{zero}"}


def test_empty_tables_change_nothing_for_a_fixed_seed() -> None:
    # Transcripts captured from the channel before the tables (and loops) existed.
    parameters = parse_parameters(FROZEN_PARAMETERS)
    assert parameters.confusions == NO_CONFUSIONS
    for background, expected in BEFORE_TABLES.items():
        channel = TextChannel(background, np.random.default_rng(7), 25, parameters)
        got = [(channel.to_agent(turn), channel.to_caller(REPLY)) for turn in TURNS]
        assert got == expected, background


@pytest.mark.parametrize(
    ("confusions", "message"),
    [
        ({"words": {"Bill": ["pill"]}}, r"expected keys that are one lower-case word, got 'Bill'"),
        ({"words": {"pay bill": ["pill"]}}, r"one lower-case word, got 'pay bill'"),
        ({"words": {"bill": []}}, r"words\['bill'\]: expected at least one replacement, got none"),
        ({"words": {"bill": ["bill"]}}, r"words\['bill'\]: expected lower-case .* got 'bill'"),
        ({"words": {"bill": ["Pill"]}}, r"words\['bill'\]: expected lower-case .* got 'Pill'"),
        ({"words": {"bill": ["be  ill"]}}, r"single-spaced, got 'be  ill'"),
        ({"digits": {"x": ["1"]}}, r"digits: expected keys '0'..'9', got 'x'"),
        ({"digits": {"4": ["12"]}}, r"digits\['4'\]: expected single digits .* got '12'"),
        ({"digits": {"4": ["4"]}}, r"digits\['4'\]: expected single digits .* than '4', got '4'"),
        ({"digits": {"4": []}}, r"digits\['4'\]: expected at least one digit, got none"),
        ({"phrases": {}}, r"confusions.phrases"),
    ],
)
def test_invalid_tables_say_what_was_expected_and_what_arrived(
    confusions: dict[str, Any], message: str
) -> None:
    with pytest.raises(ParameterFileError, match=message):
        with_confusions(confusions)


def test_a_file_without_the_new_fields_still_parses() -> None:
    raw = shipped_parameters().model_dump(mode="json")
    del raw["confusions"]
    for background in raw["backgrounds"].values():
        for level in background.get("levels", {}).values():
            for name in ("repetition_loop_rate", "repetition_repeats"):
                del level[name]
            del level["expected"]["loops_per_turn"]
    parameters = parse_parameters(raw)
    assert parameters.confusions == NO_CONFUSIONS
    cafe = parameters.condition("cafe", 25)
    assert cafe is not None
    assert (cafe.repetition_loop_rate, cafe.repetition_repeats) == (0.0, (2, 4))
    assert cafe.expected.loops_per_turn is None


def test_tables_survive_a_round_trip_through_yaml() -> None:
    # "no", "on" and digit strings are where YAML 1.1 would read booleans and numbers.
    words = TABLES["words"] | {"no": ["now"], "on": ["an", "off"]}
    parameters = with_confusions({"words": words, "digits": TABLES["digits"] | {"0": ["8"]}})
    text = yaml.safe_dump(parameters.model_dump(mode="json"), allow_unicode=True)
    assert parse_parameters(yaml.safe_load(text)) == parameters


def _condition_before_tables() -> dict[str, Any]:
    wide = {"low": 0, "high": 1}
    return {
        "word_error_rate": 0.41,
        "substitution": 0.55,
        "deletion": 0.25,
        "insertion": 0.2,
        "digit_deletion": 0.5,
        "email_error_rate": 0.45,
        "leak_rate": 0.6,
        "spurious_turn_rate": 0.95,
        "barge_in_per_minute": 22.0,
        "expected": {
            "word_error_rate": wide,
            "spurious_turns_per_turn": wide,
            "barge_in_rate": wide,
        },
    }


# A parameter file of its own, so regenerating the shipped one does not move this test.
FROZEN_PARAMETERS: dict[str, Any] = {
    "source": "assumed",
    "speaking_rate_wpm": 150,
    "reference_agent_words": 25,
    "backgrounds": {
        "clean": {"description": "quiet"},
        "street": {
            "description": "street",
            "speech": "street",
            "levels": {"25": _condition_before_tables()},
        },
        "cafe": {
            "description": "cafe",
            "speech": "cafe",
            "levels": {"25": _condition_before_tables()},
        },
        "television": {
            "description": "television",
            "speech": "television",
            "bursts": {"on_turns": 4, "off_turns": 6},
            "levels": {"25": _condition_before_tables()},
        },
    },
}
TURNS = [
    "Hi, I'd like to pay my bill please.",
    "My account number is 4417-90781.",
    "Dana Whitfield.",
    "The card on file ends in 4242.",
    "The email is dana.whitfield@example.com.",
    "Okay, I'll hold.",
    "I paid $120.00 on September 8th.",
    "Yes, that's right, my postal code is 15213.",
]
REPLY = "Thank you, I can see the account and the bill of this month now."
BEFORE_TABLES: dict[BackgroundName, list[tuple[list[str], str]]] = {
    "television": [
        (["Hi, I'd luke uh to pay mys bell please."], REPLY),
        (["My account number is 4190781."], REPLY),
        (["Dana Whitfiald."], REPLY),
        (["The car um on filu ends in 4202."], REPLY),
        (
            [
                "The the phone os danu.whitfield@example.com.",
                "Privacy advocates praesed tha decision uh keep and data on the phone.",
            ],
            "Thank",
        ),
        (
            [
                "um Okay, and I'll hold. tonight's",
                "the That's all for tuch uh roundup, thanks for watching.",
            ],
            "Thank you, I can see the account",
        ),
        (
            ["paid $124.00 on a September .", "Good evening, are tonight's technology headlinis."],
            "Thank",
        ),
        (
            [
                "long on one so Yes, thot's right, my postal code is 15213.",
                "A chip uh maker says its new laptop processar rens twice long on one so charge.",
            ],
            "Thank",
        ),
    ],
    "cafe": [
        (
            ["Hi, I'd liki so to pay my bell for here pleose.", "one mediim drap coffee for here"],
            "Thank you, I",
        ),
        (
            ["My a count os 01790761.", "tho wufi the password is on the boird"],
            "Thank you, I can see",
        ),
        (["the sugar um Dana .", "could you pass the sugur"], "Thank you, I can"),
        (["so The card in filu ends in 02.", "my just git a puppy"], "Thank"),
        (["The is danadotwhitfieldatexample.com.", "no I told her wu'd miet at sux"], REPLY),
        (
            ["Okay, I'll hold. in the spring", "she's moving to Denver an the and spring"],
            "Thank you, I can see the",
        ),
        (
            [
                "I paid $120.00 in i keep telling Siptember 8th.",
                "that's and what I keep telling hom",
            ],
            "Thank you, I can see the account and the bill of",
        ),
        (
            [
                "went Yes, that's the right, my postal code is 12.",
                "he said the interview went the well",
            ],
            "Thank you, I can see the",
        ),
    ],
}


def test_token_classes_follow_tokens_one_for_one() -> None:
    text = "Hi. I'd pay $40.00 on September 17. It's 4944-29875, Kwame Novak, jane@x.com!"
    classes = token_classes(text)
    assert len(classes) == len(tokens(text))
    named = dict(zip(tokens(text), classes, strict=True))
    assert named["hi"] == "other" and named["i'd"] == "other"  # sentence start, pronoun
    assert named["september"] == named["kwame"] == named["novak"] == "name"
    assert named["$40.00"] == named["17"] == "number"
    assert classes.count("code") == 9 and named["jane@x.com"] == "email"


def test_class_weights_move_errors_onto_names() -> None:
    condition = condition_with(word_error_rate=0.2)
    weights = ClassWeights(name=3.0, number=1.0, code=1.0, other=0.0)
    recogniser = Recogniser(condition, np.random.default_rng(0), weights=weights)
    text = "Please ask Dana Whitfield about it today"
    missed = {"dana": 0, "whitfield": 0, "other": 0}
    for _ in range(2000):
        heard = recogniser.transcribe(text).lower().split()
        for name in ("dana", "whitfield"):
            missed[name] += name not in heard
        missed["other"] += any(w not in heard for w in ("please", "ask", "about", "it", "today"))
    assert missed["other"] == 0
    assert all(abs(missed[n] / 2000 - 0.6) < 0.04 for n in ("dana", "whitfield"))
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        ClassWeights(name=-1.0)


def test_plain_weights_leave_the_random_stream_alone() -> None:
    condition = condition_with(word_error_rate=0.3)
    text = "My name is Dana Whitfield and my account is 4417-90781."
    plain = Recogniser(condition, np.random.default_rng(5))
    ones = Recogniser(condition, np.random.default_rng(5), weights=ClassWeights())
    assert [plain.transcribe(text) for _ in range(50)] == [ones.transcribe(text) for _ in range(50)]


def condition_with(word_error_rate: float) -> Condition:
    """Errors are deletions only, so a missed word is simply absent."""
    return condition(
        **ALWAYS_SUBSTITUTE
        | {"word_error_rate": word_error_rate, "substitution": 0.0, "deletion": 1.0}
        | {"digit_deletion": 1.0}
    )
