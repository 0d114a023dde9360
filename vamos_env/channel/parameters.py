"""The text channel's parameters: what a voice pipeline does to a call, per background and level.

The figures live in ``data/text_channel.yaml`` (its header says where they come
from); this module is their strict schema and loader. A *condition* is one
background at one level. Levels are keyed by the speech-to-noise ratio in dB as a
string ("25", "10", "5"); "25" is the published benchmark's default, noise at 0.3%
of the reference speech energy (10 * log10(1 / 0.003) = 25.2 dB).

Each condition also carries ``expected`` bands: the rates a measurement of the
pipeline gives (or, until the audio channel calibrates them, the rates we
assume). The channel tests check that the model, run over many seeded samples,
lands inside them, so the parameters and the bands cannot drift apart silently.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

BackgroundName = Literal["clean", "street", "cafe", "television"]
BACKGROUNDS: tuple[BackgroundName, ...] = ("clean", "street", "cafe", "television")
SpeechSource = Literal["none", "street", "cafe", "television"]

DEFAULT_LEVEL_DB = 25
PARAMETER_FILE = "text_channel.yaml"
SPEECH_FILE = "background_speech.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Band(_Strict):
    """A closed interval a measured rate must fall in."""

    low: float = Field(ge=0.0)
    high: float = Field(ge=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.low > self.high:
            raise ValueError(f"band low must not exceed high, got [{self.low}, {self.high}]")
        return self

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high


class Expected(_Strict):
    """Rates the pipeline shows in this condition (measured, or assumed until calibrated).

    ``word_error_rate``: word errors per reference word of the caller's turns
    (digits of a code count as words, an email address as one word), leaked
    background words included. ``spurious_turns_per_turn``: spurious turns per
    caller turn. ``barge_in_rate``: share of agent replies of the reference length
    that are cut short.
    """

    word_error_rate: Band
    spurious_turns_per_turn: Band
    barge_in_rate: Band


class Condition(_Strict):
    """One background at one level."""

    # Chance that a caller word (or one digit of a code read digit by digit) is misrecognised.
    word_error_rate: float = Field(ge=0.0, le=1.0)
    # How an ordinary word's error splits; the three shares sum to 1.
    substitution: float = Field(ge=0.0, le=1.0)
    deletion: float = Field(ge=0.0, le=1.0)
    insertion: float = Field(ge=0.0, le=1.0)
    # Share of a code digit's errors that drop the digit (the rest mishear it).
    digit_deletion: float = Field(ge=0.0, le=1.0)
    # Chance an email address comes out mangled.
    email_error_rate: float = Field(ge=0.0, le=1.0)
    # Chance per caller turn that background words leak into the caller's transcript
    # (only while the background speaks), and how many words leak.
    leak_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    leak_words: tuple[int, int] = (1, 3)
    # Chance per caller turn that background speech arrives as a turn of its own
    # (only while the background speaks).
    spurious_turn_rate: float = Field(ge=0.0, le=1.0)
    # False barge-ins per minute of agent speech (only while the background speaks).
    barge_in_per_minute: float = Field(ge=0.0)
    expected: Expected

    @model_validator(mode="after")
    def _shares(self) -> Condition:
        total = self.substitution + self.deletion + self.insertion
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"substitution + deletion + insertion must be 1, got {total:.6f}")
        low, high = self.leak_words
        if not 1 <= low <= high:
            raise ValueError(
                f"leak_words must be [low, high] with 1 <= low <= high, got {low, high}"
            )
        return self


class Bursts(_Strict):
    """A background that speaks in bursts with periodic gaps (a television's news reading).

    The programme runs ``on_turns`` caller turns, pauses ``off_turns``, and so on,
    from a seeded starting point in the cycle. Leaks, spurious turns and barge-ins
    happen only during a burst.
    """

    on_turns: int = Field(ge=1)
    off_turns: int = Field(ge=1)

    @property
    def on_fraction(self) -> float:
        return self.on_turns / (self.on_turns + self.off_turns)


class Background(_Strict):
    description: str
    speech: SpeechSource = "none"
    bursts: Bursts | None = None
    levels: dict[str, Condition] = Field(default_factory=dict)


class ChannelParameters(_Strict):
    version: Literal[1] = 1
    source: Literal["assumed", "calibrated"]
    speaking_rate_wpm: float = Field(gt=0.0)
    # The agent reply length (words) at which ``expected.barge_in_rate`` is stated.
    reference_agent_words: int = Field(gt=0)
    default_level_db: int = DEFAULT_LEVEL_DB
    backgrounds: dict[BackgroundName, Background]

    @model_validator(mode="after")
    def _complete(self) -> ChannelParameters:
        missing = [b for b in BACKGROUNDS if b not in self.backgrounds]
        if missing:
            raise ValueError(f"backgrounds: expected all of {list(BACKGROUNDS)}, missing {missing}")
        if self.backgrounds["clean"].levels:
            raise ValueError("backgrounds.clean: the clean condition is the identity; no levels")
        for name, background in self.backgrounds.items():
            if name == "clean":
                continue
            if str(self.default_level_db) not in background.levels:
                raise ValueError(
                    f"backgrounds.{name}.levels: expected the default level "
                    f"{self.default_level_db!r}, got {sorted(background.levels)}"
                )
            if background.speech == "none" and any(
                c.spurious_turn_rate or c.leak_rate for c in background.levels.values()
            ):
                raise ValueError(
                    f"backgrounds.{name}: spurious turns or leaks need a speech source"
                )
        return self

    def condition(self, background: BackgroundName, level_db: float) -> Condition | None:
        """The condition for a background and level; ``None`` for the clean room."""
        if background not in self.backgrounds:
            raise ValueError(f"background: expected one of {list(BACKGROUNDS)}, got {background!r}")
        if background == "clean":
            return None
        levels = self.backgrounds[background].levels
        key = _level_key(level_db)
        if key not in levels:
            known = sorted(levels, key=float, reverse=True)
            raise ValueError(
                f"level for {background}: expected one of {known} dB, got {level_db!r}"
            )
        return levels[key]


class BackgroundSpeech(_Strict):
    """Our own sentences for what the backgrounds say: tech news, cafe talk, street talk."""

    television: tuple[str, ...] = Field(min_length=1)
    cafe: tuple[str, ...] = Field(min_length=1)
    street: tuple[str, ...] = Field(min_length=1)


class ParameterFileError(ValueError):
    """A channel parameter file that does not match the schema."""


def _level_key(level_db: float) -> str:
    if float(level_db).is_integer():
        return str(int(level_db))
    return str(level_db)


def _read_yaml(name: str) -> Any:
    return yaml.safe_load(resources.files("vamos_env.channel").joinpath("data", name).read_text())


def parse_parameters(raw: Any) -> ChannelParameters:
    try:
        return ChannelParameters.model_validate(raw)
    except ValidationError as exc:
        raise ParameterFileError(f"not a valid channel parameter file:\n{exc}") from exc


@lru_cache(maxsize=1)
def shipped_parameters() -> ChannelParameters:
    """The parameter file that ships with the package."""
    return parse_parameters(_read_yaml(PARAMETER_FILE))


@lru_cache(maxsize=1)
def background_speech() -> BackgroundSpeech:
    return BackgroundSpeech.model_validate(_read_yaml(SPEECH_FILE))
