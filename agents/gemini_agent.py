"""The ``gemini`` stack: a function-calling agent over Google's ``google-genai`` SDK.

The key comes from ``api_key`` or ``GOOGLE_API_KEY``; ``base_url`` (and
``api_version``) point the SDK's ``HttpOptions`` elsewhere, e.g. at
``vamos_env.testing.FakeGeminiServer``. The environment's OpenAI-format tools are
converted once per call with ``vamos_env.toolschema.gemini_tools``.

The conversation is kept as Gemini wants it: the system prompt as
``system_instruction``; the caller's words as ``user`` turns; each model turn
exactly as the model returned it (so thought signatures and call ids survive);
and the tool results as ``functionResponse`` parts, one per ``functionCall`` of
the turn they answer, in a ``user`` turn that also carries the caller's words
when the model spoke and called tools at once. ``act`` returns an OpenAI-style
assistant message (the environment's common action shape); calls without a
Gemini id get one of ours so that results find their way back.

The decisions about empty replies (asked again, then the call ends), malformed
calls, silence, the opt-in ``end_call`` function and vendor failures
(``ModelCallError``) are the OpenAI agent's; see ``vamos_env.agents.openai_agent``.
A reply that Gemini cut off (``MALFORMED_FUNCTION_CALL``, ``SAFETY``, a blocked
prompt) carries no parts and counts as empty. Thought parts are never spoken. Text is
made storable (lone surrogates replaced) before it enters the conversation, and
``GeminiAgent.preflight(environ)`` says when the key is missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vamos_env.agents.base import Action, ModelAgent, Usage
from vamos_env.agents.openai_agent import (
    END_CALL,
    END_CALL_TOOL,
    ModelCallError,
    read_step,
)
from vamos_env.storable import storable_text
from vamos_env.toolschema import gemini_tools

if TYPE_CHECKING:
    from google import genai
    from google.genai import types

DEFAULT_MODEL = "gemini-2.5-flash"


class GeminiAgent(ModelAgent):
    """A function-calling agent on a Gemini model (``generateContent``).

    ``client`` shares an existing ``genai.Client`` between agents; otherwise each
    agent makes its own on first use. ``max_retries`` maps to the SDK's
    ``HttpRetryOptions`` (the SDK itself does not retry by default).
    """

    vendor = "gemini"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        api_version: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        max_output_tokens: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        empty_retries: int = 1,
        end_call_tool: bool = False,
        client: genai.Client | None = None,
    ) -> None:
        if empty_retries < 0:
            raise ValueError(f"expected empty_retries >= 0, got {empty_retries}")
        self.model = model
        self._api_key = api_key
        self.base_url = base_url
        self.api_version = api_version
        self.temperature = temperature
        self.seed = seed
        self.max_output_tokens = max_output_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.empty_retries = empty_retries
        self.end_call_tool = end_call_tool
        self._client = client
        self._owns_client = client is None  # a client passed in is the caller's to close
        self.contents: list[types.Content] = []
        self.usage = Usage()
        self.empty_replies = 0
        self._config: types.GenerateContentConfig | None = None
        # The last turn's calls: (our call id, name, Gemini's own id or None).
        self._pending: list[tuple[str, str, str | None]] = []
        self._spoke = False
        self._end_next = False
        self._generated_ids = 0

    @classmethod
    def preflight(cls, environ: Mapping[str, str]) -> str | None:
        """What a default-built agent lacks to run here, or None (for ``vamos eval``)."""
        if not (environ.get("GOOGLE_API_KEY") or environ.get("GEMINI_API_KEY")):
            return "expected GOOGLE_API_KEY (or GEMINI_API_KEY) to be set, got neither"
        return None

    def _genai(self) -> genai.Client:
        if self._client is None:
            from google import genai
            from google.genai import types

            retry = (
                types.HttpRetryOptions(attempts=self.max_retries + 1)
                if self.max_retries > 0
                else None
            )
            options = types.HttpOptions(
                base_url=self.base_url,
                api_version=self.api_version,
                timeout=int(self.timeout * 1000),
                retry_options=retry,
            )
            self._client = genai.Client(
                api_key=self._api_key or os.environ.get("GOOGLE_API_KEY"), http_options=options
            )
        return self._client

    def close(self) -> None:
        """Release the sync connection pool of the client this agent made (if any).

        After an async call use ``aclose``, which also releases the async pool.
        """
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        """Release both connection pools of the client this agent made (if any)."""
        if self._owns_client and self._client is not None:
            await self._client.aio.aclose()
            self._client.close()
            self._client = None

    # -- the protocol ----------------------------------------------------------------------
    def reset(self, info: Mapping[str, Any]) -> None:
        from google.genai import types

        prompt, tools = info.get("system_prompt"), info.get("tools")
        if not isinstance(prompt, str) or not isinstance(tools, list):
            raise ValueError(
                "expected the environment's reset info with 'system_prompt' (str) and 'tools' "
                f"(list); got keys {sorted(info)}"
            )
        declared = list(tools) + ([END_CALL_TOOL] if self.end_call_tool else [])
        declarations = [types.FunctionDeclaration.model_validate(d) for d in gemini_tools(declared)]
        self._config = types.GenerateContentConfig(
            system_instruction=prompt,
            tools=[types.Tool(function_declarations=declarations)],
            # The SDK must not run anything itself: the environment runs the tools.
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            temperature=self.temperature,
            seed=self.seed,
            max_output_tokens=self.max_output_tokens,
        )
        self.contents = []
        self.usage = Usage()
        self.empty_replies = 0
        self._pending, self._spoke, self._end_next = [], False, False
        self._generated_ids = 0

    def _complete(self) -> Any:
        return self._genai().models.generate_content(
            model=self.model, contents=self.contents, config=self._config
        )

    async def _acomplete(self) -> Any:
        return await self._genai().aio.models.generate_content(
            model=self.model, contents=self.contents, config=self._config
        )

    def _failure(self, exc: Exception) -> Exception:
        return _failure(exc)

    # -- the conversation ------------------------------------------------------------------
    def _absorb(self, observation: str, info: Mapping[str, Any] | None) -> None:
        from google.genai import types

        if self._config is None:
            raise RuntimeError("call reset(info) before act()")
        pending = [(call_id, name) for call_id, name, _ in self._pending]
        reading = read_step(observation, info, pending, self._spoke)
        gemini_ids = {call_id: gid for call_id, _, gid in self._pending}
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    name=returned.name,
                    response=returned.result,
                    id=gemini_ids.get(returned.call_id),
                )
            )
            for returned in reading.results
        ]
        if reading.heard is not None:
            parts.append(types.Part(text=reading.heard))
        if parts:
            self.contents.append(types.Content(role="user", parts=parts))
        self._pending, self._spoke = [], False

    def _take(self, response: types.GenerateContentResponse, latency_s: float) -> Action | None:
        """Record the request; the action for a usable reply, None for an empty one."""
        meta = response.usage_metadata
        prompt = (meta.prompt_token_count or 0) if meta is not None else 0
        # Thinking tokens are billed as output.
        completion = (
            (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
            if meta is not None
            else 0
        )
        self.usage.add(prompt, completion, latency_s)
        content = response.candidates[0].content if response.candidates else None
        parts = (content.parts or []) if content is not None else []
        text = storable_text(
            "".join(p.text for p in parts if isinstance(p.text, str) and p.text and not p.thought)
        )[0]
        calls: list[tuple[str, str, str | None, dict[str, Any]]] = []
        for part in parts:
            call = part.function_call
            if call is None:
                continue
            self._generated_ids += 1
            ours = storable_text(call.id)[0] if call.id else f"call_vamos_{self._generated_ids}"
            calls.append((ours, storable_text(call.name or "")[0], call.id, dict(call.args or {})))
        if not text.strip() and not calls:
            self.empty_replies += 1
            return None
        assert content is not None  # parts came from it
        ends = self.end_call_tool and any(name == END_CALL for _, name, _, _ in calls)
        if ends:
            # No request follows an end_call (the next act ends the call), so the turn's
            # unanswered end_call never reaches the API.
            calls = [c for c in calls if c[1] != END_CALL]
            if not text.strip() and not calls:
                return {"type": "end_call"}
        self.contents.append(content)
        self._pending = [(ours, name, gid) for ours, name, gid, _ in calls]
        self._spoke = bool(text.strip())
        self._end_next = ends
        message: dict[str, Any] = {"role": "assistant", "content": text if text.strip() else None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": ours,
                    "type": "function",
                    "function": {"name": name, "arguments": _json(args)},
                }
                for ours, name, _, args in calls
            ]
        return message


def _json(args: dict[str, Any]) -> Any:
    """The arguments as JSON text; arguments too deep for that go on as they are (the
    environment refuses them with its depth limit, as a tool error the model sees)."""
    try:
        return json.dumps(args)
    except (ValueError, TypeError, RecursionError):
        return args


def _failure(exc: Exception) -> ModelCallError:
    status = getattr(exc, "code", None)
    return ModelCallError(
        "gemini",
        f"generateContent failed ({type(exc).__name__}): {exc}",
        status=status if isinstance(status, int) else None,
    )
