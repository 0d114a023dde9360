"""LLM callers: a language model plays the brief, through OpenAI's or Google's official SDK.

The model gets a prompt built from the persona and the brief (``caller_prompt``)
and answers every agent turn with one JSON object::

    {"say": "...", "end_call": false, "goal_met": null}

``end_call: true`` is the explicit end-of-call signal; ``goal_met`` is the
caller's belief, judged from what it heard. A ``BriefMonitor`` compares what
the caller says with its brief; any deviation makes the call a benchmark fault.
A model reply that cannot be used (an HTTP error, an empty reply, text that is
not that JSON object) is a deviation of kind ``caller_error``: the caller hangs
up with reason ``caller_error`` and the call is excluded. Nothing raises into the
episode loop.

``OpenAICaller`` speaks chat completions to any OpenAI-compatible server
(``base_url``, or ``OPENAI_BASE_URL``; key from ``OPENAI_API_KEY``). It asks for the reply
under a strict JSON schema (``REPLY_SCHEMA``), not ``{"type": "json_object"}``: a server
that constrains decoding (llama.cpp, vLLM) reads ``json_object`` as "any JSON value" and
let a real model answer with a bare ``203.91``; the schema makes the object the only
thing it can write. A reply that breaks it anyway is still a ``caller_error``.
``GeminiCaller`` uses ``google-genai``'s ``generateContent`` (key from
``GOOGLE_API_KEY``). Both SDKs are optional (``pip install vamos-env[llm]``) and
imported only when a caller is built. The Gemini Live API (audio in and out)
belongs with the audio channel and is not here.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from vamos_env.callers.base import Deviation, HangUp, HangUpReason, Utterance
from vamos_env.callers.deviation import BriefMonitor
from vamos_env.callers.persona import Persona, load_persona
from vamos_env.envs.energy.tasks.schema import Consent, Task

Role = Literal["agent", "caller"]
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
# The model's first turn needs something to answer; the agent's greeting is not passed to open().
ANSWERED = "(The agent has answered the phone.)"


class CallerModelError(RuntimeError):
    """A model reply the caller cannot use: the message says what arrived instead."""


class ChatModel(Protocol):
    """One vendor's chat endpoint: the system prompt and the turns so far in, raw text out."""

    name: str

    def complete(self, system: str, turns: Sequence[tuple[Role, str]]) -> str: ...


@dataclass(frozen=True)
class CallerReply:
    say: str
    end_call: bool
    goal_met: bool | None


# The reply's shape as a strict JSON schema (every property required, nothing else allowed).
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "say": {"type": "string"},
        "end_call": {"type": "boolean"},
        "goal_met": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
    },
    "required": ["say", "end_call", "goal_met"],
    "additionalProperties": False,
}
ReplyFormat = Literal["json_schema", "json_object", "none"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_reply(raw: str) -> CallerReply:
    """The caller's JSON reply, or ``CallerModelError`` saying what was expected and what came."""
    text = raw.strip()
    if not text:
        raise CallerModelError("expected a JSON object from the model, got an empty reply")
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CallerModelError(
            f"expected a JSON object from the model, got text that is not JSON ({exc.msg}): "
            f"{raw[:120]!r}"
        ) from exc
    if not isinstance(data, dict):
        raise CallerModelError(f"expected a JSON object, got {type(data).__name__}: {raw[:120]!r}")
    say = data.get("say")
    end_call = data.get("end_call", False)
    goal_met = data.get("goal_met")
    if not isinstance(say, str):
        raise CallerModelError(f'expected "say" to be a string, got {say!r}')
    if not isinstance(end_call, bool):
        raise CallerModelError(f'expected "end_call" to be true or false, got {end_call!r}')
    if goal_met is not None and not isinstance(goal_met, bool):
        raise CallerModelError(f'expected "goal_met" to be true, false or null, got {goal_met!r}')
    if not say.strip() and not end_call:
        raise CallerModelError('expected words in "say" (or "end_call": true), got nothing')
    return CallerReply(say.strip(), end_call, goal_met)


def _consent_words(consent: Consent) -> str:
    parts = []
    for key, value in consent.values.items():
        if isinstance(value, int) and not isinstance(value, bool) and key.endswith("cents"):
            shown = "no down payment" if value == 0 else f"${value // 100:,}.{value % 100:02d}"
            parts.append(f"{key.removesuffix('_cents').replace('_', ' ')}: {shown}")
        else:
            parts.append(f"{key.replace('_', ' ')}: {value}")
    tolerance = f" (within ${consent.tolerance_cents / 100:.2f})" if consent.tolerance_cents else ""
    return (
        f"agree only after the agent itself states {'; '.join(parts)}{tolerance}. "
        f'When it has, say something like "{consent.agree}". If it states something else, '
        f'say something like "{consent.object_to}"'
    )


def caller_prompt(task: Task, persona: Persona) -> str:
    """The caller model's instructions: who it is, what it wants, how it talks, how to reply."""
    brief = task.caller
    factor = persona.wording.factor_names[brief.second_factor.kind]
    lines = [
        "You are role-playing a customer phoning the billing line of Acme Energy, a utility in "
        "Pennsylvania. The other side is a voice agent. You only hear what it says; you never "
        "see its systems. Stay in character; never mention that this is a simulation.",
        "",
        "# How you talk",
        f"Language: {persona.language} (speak only this language).",
        f"Register: {persona.speech_register}. Energy: {persona.energy}.",
        persona.description,
        *_behaviour_lines(persona),
        "",
        "# Who you are (give these only when the agent asks)",
        f"- Account number: {brief.account_number}",
        f"- Full name on the account: {brief.full_name}",
        f"- For verification you can give only {factor}: {brief.second_factor.value}. If the agent "
        "asks for a different detail, say you don't have it and offer this one instead.",
        "- If the agent reads a detail back wrongly, correct it.",
    ]
    if brief.private_facts:
        lines.append("- Things you know, to say only if the agent asks about them:")
        lines.extend(
            f"  - {fact.key.replace('_', ' ')}: {fact.say}" for fact in brief.private_facts
        )
    lines += [
        "",
        "# Why you are calling",
        f'Start the call with: "{brief.opening_line}"',
        "Raise these requests one at a time, in this order. Move to the next one only when the "
        "agent has answered, done or refused the current one.",
    ]
    for i, request in enumerate(task.requests, start=1):
        lines.append(f"{i}. {request.says} (if not understood: {request.rephrase})")
        for consent in request.consent:
            lines.append(f"   - Before agreeing, {_consent_words(consent)}.")
        for offer, words in request.refusals.items():
            lines.append(f'   - If offered {offer.replace("_", " ")}, refuse: "{words}"')
    lines += [
        "",
        "# Rules",
        "- Never state an amount or a date the agent is supposed to tell you; wait for it.",
        '- If the agent says it is checking, wait for it (say something short like "Okay.").',
        "- Never ask for anything that is not in your requests, and do not skip a request.",
        *[f"- {rule.rule}" for rule in persona.forbidden],
        "- End the call when every request is handled, when the agent transfers you, or when "
        "the agent makes no progress for several turns.",
        "",
        "# Reply format",
        "Answer every turn with exactly one JSON object and nothing else:",
        '{"say": "<your words>", "end_call": <true|false>, "goal_met": <true|false|null>}',
        '"end_call": true hangs up after your words. "goal_met" is whether you believe you got '
        "what you called for, judged only from what the agent said (null until you can tell).",
    ]
    return "\n".join(lines)


def _behaviour_lines(persona: Persona) -> list[str]:
    b = persona.behaviours
    out = []
    if b.interrupt_after_words is not None:
        out.append(
            f"Cut the agent off if it talks for more than about {b.interrupt_after_seconds:g} "
            "seconds without stopping."
        )
    if b.false_yes_rate:
        out.append(
            f'About one time in {round(1 / b.false_yes_rate)}, answer "yes" to a harmless '
            'question when you mean "no" (never when agreeing to a payment, an arrangement or a '
            "change to your account)."
        )
    if b.asks_why_first_fact:
        out.append('The first time the agent states a fact, ask "Why?".')
    if b.demands_source_for_numbers:
        out.append("When the agent gives a number, ask where it comes from.")
    if b.hangs_up_on_contradiction:
        out.append("If the agent contradicts something it told you earlier, hang up.")
    if b.forceful_when_misunderstood:
        out.append("Each time you have to repeat yourself, be more forceful (but stay civil).")
    return out


class LLMCaller:
    """A caller played by a chat model; ``deviations`` lists its departures from the brief."""

    def __init__(self, task: Task, persona: Persona | str, model: ChatModel) -> None:
        self.task = task
        self.persona = load_persona(persona) if isinstance(persona, str) else persona
        self.model = model
        self.system = caller_prompt(task, self.persona)
        self.monitor = BriefMonitor(task, self.persona)
        self.deviations: list[Deviation] = self.monitor.deviations  # one list, shared
        self.turns: list[tuple[Role, str]] = []
        self.turn = 0
        self.ended: HangUp | None = None
        self._goal_met: bool | None = None

    def open(self) -> Utterance:
        text = self.task.caller.opening_line  # the brief's own words; no model call needed
        self.turns += [("agent", ANSWERED), ("caller", text)]
        self.monitor.caller_said(text, self.turn)
        return Utterance(text)

    def hear(self, text: str) -> Utterance | HangUp:
        if self.ended is not None:
            raise RuntimeError("hear() after the caller hung up")
        self.turn += 1
        self.monitor.agent_said(text)
        self.turns.append(("agent", text or "(silence)"))
        try:
            reply = parse_reply(self.model.complete(self.system, self.turns))
        except CallerModelError as exc:
            self.deviations.append(
                Deviation("caller_error", f"{self.model.name}: {exc}", self.turn)
            )
            return self._end("caller_error", "")
        self.turns.append(("caller", reply.say))
        if reply.goal_met is not None:
            self._goal_met = reply.goal_met
        if reply.say:
            self.monitor.caller_said(reply.say, self.turn)
        if reply.end_call:
            return self._end("caller_ended", reply.say)
        return Utterance(reply.say)

    def goal_met(self) -> bool:
        return bool(self._goal_met)

    def _end(self, reason: HangUpReason, text: str) -> HangUp:
        self.monitor.call_ended(reason, self.turn)
        self.ended = HangUp(reason, text)
        return self.ended


# --- vendors ---------------------------------------------------------------------------------


class OpenAIChat:
    """Chat completions through the official ``openai`` SDK, at any OpenAI-compatible base URL."""

    def __init__(
        self,
        model: str = DEFAULT_OPENAI_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.7,
        seed: int | None = None,
        json_mode: bool = True,
        reply_format: ReplyFormat = "json_schema",
        extra_body: dict[str, Any] | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        try:
            import openai
        except ImportError as exc:  # the SDK is an optional extra
            raise ImportError(
                "OpenAICaller needs the openai SDK: pip install vamos-env[llm]"
            ) from exc
        self._errors: tuple[type[Exception], ...] = (openai.OpenAIError,)
        self.client = openai.OpenAI(
            api_key=api_key or os.environ.get("OPENAI_API_KEY"),
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            timeout=timeout,
            max_retries=max_retries,
        )
        self.model = model
        self.name = f"openai:{model}"
        self.temperature = temperature
        self.seed = seed
        self.extra_body = dict(extra_body or {})  # server-specific fields (vLLM's top_k, ...)
        # json_mode=False is the older switch for servers that take no response_format.
        self.reply_format: ReplyFormat = reply_format if json_mode else "none"
        if self.reply_format not in ("json_schema", "json_object", "none"):
            raise ValueError(
                f"reply_format: expected json_schema, json_object or none, got {reply_format!r}"
            )

    def complete(self, system: str, turns: Sequence[tuple[Role, str]]) -> str:
        messages: list[Any] = [{"role": "system", "content": system}]
        messages += [
            {"role": "user" if role == "agent" else "assistant", "content": text}
            for role, text in turns
        ]
        options: dict[str, Any] = {}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.seed is not None:
            options["seed"] = self.seed
        if self.reply_format == "json_schema":
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "caller_reply", "strict": True, "schema": REPLY_SCHEMA},
            }
        elif self.reply_format == "json_object":
            options["response_format"] = {"type": "json_object"}
        if self.extra_body:
            options["extra_body"] = self.extra_body
        try:
            response = self.client.chat.completions.create(
                model=self.model, messages=messages, **options
            )
        except self._errors as exc:
            raise CallerModelError(f"the chat completion failed: {exc}") from exc
        except Exception as exc:  # a reply the SDK itself could not read
            raise CallerModelError(
                f"the chat completion failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not response.choices:
            raise CallerModelError("expected at least one choice in the completion, got none")
        content = response.choices[0].message.content
        if content is None:
            raise CallerModelError("expected message content in the completion, got none")
        return content


class GeminiChat:
    """``generateContent`` through Google's ``google-genai`` SDK."""

    def __init__(
        self,
        model: str = DEFAULT_GEMINI_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float | None = 0.7,
        seed: int | None = None,
        timeout: float = 60.0,
    ) -> None:
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError as exc:  # the SDK is an optional extra
            raise ImportError(
                "GeminiCaller needs the google-genai SDK: pip install vamos-env[llm]"
            ) from exc
        self._types = types
        self._errors: tuple[type[Exception], ...] = (errors.APIError, OSError)
        options = types.HttpOptions(base_url=base_url, timeout=int(timeout * 1000))
        self.client = genai.Client(
            api_key=api_key or os.environ.get("GOOGLE_API_KEY"), http_options=options
        )
        self.model = model
        self.name = f"gemini:{model}"
        self.temperature = temperature
        self.seed = seed

    def complete(self, system: str, turns: Sequence[tuple[Role, str]]) -> str:
        types = self._types
        contents = [
            types.Content(
                role="user" if role == "agent" else "model", parts=[types.Part(text=text)]
            )
            for role, text in turns
        ]
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=self.temperature,
            seed=self.seed,
            response_mime_type="application/json",
        )
        try:
            response = self.client.models.generate_content(
                model=self.model, contents=contents, config=config
            )
        except self._errors as exc:
            raise CallerModelError(f"generateContent failed: {exc}") from exc
        except Exception as exc:  # the SDK wraps transport errors in several of its own types
            raise CallerModelError(f"generateContent failed: {type(exc).__name__}: {exc}") from exc
        if not response.candidates:
            raise CallerModelError("expected at least one candidate from generateContent, got none")
        text = response.text
        if text is None:
            raise CallerModelError("expected text in the candidate's parts, got none")
        return text


class OpenAICaller(LLMCaller):
    """A caller on an OpenAI-compatible chat model; ``options`` go to ``OpenAIChat``."""

    def __init__(
        self,
        task: Task,
        persona: Persona | str = "calm",
        *,
        model: str = DEFAULT_OPENAI_MODEL,
        **options: Any,
    ) -> None:
        super().__init__(task, persona, OpenAIChat(model, **options))


class GeminiCaller(LLMCaller):
    """A caller on a Gemini model; ``options`` go to ``GeminiChat``."""

    def __init__(
        self,
        task: Task,
        persona: Persona | str = "calm",
        *,
        model: str = DEFAULT_GEMINI_MODEL,
        **options: Any,
    ) -> None:
        super().__init__(task, persona, GeminiChat(model, **options))
