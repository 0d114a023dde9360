"""Personas: how a caller talks and behaves, as validated data files.

A persona changes wording and conversational behaviour, never the task's facts:
the requests, their order, amounts, consent conditions and refusals all come
from the task's brief. Persona files live in ``personas/<name>.yaml``:

- ``language`` (a BCP 47 tag such as ``en-US`` or ``nl-NL``), ``register``,
  ``energy`` and a ``description`` (used in LLM callers' prompts);
- ``behaviours``: the sceptic's interruptions, wrong "yes", "why?", demands for
  a source and hang-up on contradiction; the angry caller's forcefulness;
- ``forbidden``: what the persona never does, each rule with an optional
  pattern that the deviation check looks for in the caller's words;
- ``wording``: templates per dialogue act, each a list of alternatives the
  scripted caller picks from with its seeded generator. ``requests`` may give
  the caller's words per request kind (a persona in another language needs it;
  English personas use the brief's own words).

Template placeholders are checked at load time against the act's allowed set,
so a typo fails when the file is read, not in the middle of a call.
"""

from __future__ import annotations

import string
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vamos_env.envs.energy.tasks.schema import RequestKind, SecondFactorKind

SHIPPED_PERSONAS: tuple[str, ...] = ("calm", "angry", "sceptic", "sceptic-nl")

# Each dialogue act and the placeholders its templates may use.
ACT_FIELDS: dict[str, frozenset[str]] = {
    "open": frozenset({"opening_line"}),
    "request": frozenset({"says"}),
    "next_request": frozenset({"says"}),
    "rephrase": frozenset({"rephrase", "says"}),
    "repeat": frozenset({"last"}),
    "forceful_repeat": frozenset({"last", "says"}),
    "account_number": frozenset({"account_number"}),
    "name": frozenset({"full_name"}),
    "lacks_factor": frozenset({"asked", "offered"}),
    "readback_right": frozenset(),
    "readback_wrong": frozenset({"value"}),
    "retry_identity": frozenset({"identity"}),
    "wait": frozenset(),
    "agree": frozenset({"agree"}),
    "object": frozenset({"object_to"}),
    "refuse": frozenset({"refusal"}),
    "private_fact": frozenset({"say", "value"}),
    "dont_know": frozenset(),
    "decline_offer": frozenset(),
    "affirm": frozenset(),  # a plain "yes" ("yes" as a YAML key reads as true)
    "take_back": frozenset(),
    "nudge": frozenset({"says", "rephrase"}),
    "hello": frozenset(),
    "goodbye": frozenset(),
    "transfer_ok": frozenset(),
    "stall_goodbye": frozenset(),
    "why": frozenset(),
    "source": frozenset(),
    "interrupt": frozenset(),
    "contradiction_goodbye": frozenset(),
    "small_talk": frozenset(),
    "still_here": frozenset(),
    "cut_out": frozenset(),
}
FACTOR_FIELDS = frozenset({"value"})
REQUEST_FIELDS = frozenset({"says", "rephrase"})

Templates = tuple[str, ...]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Behaviours(_Strict):
    speaking_rate_wpm: float = Field(default=150.0, gt=0)
    # Speak over an agent whose turn runs longer than this (None: never).
    interrupt_after_seconds: float | None = Field(default=None, gt=0)
    # Chance of a "yes" that means "no", on questions where a yes commits to nothing
    # (see the scripted caller: never consent, read-backs, transfers or offers).
    false_yes_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    asks_why_first_fact: bool = False
    demands_source_for_numbers: bool = False
    hangs_up_on_contradiction: bool = False
    # Misunderstood twice or more, say the request again more forcefully.
    forceful_when_misunderstood: bool = False

    @property
    def interrupt_after_words(self) -> int | None:
        """The monologue length, in words at the speaking rate, after which the caller cuts in."""
        if self.interrupt_after_seconds is None:
            return None
        return max(1, round(self.speaking_rate_wpm * self.interrupt_after_seconds / 60.0))


class ForbiddenRule(_Strict):
    rule: str = Field(min_length=1)  # in words, for the LLM caller's prompt
    # A case-insensitive regular expression over the caller's words; a match is a
    # deviation unless the brief's own words match it too (a supervisor request).
    pattern: str | None = None


class Wording(_Strict):
    open: Templates = Field(min_length=1)
    request: Templates = Field(min_length=1)
    next_request: Templates = Field(min_length=1)
    rephrase: Templates = Field(min_length=1)
    repeat: Templates = Field(min_length=1)
    forceful_repeat: Templates = Field(min_length=1)
    account_number: Templates = Field(min_length=1)
    name: Templates = Field(min_length=1)
    second_factor: dict[SecondFactorKind, Templates]
    factor_names: dict[SecondFactorKind, str]
    lacks_factor: Templates = Field(min_length=1)
    readback_right: Templates = Field(min_length=1)
    readback_wrong: Templates = Field(min_length=1)
    retry_identity: Templates = Field(min_length=1)
    wait: Templates = Field(min_length=1)
    agree: Templates = Field(min_length=1)
    object: Templates = Field(min_length=1)
    refuse: Templates = Field(min_length=1)
    private_fact: Templates = Field(min_length=1)
    dont_know: Templates = Field(min_length=1)
    decline_offer: Templates = Field(min_length=1)
    affirm: Templates = Field(min_length=1)
    take_back: Templates = Field(min_length=1)
    nudge: Templates = Field(min_length=1)
    hello: Templates = Field(min_length=1)
    goodbye: Templates = Field(min_length=1)
    transfer_ok: Templates = Field(min_length=1)
    stall_goodbye: Templates = Field(min_length=1)
    why: Templates = Field(min_length=1)
    source: Templates = Field(min_length=1)
    interrupt: Templates = Field(min_length=1)
    contradiction_goodbye: Templates = Field(min_length=1)
    # A courtesy answer to small talk ("How are you today?") and to "Are you still there?".
    # Optional, so that persona files written before these acts still load.
    small_talk: Templates = Field(default=("Fine, thanks.",), min_length=1)
    still_here: Templates = Field(default=("Yes, I'm here.",), min_length=1)
    # Asked when the agent's reply was cut off mid-sentence on the line.
    cut_out: Templates = Field(
        default=("Sorry, you cut out there. Could you say that again?",), min_length=1
    )
    # The caller's words per request kind, in place of the brief's (other languages).
    requests: dict[RequestKind, Templates] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _placeholders(self) -> Wording:
        for act, allowed in ACT_FIELDS.items():
            for template in getattr(self, act):
                _check_template(f"wording.{act}", template, allowed)
        kinds = ("card_last4", "postal_code", "last_bill_amount")
        for kind in kinds:
            if kind not in self.second_factor or kind not in self.factor_names:
                raise ValueError(f"wording: second_factor and factor_names need {kind!r}")
            for template in self.second_factor[kind]:
                _check_template(f"wording.second_factor.{kind}", template, FACTOR_FIELDS)
        for kind, templates in self.requests.items():
            if not templates:
                raise ValueError(f"wording.requests.{kind}: expected at least one template")
            for template in templates:
                _check_template(f"wording.requests.{kind}", template, REQUEST_FIELDS)
        return self


def _check_template(where: str, template: str, allowed: frozenset[str]) -> None:
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise ValueError(f"{where}: not a valid template {template!r}: {exc}") from exc
    unknown = fields - allowed
    if unknown:
        raise ValueError(
            f"{where}: placeholders {sorted(unknown)} are not allowed here; "
            f"expected some of {sorted(allowed) or 'none'}"
        )


class Persona(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    language: str = Field(pattern=r"^[a-z]{2,3}(-[A-Z]{2})?$")
    # "register" in the file; renamed here because BaseModel already has ``register``.
    speech_register: str = Field(alias="register", min_length=1)
    energy: Literal["low", "medium", "high"]
    description: str = Field(min_length=1)
    behaviours: Behaviours = Behaviours()
    forbidden: tuple[ForbiddenRule, ...] = ()
    wording: Wording


class PersonaFileError(ValueError):
    """A persona file that does not match the schema."""


def parse_persona(raw: Any, *, where: str = "persona") -> Persona:
    try:
        return Persona.model_validate(raw)
    except ValidationError as exc:
        raise PersonaFileError(f"{where}: not a valid persona file:\n{exc}") from exc


def load_persona_file(path: str | Path) -> Persona:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise PersonaFileError(f"{path}: expected a YAML persona file: {exc}") from exc
    persona = parse_persona(raw, where=str(path))
    if persona.name != path.stem:
        raise PersonaFileError(
            f"{path}: name: expected {path.stem!r} (the file name), got {persona.name!r}"
        )
    return persona


@cache
def load_persona(name: str) -> Persona:
    """A shipped persona by name (``calm``, ``angry``, ``sceptic``, ``sceptic-nl``)."""
    if name not in SHIPPED_PERSONAS:
        raise KeyError(f"persona: expected one of {list(SHIPPED_PERSONAS)}, got {name!r}")
    text = resources.files("vamos_env.callers").joinpath("personas", f"{name}.yaml").read_text()
    persona = parse_persona(yaml.safe_load(text), where=f"personas/{name}.yaml")
    if persona.name != name:
        raise PersonaFileError(
            f"personas/{name}.yaml: name: expected {name!r}, got {persona.name!r}"
        )
    return persona
