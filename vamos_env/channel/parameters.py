"""The text channel's parameters: what a voice pipeline does to a call, per background and level.

The figures live in ``data/text_channel.yaml`` (its header says where they come
from); this module is their strict schema and loader. A *condition* is one
background at one level. Levels are keyed by the speech-to-noise ratio in dB as a
string ("25", "10", "5"); "25" is the published benchmark's default, noise at 0.3%
of the reference speech energy (10 * log10(1 / 0.003) = 25.2 dB).

Each condition also carries ``expected`` bands: the call-average rates the audio
channel's measurement gave (``vamos channel calibrate`` writes the file). The
channel tests check that the model, run over many seeded samples,
lands inside them, so the parameters and the bands cannot drift apart silently.

The optional ``confusions`` tables hold what a recogniser was observed to write
instead of a word or a digit; where they are empty the recogniser falls back on
its own built-in pairs.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

BackgroundName = Literal["clean", "street", "cafe", "television"]
BACKGROUNDS: tuple[BackgroundName, ...] = ("clean", "street", "cafe", "television")
SpeechSource = Literal["none", "street", "cafe", "television"]

DEFAULT_LEVEL_DB = 25
PARAMETER_FILE = "text_channel.yaml"
SPEECH_FILE = "background_speech.yaml"
_DIGITS = frozenset("0123456789")


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
    """Rates the pipeline shows in this condition (measured by ``vamos channel calibrate``).

    ``word_error_rate``: word errors per reference word of the caller's turns
    (digits of a code count as words, an email address as one word), leaked
    background words included. ``spurious_turns_per_turn``: spurious turns per
    caller turn. ``barge_in_rate``: share of agent replies of the reference length
    that are cut short. ``loops_per_turn`` (optional): recogniser repetition loops
    per caller turn; the words a loop adds count as insertions in the word error rate.
    """

    word_error_rate: Band
    spurious_turns_per_turn: Band
    barge_in_rate: Band
    loops_per_turn: Band | None = None


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
    # Background turns of their own per caller turn (only while the background speaks): a
    # mean that may pass 1; the model gives its whole part every turn, its fraction by chance.
    spurious_turn_rate: float = Field(ge=0.0, le=5.0)
    # False barge-ins per minute of agent speech (only while the background speaks).
    barge_in_per_minute: float = Field(ge=0.0)
    # Chance per caller turn that the recogniser loops (only while the background speaks):
    # a run of 2-5 words of the turn is written again, this many extra times.
    repetition_loop_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    repetition_repeats: tuple[int, int] = (2, 4)
    expected: Expected

    @model_validator(mode="after")
    def _shares(self) -> Condition:
        total = self.substitution + self.deletion + self.insertion
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"substitution + deletion + insertion must be 1, got {total:.6f}")
        for name in ("leak_words", "repetition_repeats"):
            low, high = getattr(self, name)
            if not 1 <= low <= high:
                raise ValueError(
                    f"{name} must be [low, high] with 1 <= low <= high, got {low, high}"
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


class Confusions(_Strict):
    """Substitutions a recogniser was observed to make, most frequent first.

    ``words``: for a reference word (lower case, one word), what was written
    instead (lower case; may be two words, "paper less"). ``digits``: for a digit
    of a code read digit by digit, the digits it was heard as.
    """

    words: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    digits: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @field_validator("words")
    @classmethod
    def _words(cls, words: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for word, heard in words.items():
            if word.split() != [word] or word != word.lower():
                raise ValueError(
                    f"confusions.words: expected keys that are one lower-case word, got {word!r}"
                )
            if not heard:
                raise ValueError(
                    f"confusions.words[{word!r}]: expected at least one replacement, got none"
                )
            for other in heard:
                if not other or other != " ".join(other.lower().split()) or other == word:
                    raise ValueError(
                        f"confusions.words[{word!r}]: expected lower-case replacements other "
                        f"than the word, single-spaced, got {other!r}"
                    )
        return words

    @field_validator("digits")
    @classmethod
    def _digits(cls, digits: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for digit, heard in digits.items():
            if digit not in _DIGITS:
                raise ValueError(f"confusions.digits: expected keys '0'..'9', got {digit!r}")
            if not heard:
                raise ValueError(
                    f"confusions.digits[{digit!r}]: expected at least one digit, got none"
                )
            for other in heard:
                if other not in _DIGITS or other == digit:
                    raise ValueError(
                        f"confusions.digits[{digit!r}]: expected single digits '0'..'9' other "
                        f"than {digit!r}, got {other!r}"
                    )
        return digits


NO_CONFUSIONS = Confusions()


class ClassWeights(_Strict):
    """How much likelier than average a word of each class is misrecognised.

    A condition's ``word_error_rate`` times its class's weight is the chance for
    that word: a name (a capitalised word mid-sentence), a number or amount, one
    digit of a code read digit by digit, any other word. The calibration measures
    them pooled over every condition, weighted so the corpus's overall rate is
    unchanged; all 1 is the plain rate.
    """

    name: float = Field(default=1.0, ge=0.0)
    number: float = Field(default=1.0, ge=0.0)
    code: float = Field(default=1.0, ge=0.0)
    other: float = Field(default=1.0, ge=0.0)


NO_WEIGHTS = ClassWeights()


class Background(_Strict):
    description: str
    speech: SpeechSource = "none"
    bursts: Bursts | None = None
    levels: dict[str, Condition] = Field(default_factory=dict)
    # The clean room only: the recogniser alone, with no background (any level). Absent,
    # the clean room is the identity (a perfect ear, as files before the recogniser had it).
    quiet: Condition | None = None


class VoiceProfile(_Strict):
    """How the recogniser fares with one caller voice other than the file's default.

    The same rooms and levels as the top level measured with this voice speaking:
    ``clean`` is the quiet room, ``levels`` the noisy ones by background. The rooms'
    own properties (descriptions, speech, bursts) are the top level's.
    """

    class_weights: ClassWeights = NO_WEIGHTS
    confusions: Confusions = NO_CONFUSIONS
    clean: Condition
    levels: dict[BackgroundName, dict[str, Condition]]


class RecordedCpu(_Strict):
    model: str
    isa: tuple[str, ...] = ()


class RecordedOn(_Strict):
    """What a calibration's exact figures depend on (``vamos_env.channel.audio.provenance``)."""

    cpu: RecordedCpu
    libraries: dict[str, str]
    voices: dict[str, str]


RecogniserProfile = Literal["whisper-tiny.en", "ideal"]
# "whisper-tiny.en": the shipped file's measured recogniser. "ideal": no recogniser and no
# detector: every word reaches the agent as said and every reply the caller whole, in every
# room (for ablations: what is left is the agent against the task).
RECOGNISER_PROFILES: tuple[RecogniserProfile, ...] = ("whisper-tiny.en", "ideal")
DEFAULT_RECOGNISER: RecogniserProfile = "whisper-tiny.en"


class ChannelParameters(_Strict):
    """A parameter file. The top level is its default caller voice (``default_voice``);
    ``voices`` hold the other voices measured, and ``personas`` say who speaks with which."""

    version: Literal[1] = 1
    source: Literal["assumed", "calibrated"]
    recogniser: str = "whisper-tiny.en"
    default_voice: str = "piper joe"
    voices: dict[str, VoiceProfile] = Field(default_factory=dict)
    # The caller voice each persona speaks with; a persona not named speaks the default.
    personas: dict[str, str] = Field(default_factory=dict)
    # The machine and libraries the calibration ran on (absent in an assumed file).
    recorded_on: RecordedOn | None = None
    speaking_rate_wpm: float = Field(gt=0.0)
    # The agent reply length (words) at which ``expected.barge_in_rate`` is stated.
    reference_agent_words: int = Field(gt=0)
    default_level_db: int = DEFAULT_LEVEL_DB
    class_weights: ClassWeights = NO_WEIGHTS
    backgrounds: dict[BackgroundName, Background]
    confusions: Confusions = NO_CONFUSIONS

    @model_validator(mode="after")
    def _complete(self) -> ChannelParameters:
        missing = [b for b in BACKGROUNDS if b not in self.backgrounds]
        if missing:
            raise ValueError(f"backgrounds: expected all of {list(BACKGROUNDS)}, missing {missing}")
        if self.backgrounds["clean"].levels:
            raise ValueError(
                "backgrounds.clean: the clean room has no levels (its recogniser is `quiet`)"
            )
        unknown = {p: v for p, v in self.personas.items() if v not in self.voices}
        unknown = {p: v for p, v in unknown.items() if v != self.default_voice}
        if unknown:
            raise ValueError(
                f"personas: expected voices of the file ({[self.default_voice, *self.voices]}),"
                f" got {unknown}"
            )
        for label, voice in self.voices.items():
            if set(voice.levels) != set(BACKGROUNDS[1:]):
                raise ValueError(
                    f"voices.{label}.levels: expected the noisy rooms {list(BACKGROUNDS[1:])},"
                    f" got {sorted(voice.levels)}"
                )
            for name, levels in voice.levels.items():
                mine = sorted(self.backgrounds[name].levels)
                if sorted(levels) != mine:
                    raise ValueError(
                        f"voices.{label}.levels.{name}: expected the levels {mine} of a noisy"
                        f" room, got {sorted(levels)}"
                    )
        for name, background in self.backgrounds.items():
            if name == "clean":
                continue
            if str(self.default_level_db) not in background.levels:
                raise ValueError(
                    f"backgrounds.{name}.levels: expected the default level "
                    f"{self.default_level_db!r}, got {sorted(background.levels)}"
                )
            if background.speech == "none" and any(
                c.spurious_turn_rate or c.leak_rate or c.repetition_loop_rate
                for c in background.levels.values()
            ):
                raise ValueError(
                    f"backgrounds.{name}: spurious turns, leaks or loops need a speech source"
                )
        return self

    def voice_of(self, persona: str | None) -> str:
        """The voice label a persona's caller speaks with (the default when not named)."""
        return self.personas.get(persona or "", self.default_voice)

    def profile(self, voice: str) -> tuple[ClassWeights, Confusions]:
        """The class weights and substitution table of a voice (the default's if unmeasured)."""
        if voice in self.voices:
            return self.voices[voice].class_weights, self.voices[voice].confusions
        return self.class_weights, self.confusions

    def condition(
        self, background: BackgroundName, level_db: float, voice: str | None = None
    ) -> Condition | None:
        """The condition for a background and level, heard in ``voice`` (default: the
        file's default voice); ``None`` where the clean room is the identity."""
        if background not in self.backgrounds:
            raise ValueError(f"background: expected one of {list(BACKGROUNDS)}, got {background!r}")
        measured = self.voices.get(voice or self.default_voice)
        if background == "clean":
            return measured.clean if measured else self.backgrounds["clean"].quiet
        levels = measured.levels[background] if measured else self.backgrounds[background].levels
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
def parameters_digest() -> str:
    """A short SHA-256 of the shipped parameter file: run folders record which file made them."""
    raw = resources.files("vamos_env.channel").joinpath("data", PARAMETER_FILE).read_bytes()
    return hashlib.sha256(raw).hexdigest()[:16]


@lru_cache(maxsize=1)
def shipped_parameters() -> ChannelParameters:
    """The parameter file that ships with the package."""
    return parse_parameters(_read_yaml(PARAMETER_FILE))


@lru_cache(maxsize=1)
def background_speech() -> BackgroundSpeech:
    return BackgroundSpeech.model_validate(_read_yaml(SPEECH_FILE))
