"""A local server that speaks the Gemini API's ``generateContent`` wire protocol, scripted.

``FakeGeminiServer`` answers ``POST /v1beta/models/{model}:generateContent`` (any
``v1*`` version) with a ``GenerateContentResponse``: ``candidates[0].content.parts``
holding ``text`` and ``functionCall`` (``name``, ``args`` object, ``id`` only when
the script gives one, as the Gemini API does), ``finishReason``, ``usageMetadata``
and ``modelVersion``. Errors come in Google's shape (``{"error": {"code",
"message", "status"}}``). Point ``google.genai.Client(http_options=
types.HttpOptions(base_url=server.base_url))`` at it; nothing is patched.

Gemini carries function-call arguments as a JSON object, so a model cannot send
unparseable ones: the API reports ``finishReason: MALFORMED_FUNCTION_CALL`` with no
content instead. A scripted ``Call`` whose ``arguments`` text is not a JSON object
is answered that way. An empty ``Reply`` is a candidate with no parts.

With ``strict`` (the default) it refuses what the real API refuses in the ways
agent code gets wrong: no contents, a role other than ``user``/``model``, a turn
or part with no data, a function-call turn that does not follow a user or
function-response turn, a function-response turn whose number of responses
differs from the calls it answers, a response that answers no call, and function
declarations with a bad name or schema fields the API does not know (e.g.
``additionalProperties``). Such a request gets a 400 and consumes no scripted reply.

Not modelled: ``streamGenerateContent`` (refused with a 400), several candidates,
thought signatures, safety ratings, cached content, files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from vamos_env.testing.server import (
    Failure,
    FakeVendorServer,
    Raw,
    RecordedRequest,
    Reply,
    Script,
    Scripted,
    as_reply,
    completion_tokens,
    estimated_tokens,
)

MODEL_ROUTE = re.compile(r"^/(?P<version>v1[a-z0-9]*)/models/(?P<model>[^/:]+):(?P<method>\w+)$")
FUNCTION_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
PART_DATA = (
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
)
# The fields of the API's Schema object; anything else is an unknown name to the API.
SCHEMA_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def camel(name: str) -> str:
    """A field name as its JSON name: proto3 JSON accepts ``max_length`` and ``maxLength`` alike."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def gemini_error(
    status: int, message: str, *, code: str | None = None, reason: str | None = None
) -> tuple[int, dict[str, Any]]:
    """Google's error object; ``code`` overrides the status name derived from the HTTP status."""
    error: dict[str, Any] = {
        "code": status,
        "message": message,
        "status": code or _STATUS.get(status, "UNKNOWN"),
    }
    if reason is not None:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ]
    return status, {"error": error}


class FakeGeminiServer(FakeVendorServer):
    """``generateContent`` on ``http://127.0.0.1:<port>``, answered from a script.

    ``replies`` is a list of ``Reply`` / ``Failure`` / ``Raw`` / plain strings taken in
    order, or a function of the ``RecordedRequest`` (its ``model`` is in the path).
    """

    vendor = "gemini"

    def __init__(
        self,
        replies: Iterable[Scripted] | Script | None = None,
        *,
        delay_s: float = 0.0,
        api_key: str | None = None,
        strict: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(
            replies, delay_s=delay_s, api_key=api_key, strict=strict, host=host, port=port
        )
        self._responses = 0

    @property
    def base_url(self) -> str:
        """What ``types.HttpOptions(base_url=...)`` takes (the SDK adds ``/v1beta/...``)."""
        return self.origin

    @staticmethod
    def model_turns(body: Any) -> int:
        contents = body.get("contents") if isinstance(body, dict) else None
        if not isinstance(contents, list):
            return 0
        return sum(1 for c in contents if isinstance(c, dict) and c.get("role") == "model")

    def is_model_route(self, request: RecordedRequest) -> bool:
        route = MODEL_ROUTE.match(request.path)
        return request.method == "POST" and route is not None

    # -- routes --------------------------------------------------------------------------
    def answer(self, request: RecordedRequest) -> tuple[int, Any] | Raw:
        refused = self._authorise(request)
        if refused is not None:
            return refused
        route = MODEL_ROUTE.match(request.path)
        if request.method != "POST" or route is None:
            return gemini_error(
                404, f"The requested URL {request.path} was not found on this server."
            )
        if route["method"] != "generateContent":
            return gemini_error(
                400,
                f"This fake server answers generateContent only, not {route['method']}.",
            )
        if not isinstance(request.body, dict):
            return gemini_error(
                400, "Invalid JSON payload received. Expected a GenerateContentRequest object."
            )
        if self.strict:
            invalid = validate_generate_request(request.body)
            if invalid is not None:
                return invalid
        scripted = self.next_reply(request)
        if scripted is None:
            return gemini_error(
                400,
                f"fake server: the reply script is exhausted after {self._responses} "
                "responses; push more replies",
            )
        self.pause(scripted)
        reply = as_reply(scripted)
        if isinstance(reply, Raw):
            return reply
        if isinstance(reply, Failure):
            return gemini_error(reply.status, reply.message, code=reply.code)
        return 200, self._response(request, route["model"], reply)

    def _authorise(self, request: RecordedRequest) -> tuple[int, Any] | None:
        if self.api_key is None:
            return None
        given = request.headers.get("x-goog-api-key") or request.query.get("key")
        if not given:
            return gemini_error(
                403,
                "Method doesn't allow unregistered callers. Send an API key in the "
                "x-goog-api-key header.",
            )
        if given != self.api_key:
            return gemini_error(
                400, "API key not valid. Please pass a valid API key.", reason="API_KEY_INVALID"
            )
        return None

    def _response(self, request: RecordedRequest, model: str, reply: Reply) -> dict[str, Any]:
        with self._lock:
            self._responses += 1
            number = self._responses
        parts: list[dict[str, Any]] = []
        if reply.text:
            parts.append({"text": reply.text})
        malformed = False
        for call in reply.calls:
            arguments = _arguments_object(call.arguments)
            if arguments is None:
                malformed = True
                break
            function_call: dict[str, Any] = {"name": call.name, "args": arguments}
            if call.id is not None:
                function_call["id"] = call.id
            parts.append({"functionCall": function_call})
        prompt, completion = reply.usage or (
            estimated_tokens(request.raw),
            completion_tokens(reply),
        )
        candidate: dict[str, Any]
        if malformed:
            candidate = {
                "finishReason": reply.finish_reason or "MALFORMED_FUNCTION_CALL",
                "index": 0,
                "finishMessage": "Malformed function call: the arguments are not a JSON object.",
            }
        else:
            content: dict[str, Any] = {"role": "model"}
            if parts:
                content["parts"] = parts
            candidate = {
                "content": content,
                "finishReason": reply.finish_reason or "STOP",
                "index": 0,
            }
        return {
            "candidates": [candidate],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
            },
            "modelVersion": model,
            "responseId": f"fake-response-{number:06d}",
        }


def _arguments_object(arguments: Mapping[str, Any] | str) -> dict[str, Any] | None:
    if not isinstance(arguments, str):
        return dict(arguments)
    if not arguments.strip():
        return {}
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def validate_generate_request(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """The checks the Gemini API applies that agent code most often fails; None when it passes."""
    invalid = _validate_tools(body.get("tools"))
    if invalid is not None:
        return invalid
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return gemini_error(400, "* GenerateContentRequest.contents: contents is not specified\n")
    calls_waiting = 0  # function calls in the previous model turn, still to be answered
    previous: str | None = None  # "user", "model", "call" or "response": what the last turn was
    for i, content in enumerate(contents):
        role = (content.get("role") or "user") if isinstance(content, dict) else None
        if role not in ("user", "model"):
            return gemini_error(400, "Please use a valid role: user, model.")
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list) or not parts:
            return gemini_error(
                400,
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be "
                "empty.\n",
            )
        for j, part in enumerate(parts):
            data = [k for k in part if camel(k) in PART_DATA] if isinstance(part, dict) else []
            if len(data) != 1:
                return gemini_error(
                    400,
                    f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required oneof "
                    "field 'data' must have one initialized field\n",
                )
        calls = sum(1 for p in parts if {"functionCall", "function_call"} & p.keys())
        responses = sum(1 for p in parts if {"functionResponse", "function_response"} & p.keys())
        if role == "model" and calls:
            if previous not in (None, "user", "response"):
                return gemini_error(
                    400,
                    "Please ensure that function call turn comes immediately after a user turn "
                    "or after a function response turn.",
                )
            calls_waiting, previous = calls, "call"
            continue
        if responses:
            if role != "user" or previous != "call":
                return gemini_error(
                    400,
                    "Please ensure that function response turn comes immediately after a "
                    "function call turn.",
                )
            if responses != calls_waiting:
                return gemini_error(
                    400,
                    "Please ensure that the number of function response parts is equal to the "
                    "number of function call parts of the function call turn.",
                )
            calls_waiting, previous = 0, "response"
            continue
        if previous == "call":
            return gemini_error(
                400,
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn.",
            )
        previous = role
    return None


def _validate_tools(tools: Any) -> tuple[int, dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return gemini_error(400, "Invalid JSON payload received. 'tools' must be a list.")
    for i, tool in enumerate(tools):
        declarations = (
            tool.get("functionDeclarations", tool.get("function_declarations", []))
            if isinstance(tool, dict)
            else None
        )
        if not isinstance(declarations, list):
            return gemini_error(
                400, f"Invalid JSON payload received. 'tools[{i}].functionDeclarations'."
            )
        for j, declaration in enumerate(declarations):
            where = f"tools[{i}].function_declarations[{j}]"
            name = declaration.get("name") if isinstance(declaration, dict) else None
            if not isinstance(name, str) or not FUNCTION_NAME.match(name):
                return gemini_error(
                    400,
                    f"* GenerateContentRequest.{where}.name: Invalid function name. Must start "
                    "with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), "
                    "underscores (_), dots (.), colons (:), or dashes (-), with a maximum "
                    "length of 64.\n",
                )
            unknown = _unknown_schema_field(declaration.get("parameters"), f"{where}.parameters")
            if unknown is not None:
                return gemini_error(
                    400,
                    f'Invalid JSON payload received. Unknown name "{unknown[0]}" at '
                    f"'{unknown[1]}': Cannot find field.",
                )
    return None


def _unknown_schema_field(schema: Any, where: str) -> tuple[str, str] | None:
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        key = camel(key)
        if key not in SCHEMA_FIELDS:
            return key, where
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                found = _unknown_schema_field(sub, f"{where}.properties[{name}].value")
                if found is not None:
                    return found
        elif key == "items":
            found = _unknown_schema_field(value, f"{where}.items")
            if found is not None:
                return found
        elif key == "anyOf" and isinstance(value, list):
            for k, sub in enumerate(value):
                found = _unknown_schema_field(sub, f"{where}.any_of[{k}]")
                if found is not None:
                    return found
    return None
