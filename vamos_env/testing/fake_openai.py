"""A local server that speaks OpenAI's chat-completions wire protocol, scripted by the caller.

``FakeOpenAIServer`` answers ``POST /v1/chat/completions`` with a
``chat.completion`` object (assistant ``content``, ``tool_calls`` with
``function.arguments`` as JSON text, ``finish_reason``, ``usage``) and ``GET
/v1/models`` with the model list; errors come in OpenAI's shape
(``{"error": {"message", "type", "param", "code"}}``) with OpenAI's statuses. Point
any OpenAI-compatible client at ``server.base_url``; nothing in the SDK is patched.

With ``strict`` (the default) it refuses what the real service refuses in the
ways agent code gets wrong: a missing model, no messages, an unknown role, a
``tool`` message that answers no preceding ``tool_calls``, an assistant message
whose ``tool_calls`` are not all answered, an empty ``tool_calls`` list, a tool
with a bad name. Such a request gets a 400 and consumes no scripted reply.

``stream: true`` gets the same reply as server-sent ``chat.completion.chunk`` events
(``sse_chunks``), as a streaming client such as Pipecat's OpenAI service reads them.

Not modelled: ``n`` > 1, logprobs, audio, the Responses API.

Example::

    with FakeOpenAIServer([Reply(calls=(Call("get_account"),)), "All set."]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from vamos_env.clock import NOW_UNIX
from vamos_env.testing.server import (
    Failure,
    FakeVendorServer,
    Raw,
    RecordedRequest,
    Reply,
    Script,
    Scripted,
    as_reply,
    call_arguments_text,
    completion_tokens,
    estimated_tokens,
)

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    409: ("invalid_request_error", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def openai_error(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> tuple[int, dict[str, Any]]:
    """OpenAI's error object: a type by status, with the offending parameter when known."""
    kind, default_code = _ERROR_TYPES.get(status, ("server_error", None))
    return status, {
        "error": {"message": message, "type": kind, "param": param, "code": code or default_code}
    }


class FakeOpenAIServer(FakeVendorServer):
    """Chat completions on ``http://127.0.0.1:<port>/v1``, answered from a script.

    ``replies`` is a list of ``Reply`` / ``Failure`` / ``Raw`` / plain strings taken
    in order, or a function of the ``RecordedRequest``. ``models`` is what
    ``GET /v1/models`` lists (any model name is accepted for completions).
    """

    vendor = "openai"

    def __init__(
        self,
        replies: Iterable[Scripted] | Script | None = None,
        *,
        delay_s: float = 0.0,
        api_key: str | None = None,
        strict: bool = True,
        models: tuple[str, ...] = ("fake-model",),
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(
            replies, delay_s=delay_s, api_key=api_key, strict=strict, host=host, port=port
        )
        self.models = models
        self._completions = 0
        self._calls = 0

    @property
    def base_url(self) -> str:
        """What ``openai.OpenAI(base_url=...)`` and ``OPENAI_BASE_URL`` take."""
        return f"{self.origin}/v1"

    @staticmethod
    def model_turns(body: Any) -> int:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list):
            return 0
        return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")

    def is_model_route(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.path.endswith("/chat/completions")

    # -- routes --------------------------------------------------------------------------
    def answer(self, request: RecordedRequest) -> tuple[int, Any] | Raw:
        refused = self._authorise(request)
        if refused is not None:
            return refused
        path = request.path.rstrip("/")
        if request.method == "GET" and path.endswith("/models"):
            return 200, {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "created": NOW_UNIX, "owned_by": "vamos-fake"}
                    for m in self.models
                ],
            }
        if not self.is_model_route(request):
            return openai_error(404, f"Invalid URL ({request.method} {request.path})")
        if not isinstance(request.body, dict):
            return openai_error(
                400,
                "We could not parse the JSON body of your request. Expected a JSON object "
                "with 'model' and 'messages'.",
            )
        if self.strict:
            invalid = validate_chat_request(request.body)
            if invalid is not None:
                return invalid
        stream = request.body.get("stream")
        if stream not in (None, False, True):
            return openai_error(
                400,
                f"Invalid type for 'stream': expected a boolean, but got {stream!r} instead.",
                param="stream",
                code="invalid_type",
            )
        scripted = self.next_reply(request)
        if scripted is None:
            return openai_error(
                400,
                f"fake server: the reply script is exhausted after {self._completions} "
                "completions; push more replies",
            )
        self.pause(scripted)
        reply = as_reply(scripted)
        if isinstance(reply, Raw):
            return reply
        if isinstance(reply, Failure):
            return openai_error(reply.status, reply.message, code=reply.code)
        completion = self._completion(request, reply)
        if stream:
            return Raw(200, sse_chunks(completion, request.body), "text/event-stream")
        return 200, completion

    def _authorise(self, request: RecordedRequest) -> tuple[int, Any] | None:
        if self.api_key is None:
            return None
        header = request.headers.get("authorization", "")
        if not header:
            return openai_error(
                401,
                "You didn't provide an API key. Send it in an Authorization header "
                "(Authorization: Bearer YOUR_KEY).",
            )
        given = header.removeprefix("Bearer ").strip()
        if given != self.api_key:
            shown = given[:3] + "*" * max(0, len(given) - 7) + given[-4:]
            return openai_error(401, f"Incorrect API key provided: {shown}.")
        return None

    def _completion(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        with self._lock:
            self._completions += 1
            number = self._completions
            first_call = self._calls
            self._calls += len(reply.calls)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text,
            "refusal": None,
            "annotations": [],
        }
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": call.id if call.id is not None else f"call_fake{first_call + i + 1:06d}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call_arguments_text(call)},
                }
                for i, call in enumerate(reply.calls)
            ]
        prompt, completion = reply.usage or (
            estimated_tokens(request.raw),
            completion_tokens(reply),
        )
        return {
            "id": f"chatcmpl-fake{number:06d}",
            "object": "chat.completion",
            "created": NOW_UNIX,
            "model": str(request.body.get("model")),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": reply.finish_reason
                    or ("tool_calls" if reply.calls else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
            "service_tier": "default",
            "system_fingerprint": "fp_vamos_fake",
        }


def sse_chunks(completion: Mapping[str, Any], body: Mapping[str, Any]) -> str:
    """A finished completion as the server-sent events of ``stream: true``.

    As the service streams: ``chat.completion.chunk`` objects, each ``data: <json>`` and a
    blank line. The first delta carries the role, the words follow a few at a time, each
    tool call starts with its index, id, type and name (arguments empty) and its
    arguments follow in a second delta, and the last choice chunk has the
    ``finish_reason``. With ``stream_options.include_usage`` every chunk has
    ``usage: null`` and one more chunk with no choices carries the usage. ``data:
    [DONE]`` ends the stream. The whole stream is sent as one body: an SSE client cannot
    tell it from one sent piece by piece.
    """
    choice = completion["choices"][0]
    message = choice["message"]
    options = body.get("stream_options")
    with_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
    head = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "service_tier": completion["service_tier"],
        "system_fingerprint": completion["system_fingerprint"],
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choices = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        out = {**head, "choices": choices}
        if with_usage:
            out["usage"] = None
        return out

    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    words = re.findall(r"\S+\s*", message.get("content") or "")
    chunks += [chunk({"content": "".join(words[i : i + 3])}) for i in range(0, len(words), 3)]
    for index, call in enumerate(message.get("tool_calls") or []):
        opening = {"name": call["function"]["name"], "arguments": ""}
        first = {"index": index, "id": call["id"], "type": "function", "function": opening}
        chunks.append(chunk({"tool_calls": [first]}))
        arguments = {"arguments": call["function"]["arguments"]}
        chunks.append(chunk({"tool_calls": [{"index": index, "function": arguments}]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if with_usage:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def validate_chat_request(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """The checks OpenAI applies that agent code most often fails; None when the body passes."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return openai_error(400, "you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return openai_error(400, f"{messages!r} is too short - 'messages'", param="messages")
    invalid = _validate_tools(body.get("tools"))
    if invalid is not None:
        return invalid
    unanswered: dict[str, int] = {}  # tool_call_id -> index of the assistant message
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            return openai_error(
                400,
                f"Invalid type for 'messages[{i}]': expected an object, but got "
                f"{type(message).__name__} instead.",
                param=f"messages[{i}]",
                code="invalid_type",
            )
        role = message.get("role")
        if role not in ROLES:
            supported = ", ".join(f"'{r}'" for r in ROLES)
            return openai_error(
                400,
                f"Invalid value: {role!r}. Supported values are: {supported}.",
                param=f"messages[{i}].role",
                code="invalid_value",
            )
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                return openai_error(
                    400,
                    "Missing parameter 'tool_call_id': messages with role 'tool' must have a "
                    "'tool_call_id'.",
                    param=f"messages.[{i}].tool_call_id",
                    code="missing_required_parameter",
                )
            if call_id not in unanswered:
                return openai_error(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            del unanswered[call_id]
            continue
        if unanswered:
            owner = min(unanswered.values())
            return openai_error(
                400,
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                "response messages: " + ", ".join(unanswered),
                param=f"messages.[{owner}].role",
            )
        if role == "assistant":
            calls = message.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list) or not calls:
                    return openai_error(
                        400,
                        f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array "
                        "with minimum length 1, but got an empty array instead.",
                        param=f"messages[{i}].tool_calls",
                        code="empty_array",
                    )
                for j, call in enumerate(calls):
                    call_id = call.get("id") if isinstance(call, dict) else None
                    function = call.get("function") if isinstance(call, dict) else None
                    if not isinstance(call_id, str) or not isinstance(function, dict):
                        return openai_error(
                            400,
                            f"Missing required parameter: 'messages[{i}].tool_calls[{j}].id' "
                            "and 'function' must be given.",
                            param=f"messages[{i}].tool_calls[{j}]",
                            code="missing_required_parameter",
                        )
                    unanswered[call_id] = i
            elif message.get("content") is None:
                return openai_error(
                    400,
                    f"Invalid value for 'messages[{i}].content': expected a string, got null.",
                    param=f"messages.[{i}].content",
                )
        elif not isinstance(message.get("content"), (str, list)):
            return openai_error(
                400,
                f"Invalid type for 'messages[{i}].content': expected one of a string or array "
                "of objects.",
                param=f"messages[{i}].content",
                code="invalid_type",
            )
    if unanswered:
        owner = min(unanswered.values())
        return openai_error(
            400,
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            "response messages: " + ", ".join(unanswered),
            param=f"messages.[{owner}].role",
        )
    return None


def _validate_tools(tools: Any) -> tuple[int, dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return openai_error(
            400, "Invalid type for 'tools': expected an array.", param="tools", code="invalid_type"
        )
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or name is None:
            return openai_error(
                400,
                f"Missing required parameter: 'tools[{i}].function'.",
                param=f"tools[{i}].function",
                code="missing_required_parameter",
            )
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            return openai_error(
                400,
                f"Invalid 'tools[{i}].function.name': string does not match pattern. Expected "
                "a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                param=f"tools[{i}].function.name",
                code="invalid_value",
            )
    return None
