"""The ``openai`` stack: a chat-completions tool-calling agent over the official ``openai`` SDK.

Any OpenAI-compatible server works (vLLM, Ollama, LM Studio, a gateway): set
``base_url`` (or ``OPENAI_BASE_URL``) and ``model``; the key comes from
``api_key`` or ``OPENAI_API_KEY``.

One agent plays one call at a time; ``reset(info)`` starts a new conversation
from the environment's system prompt and tool schemas. The conversation is kept
the way the Chat Completions API wants it: the system prompt first, the caller's
words as ``user`` messages, the model's own assistant messages (``tool_calls``
included, arguments exactly as the model wrote them), and each tool result as a
``tool`` message carrying its ``tool_call_id``. ``act`` returns the assistant
message itself; the environment speaks its ``content`` first and then runs its
``tool_calls``.

Decisions (the Gemini agent shares them):

- **An empty reply** (neither words nor tool calls) is asked for again
  ``empty_retries`` times (default once), then the agent ends the call. A voice
  pipeline has no "say nothing" turn, and putting our words in the model's mouth
  (an apology) would be graded as the model's speech and can loop to the turn
  limit at the model's cost; ending is honest and the grader scores it.
  ``empty_replies`` counts them.
- **Malformed tool-call arguments** are passed through untouched: the environment
  answers with an error result, which goes back to the model as that call's tool
  message, so the model can correct itself.
- **Silence**: when the channel loses every word of a caller turn the agent receives
  an empty observation; the model is told ``(silence)`` rather than sent an empty
  message.
- **Ending the call**: the caller normally hangs up. ``end_call_tool=True`` also
  offers the model an ``end_call`` function (not one of the 16 domain tools,
  so off by default to keep the tool surface identical across stacks).
- **Vendor failures** (HTTP errors after the SDK's own retries, timeouts, a body
  that is not a completion with a choice) raise ``ModelCallError``: the call
  cannot go on, and the runner records it as the agent's miss (the model is part of
  the stack, as in the published benchmark).
- **Unstorable text**: code points UTF-8 cannot encode (a lone surrogate from a model
  that split an emoji) are replaced in the reply before it enters the conversation.
- **Preflight**: ``OpenAIAgent.preflight(environ)`` says what is missing (the key, a
  server that does not answer at ``OPENAI_BASE_URL``) before a run starts.

``usage`` holds the call's prompt and completion tokens, the number of requests and
each request's latency (empty replies and retries included). ``aact`` does the same
with ``openai.AsyncOpenAI``, so many calls can wait on the model in one process.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vamos_env.agents.base import Action, ModelAgent, Usage
from vamos_env.storable import storable_text

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion

DEFAULT_MODEL = "gpt-4o-mini"
SILENCE = "(silence)"
END_CALL = "end_call"
END_CALL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": END_CALL,
        "description": "Hang up. Use only after you have said goodbye and the caller has nothing "
        "more to ask.",
        "parameters": {"type": "object", "properties": {}},
    },
}


class ModelCallError(RuntimeError):
    """The model could not be reached or its reply could not be read; the call cannot go on."""

    def __init__(self, vendor: str, message: str, *, status: int | None = None) -> None:
        super().__init__(f"{vendor}: {message}")
        self.vendor = vendor
        self.status = status  # the HTTP status when the vendor answered with an error


# --- what came back from the environment -----------------------------------------------------


@dataclass(frozen=True)
class ToolReturn:
    """One tool call's result, paired with the id the model gave the call."""

    call_id: str
    name: str
    result: dict[str, Any]


@dataclass(frozen=True)
class StepReading:
    """The environment's answer to the agent's last action, split the way a model needs it."""

    results: tuple[ToolReturn, ...]
    heard: str | None  # the caller's words this step; None when the caller did not speak


def read_step(
    observation: str,
    info: Mapping[str, Any] | None,
    pending: Sequence[tuple[str, str]],
    spoke: bool,
) -> StepReading:
    """Split an observation into tool results for ``pending`` calls and the caller's words.

    ``pending`` is the last action's ``(call_id, name)`` pairs and ``spoke`` whether it
    had words. The environment lists results in ``info["tool_results"]``; without
    ``info`` they are read from the observation (one result is the observation itself;
    several, or words and tools, come as ``{"caller"?, "tool_results": [...]}``). A
    refused action leaves calls without results: each gets the error observation, so
    every call the model made is answered.
    """
    if not pending:
        return StepReading((), observation or SILENCE)
    payload: Any
    try:
        payload = json.loads(observation) if observation else None
    except ValueError:
        payload = None
    listed = info.get("tool_results") if info is not None else None
    if listed is None and isinstance(payload, dict):
        listed = payload.get("tool_results")
    by_id: dict[str, dict[str, Any]] = {}
    if isinstance(listed, list):
        for entry in listed:
            if isinstance(entry, Mapping) and isinstance(entry.get("tool_call_id"), str):
                result = entry.get("result")
                by_id[entry["tool_call_id"]] = (
                    dict(result) if isinstance(result, Mapping) else {"result": result}
                )
    refused = info is not None and "action_error" in info
    if not listed and len(pending) == 1 and not spoke and not refused and isinstance(payload, dict):
        by_id[pending[0][0]] = payload
    if isinstance(payload, dict) and "error" in payload and not by_id:
        missing: dict[str, Any] = payload
    else:
        missing = {"error": observation or "No result came back for this call."}
    results = tuple(
        ToolReturn(call_id, name, by_id.get(call_id, missing)) for call_id, name in pending
    )
    heard: str | None = None
    if spoke and isinstance(payload, dict) and "caller" in payload:
        heard = str(payload["caller"]) or SILENCE
    return StepReading(results, heard)


# --- the agent -------------------------------------------------------------------------------


class OpenAIAgent(ModelAgent):
    """A tool-calling agent on any OpenAI-compatible chat-completions endpoint.

    ``client`` / ``async_client`` share an existing SDK client (and its connection
    pool) between agents; otherwise each agent makes its own on first use.
    ``extra_body`` passes server-specific fields (e.g. vLLM's ``top_k``).
    """

    vendor = "openai"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        max_completion_tokens: int | None = None,
        parallel_tool_calls: bool | None = None,
        extra_body: Mapping[str, Any] | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        empty_retries: int = 1,
        end_call_tool: bool = False,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
    ) -> None:
        if empty_retries < 0:
            raise ValueError(f"expected empty_retries >= 0, got {empty_retries}")
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self._api_key = api_key
        self.temperature = temperature
        self.seed = seed
        self.max_completion_tokens = max_completion_tokens
        self.parallel_tool_calls = parallel_tool_calls
        self.extra_body = dict(extra_body or {})
        self.timeout = timeout
        self.max_retries = max_retries
        self.empty_retries = empty_retries
        self.end_call_tool = end_call_tool
        self._client = client
        self._async_client = async_client
        # Clients passed in belong to the caller; only those made here are closed here.
        self._owned: set[str] = set()
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.usage = Usage()
        self.empty_replies = 0
        self._pending: tuple[tuple[str, str], ...] = ()
        self._spoke = False
        self._end_next = False
        self._generated_ids = 0

    @classmethod
    def preflight(cls, environ: Mapping[str, str]) -> str | None:
        """What a default-built agent lacks to run here, or None (for ``vamos eval``)."""
        if not environ.get("OPENAI_API_KEY"):
            return (
                "expected OPENAI_API_KEY to be set (any value for a local server that takes "
                "none; with OPENAI_BASE_URL for an OpenAI-compatible server), got it unset"
            )
        base = environ.get("OPENAI_BASE_URL")
        return server_problem("OPENAI_BASE_URL", base) if base else None

    # -- clients ---------------------------------------------------------------------------
    def _key(self) -> str | None:
        return self._api_key or os.environ.get("OPENAI_API_KEY")

    def _sync(self) -> openai.OpenAI:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self._key(),
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
            self._owned.add("sync")
        return self._client

    def _async(self) -> openai.AsyncOpenAI:
        if self._async_client is None:
            import openai

            self._async_client = openai.AsyncOpenAI(
                api_key=self._key(),
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
            self._owned.add("async")
        return self._async_client

    def close(self) -> None:
        """Release the connection pool of the sync client this agent made (if any)."""
        if "sync" in self._owned and self._client is not None:
            self._client.close()
            self._client = None
            self._owned.discard("sync")

    async def aclose(self) -> None:
        """Release the connection pools of the clients this agent made (if any)."""
        if "async" in self._owned and self._async_client is not None:
            await self._async_client.close()
            self._async_client = None
            self._owned.discard("async")
        self.close()

    # -- the protocol ----------------------------------------------------------------------
    def reset(self, info: Mapping[str, Any]) -> None:
        prompt, tools = info.get("system_prompt"), info.get("tools")
        if not isinstance(prompt, str) or not isinstance(tools, list):
            raise ValueError(
                "expected the environment's reset info with 'system_prompt' (str) and 'tools' "
                f"(list); got keys {sorted(info)}"
            )
        self.messages = [{"role": "system", "content": prompt}]
        self.tools = [copy.deepcopy(t) for t in tools]
        if self.end_call_tool:
            self.tools.append(copy.deepcopy(END_CALL_TOOL))
        self.usage = Usage()
        self.empty_replies = 0
        self._pending, self._spoke, self._end_next = (), False, False
        self._generated_ids = 0

    def _complete(self) -> Any:
        return self._sync().chat.completions.create(**self._request())

    async def _acomplete(self) -> Any:
        return await self._async().chat.completions.create(**self._request())

    def _failure(self, exc: Exception) -> Exception:
        return _failure(exc)

    # -- the conversation ------------------------------------------------------------------
    def _absorb(self, observation: str, info: Mapping[str, Any] | None) -> None:
        if not self.messages:
            raise RuntimeError("call reset(info) before act()")
        reading = read_step(observation, info, self._pending, self._spoke)
        for returned in reading.results:
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": returned.call_id,
                    "content": json.dumps(returned.result),
                }
            )
        if reading.heard is not None:
            self.messages.append({"role": "user", "content": reading.heard})
        self._pending, self._spoke = (), False

    def _request(self) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.tools:
            request["tools"] = self.tools
            if self.parallel_tool_calls is not None:
                request["parallel_tool_calls"] = self.parallel_tool_calls
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.seed is not None:
            request["seed"] = self.seed
        if self.max_completion_tokens is not None:
            request["max_completion_tokens"] = self.max_completion_tokens
        if self.extra_body:
            request["extra_body"] = self.extra_body
        return request

    def _take(self, completion: ChatCompletion, latency_s: float) -> Action | None:
        """Record the request; the action for a usable reply, None for an empty one."""
        usage = getattr(completion, "usage", None)
        self.usage.add(
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
            latency_s,
        )
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            # Not a model's empty turn but a server that broke the protocol.
            raise ModelCallError(
                "openai",
                f"expected a chat.completion with at least one choice, got {_shown(completion)}",
            )
        message = getattr(choices[0], "message", None)
        text = ""
        if message is not None:
            text = getattr(message, "content", None) or getattr(message, "refusal", None) or ""
        text = storable_text(text)[0] if isinstance(text, str) else ""
        calls: list[tuple[str, str, str]] = []  # (id, name, arguments text)
        seen: set[str] = set()
        for call in getattr(message, "tool_calls", None) or []:
            function = getattr(call, "function", None)
            if getattr(call, "type", "function") != "function" or function is None:
                continue  # custom (non-function) tools are never offered
            call_id = call.id if isinstance(call.id, str) and call.id else ""
            if not call_id or call_id in seen:  # some compatible servers omit or repeat ids
                self._generated_ids += 1
                call_id = f"call_vamos_{self._generated_ids}"
            seen.add(call_id)
            arguments = function.arguments if isinstance(function.arguments, str) else ""
            name = function.name if isinstance(function.name, str) else ""
            calls.append(
                (storable_text(call_id)[0], storable_text(name)[0], storable_text(arguments)[0])
            )
        if not text.strip() and not calls:
            self.empty_replies += 1
            return None
        return self._commit(text, calls)

    def _commit(self, text: str, calls: list[tuple[str, str, str]]) -> Action:
        ends = any(name == END_CALL for _, name, _ in calls) and self.end_call_tool
        if ends:
            # No request follows an end_call (the next act ends the call), so its call is
            # dropped from the history rather than answered.
            calls = [c for c in calls if c[1] != END_CALL]
        spoken = text if text.strip() else None
        if spoken is None and not calls:
            return {"type": "end_call"}
        message: dict[str, Any] = {"role": "assistant", "content": spoken}
        if calls:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                for i, n, a in calls
            ]
        self.messages.append(message)
        self._pending = tuple((i, n) for i, n, _ in calls)
        self._spoke = spoken is not None
        self._end_next = ends
        return copy.deepcopy(message)


def server_problem(variable: str, url: str, timeout_s: float = 3.0) -> str | None:
    """Why nothing can be reached at a model server's URL, or None when it answers."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"expected {variable} to be an http(s) URL, got {url!r}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"expected {variable} to be an http(s) URL, got {url!r}"
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            return None
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        return f"expected a model server at {variable}={url}, got {reason}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _failure(exc: Exception) -> ModelCallError:
    status = getattr(exc, "status_code", None)
    return ModelCallError(
        "openai",
        f"the chat completion failed ({type(exc).__name__}): {exc}",
        status=status if isinstance(status, int) else None,
    )
