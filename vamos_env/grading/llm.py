"""The grader's one seam to a language model: structured JSON replies over chat completions.

Both the LLM verifier and the LLM judge ask an OpenAI-compatible server for one JSON
object that follows a JSON schema (``response_format`` of type ``json_schema``, strict,
temperature 0), through the official ``openai`` SDK. ``ModelEndpoint`` names the model
and the server: ``base_url`` and ``api_key`` default to ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` as the SDK reads them, so a local server, a proxy or another
vendor's OpenAI-compatible endpoint all work.

Every reply's tokens are counted and priced from ``data/prices.json`` (dollars per
million input and output tokens; an unknown model is counted with ``cost_usd=None``).
Anything that keeps the grader from a trustworthy answer (the server failing, an empty
reply, text that is not JSON, JSON that breaks the schema) raises ``GradingFault`` with a
message that says what arrived, so the call is excluded rather than mis-graded.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from vamos_env.grading.models import GradingFault

M = TypeVar("M", bound=BaseModel)
_SHOWN = 200  # characters of a bad reply quoted in the fault


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0

    def add(self, prompt_tokens: int, completion_tokens: int, cost: float | None) -> None:
        self.requests += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost_usd = None if cost is None or self.cost_usd is None else self.cost_usd + cost


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens. A speech-to-speech model bills its audio tokens at
    their own rates (``audio_*``; ``None``: the text rates) and reports them apart, inside
    its prompt and completion counts."""

    input_per_million: float
    output_per_million: float
    audio_input_per_million: float | None = None
    audio_output_per_million: float | None = None

    def cost(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        audio_prompt_tokens: int = 0,
        audio_completion_tokens: int = 0,
    ) -> float:
        """The cost of a call's tokens; the audio counts are part of the totals."""
        audio_in = self.audio_input_per_million
        audio_out = self.audio_output_per_million
        audio_in = self.input_per_million if audio_in is None else audio_in
        audio_out = self.output_per_million if audio_out is None else audio_out
        text_prompt = max(prompt_tokens - audio_prompt_tokens, 0)
        text_completion = max(completion_tokens - audio_completion_tokens, 0)
        return (
            text_prompt * self.input_per_million
            + audio_prompt_tokens * audio_in
            + text_completion * self.output_per_million
            + audio_completion_tokens * audio_out
        ) / 1_000_000

    def usage_cost(self, usage: Any) -> float:
        """The cost of a ``CallUsage`` (or anything with its token counts)."""
        return self.cost(
            int(usage.prompt_tokens),
            int(usage.completion_tokens),
            int(getattr(usage, "audio_prompt_tokens", 0) or 0),
            int(getattr(usage, "audio_completion_tokens", 0) or 0),
        )

    @classmethod
    def from_entry(cls, entry: Any) -> Price:
        """A price-table entry: ``input_per_million`` and ``output_per_million``, and for a
        speech model ``audio_input_per_million`` and ``audio_output_per_million``; each a
        number of 0 or more (``ValueError`` naming what was expected otherwise)."""
        keys = ("input_per_million", "output_per_million")
        audio = ("audio_input_per_million", "audio_output_per_million")
        try:
            numbers = [float(entry[k]) for k in keys]
            extra = [None if entry.get(k) is None else float(entry[k]) for k in audio]
        except (TypeError, KeyError, ValueError, AttributeError):
            raise ValueError(
                f"expected {' and '.join(keys)} numbers (and optionally {', '.join(audio)}),"
                f" got {entry!r}"
            ) from None
        given = numbers + [n for n in extra if n is not None]
        if not all(math.isfinite(n) and n >= 0 for n in given):
            raise ValueError(f"expected prices of 0 or more, got {given}")
        return cls(numbers[0], numbers[1], extra[0], extra[1])


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """The price table: ``{"models": {name: {"input_per_million", "output_per_million"}}}``."""
    if path is None:
        text = resources.files("vamos_env.grading").joinpath("data/prices.json").read_text()
    else:
        text = Path(path).read_text()
    raw = json.loads(text)
    return {name: Price.from_entry(p) for name, p in raw["models"].items()}


@cache
def _shipped_prices() -> dict[str, Price]:
    return load_prices()


def price_of(model: str, prices: dict[str, Price] | None = None) -> Price | None:
    """The price of ``model``; a dated snapshot ("gpt-4o-2024-08-06") falls back to its family."""
    table = prices if prices is not None else _shipped_prices()
    if model in table:
        return table[model]
    family = max((name for name in table if model.startswith(name + "-")), key=len, default=None)
    return table[family] if family is not None else None


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """Which model, on which OpenAI-compatible server."""

    model: str
    base_url: str | None = None  # None: OPENAI_BASE_URL, else OpenAI's own
    api_key: str | None = None  # None: OPENAI_API_KEY
    timeout_s: float = 120.0
    max_retries: int = 2

    def client(self) -> Any:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a declared dependency
            raise GradingFault(
                "the LLM grader needs the openai package: pip install 'openai>=1.40'"
            ) from exc
        return openai.OpenAI(
            base_url=self.base_url,
            api_key=self.api_key,
            timeout=self.timeout_s,
            max_retries=self.max_retries,
        )


class StructuredChat:
    """Ask for one JSON object of a pydantic model's shape; count tokens and cost."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        prices: dict[str, Price] | None = None,
        client: Any = None,
    ) -> None:
        self.endpoint = endpoint
        self.prices = prices
        self._client = client
        self.usage = Usage(model=endpoint.model)

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self.endpoint.client()
        return self._client

    def ask(self, system: str, user: str, reply: type[M], schema_name: str) -> M:
        """One request; the reply validated as ``reply``, or ``GradingFault`` saying why not."""
        schema = strict_schema(reply)
        try:
            response = self.client.chat.completions.create(
                model=self.endpoint.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                temperature=0,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "strict": True, "schema": schema},
                },
            )
        except GradingFault:
            raise
        except Exception as exc:  # the SDK's APIError family, timeouts, connection errors
            raise GradingFault(
                f"the model server at {self.endpoint.base_url or 'OPENAI_BASE_URL'} failed: "
                f"{type(exc).__name__}: {str(exc)[:_SHOWN]}"
            ) from exc
        self._count(response)
        content = _content_of(response)
        try:
            data = json.loads(content)
        except ValueError:
            raise GradingFault(
                f"the model's reply is not JSON (expected a {schema_name} object): "
                f"{content[:_SHOWN]!r}"
            ) from None
        try:
            return reply.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(reply)'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            raise GradingFault(
                f"the model's reply does not follow the {schema_name} schema: {problems}"
            ) from None

    def _count(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        price = price_of(self.endpoint.model, self.prices)
        self.usage.add(
            prompt, completion, None if price is None else price.cost(prompt, completion)
        )


def _content_of(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise GradingFault("the model's reply has no choices")
    message = getattr(choices[0], "message", None)
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise GradingFault(f"the model refused to answer: {str(refusal)[:_SHOWN]!r}")
    content = getattr(message, "content", None)
    if not content or not str(content).strip():
        raise GradingFault("the model's reply is empty")
    return str(content)


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form strict structured outputs accept: every property
    required, no additional properties, definitions inlined."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return fix(defs[node["$ref"].rsplit("/", 1)[-1]])
            out = {k: fix(v) for k, v in node.items() if k not in ("title", "default")}
            if out.get("type") == "object" and "properties" in out:
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    fixed: dict[str, Any] = fix(schema)
    return fixed
