"""``FakeGeminiServer``: the generateContent wire shape, the API's refusals, and the script.

``google-genai`` is the client wherever it can send the request; raw ``httpx``
sends the conversations the API refuses.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from vamos_env.envs.energy.tools import tool_schemas
from vamos_env.testing import Call, Failure, FakeGeminiServer, Reply
from vamos_env.toolschema import gemini_tools

ROUTE = "/v1beta/models/gemini-fake:generateContent"
USER = {"role": "user", "parts": [{"text": "Hello"}]}
CALL: Any = {"role": "model", "parts": [{"functionCall": {"name": "get_account", "args": {}}}]}
ANSWER = {
    "role": "user",
    "parts": [{"functionResponse": {"name": "get_account", "response": {"ok": True}}}],
}


def client(server: FakeGeminiServer, key: str = "test-key") -> genai.Client:
    return genai.Client(api_key=key, http_options=types.HttpOptions(base_url=server.base_url))


def post(server: FakeGeminiServer, body: Any, path: str = ROUTE, **headers: str) -> httpx.Response:
    return httpx.post(f"{server.base_url}{path}", json=body, headers=headers)


def test_text_and_function_calls_come_back_as_gemini_sends_them() -> None:
    reply = Reply(
        text="One moment.",
        calls=(Call("get_bill", {"bill_id": "in_1"}), Call("list_bills", id="fc-2")),
        usage=(80, 7),
    )
    with FakeGeminiServer([reply]) as server:
        sdk = client(server)  # kept: a collected Client closes its connection pool
        response = sdk.models.generate_content(model="gemini-fake", contents="Hi")
        request = server.requests[0]
    assert response.text == "One moment."
    calls = response.function_calls or []
    assert [(c.name, c.args, c.id) for c in calls] == [
        ("get_bill", {"bill_id": "in_1"}, None),  # the Gemini API gives no call ids
        ("list_bills", {}, "fc-2"),
    ]
    candidate = response.candidates[0] if response.candidates else None
    assert candidate is not None and candidate.finish_reason == types.FinishReason.STOP
    usage = response.usage_metadata
    assert usage is not None and (usage.prompt_token_count, usage.candidates_token_count) == (80, 7)
    assert response.model_version == "gemini-fake"
    assert request.headers["x-goog-api-key"] == "test-key"
    assert request.body["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]


def test_unparseable_arguments_become_a_malformed_function_call() -> None:
    with FakeGeminiServer([Reply(calls=(Call("get_bill", '{"bill_id": '),))]) as server:
        sdk = client(server)  # kept: a collected Client closes its connection pool
        response = sdk.models.generate_content(model="gemini-fake", contents="Hi")
    candidate = response.candidates[0] if response.candidates else None
    assert candidate is not None and candidate.content is None
    assert candidate.finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL


def test_an_empty_reply_is_a_candidate_without_parts() -> None:
    with FakeGeminiServer([Reply()]) as server:
        sdk = client(server)  # kept: a collected Client closes its connection pool
        response = sdk.models.generate_content(model="gemini-fake", contents="Hi")
    candidate = response.candidates[0] if response.candidates else None
    assert candidate is not None and candidate.content is not None
    assert not candidate.content.parts and response.text is None


INVALID = {
    "no contents": ({"contents": []}, "contents is not specified"),
    "unknown role": (
        {"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]},
        "valid role",
    ),
    "no parts": ({"contents": [{"role": "user", "parts": []}]}, "must not be empty"),
    "part without data": (
        {"contents": [{"role": "user", "parts": [{"thought": True}]}]},
        "required oneof field 'data'",
    ),
    "call after a model turn": (
        {"contents": [USER, {"role": "model", "parts": [{"text": "Hm."}]}, CALL, ANSWER]},
        "function call turn comes immediately after a user turn",
    ),
    "fewer answers than calls": (
        {
            "contents": [
                USER,
                {"role": "model", "parts": CALL["parts"] * 2},
                ANSWER,
            ]
        },
        "number of function response parts is equal to the number of function call parts",
    ),
    "text instead of answers": (
        {"contents": [USER, CALL, USER]},
        "number of function response parts",
    ),
    "answer without a call": (
        {"contents": [USER, ANSWER]},
        "function response turn comes immediately after a function call turn",
    ),
    "unknown schema field": (
        {
            "contents": [USER],
            "tools": [
                {
                    "functionDeclarations": [
                        {
                            "name": "get_bill",
                            "parameters": {
                                "type": "OBJECT",
                                "properties": {"bill_id": {"type": "STRING"}},
                                "additionalProperties": False,
                            },
                        }
                    ]
                }
            ],
        },
        'Unknown name "additionalProperties"',
    ),
    "bad function name": (
        {"contents": [USER], "tools": [{"functionDeclarations": [{"name": "get bill"}]}]},
        "Invalid function name",
    ),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_requests_the_api_refuses_are_refused_the_same_way(case: str) -> None:
    body, words = INVALID[case]
    with FakeGeminiServer(["never sent"]) as server:
        response = post(server, body)
        assert server.pending == 1  # a refused request reaches no model
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert words in error["message"]


def test_a_well_formed_function_round_trip_passes() -> None:
    answered = {"role": "user", "parts": [*ANSWER["parts"], {"text": "And my bill?"}]}
    with FakeGeminiServer(["Done."]) as server:
        assert post(server, {"contents": [USER, CALL, answered, USER]}).status_code == 200


def test_the_environments_tools_pass_as_the_sdk_sends_them() -> None:
    """The SDK sends snake_case schema fields (max_length); the API's JSON accepts both."""
    declarations = [
        types.FunctionDeclaration.model_validate(d) for d in gemini_tools(tool_schemas())
    ]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=declarations)])
    with FakeGeminiServer(["ok"]) as server:
        sdk = client(server)
        sdk.models.generate_content(model="gemini-fake", contents="Hi", config=config)
        sent = server.requests[0].body["tools"][0]["functionDeclarations"]
    assert len(sent) == 16


def test_the_sdk_raises_its_own_errors_for_scripted_failures() -> None:
    script = [Failure(429, "Resource has been exhausted."), Failure(503, "Overloaded.")]
    with FakeGeminiServer(script) as server:
        sdk = client(server)
        with pytest.raises(errors.ClientError) as limited:
            sdk.models.generate_content(model="gemini-fake", contents="Hi")
        with pytest.raises(errors.ServerError) as busy:
            sdk.models.generate_content(model="gemini-fake", contents="Hi")
    assert (limited.value.code, limited.value.status) == (429, "RESOURCE_EXHAUSTED")
    assert (busy.value.code, busy.value.status) == (503, "UNAVAILABLE")


def test_keys_are_checked_when_the_server_has_one() -> None:
    with FakeGeminiServer(["ok", "ok"], api_key="right") as server:
        sdk = client(server, "wrong")
        with pytest.raises(errors.ClientError) as wrong:
            sdk.models.generate_content(model="gemini-fake", contents="Hi")
        missing = post(server, {"contents": [USER]})
        by_query = post(server, {"contents": [USER]}, path=f"{ROUTE}?key=right")
    assert wrong.value.code == 400 and "API key not valid" in str(wrong.value.message)
    assert wrong.value.details["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    assert missing.status_code == 403 and missing.json()["error"]["status"] == "PERMISSION_DENIED"
    assert by_query.status_code == 200


def test_other_routes() -> None:
    with FakeGeminiServer() as server:
        streamed = post(
            server, {"contents": [USER]}, path=ROUTE.replace(":generate", ":streamGenerate")
        )
        unknown = post(server, {}, path="/v1beta/files")
        not_json = httpx.post(f"{server.base_url}{ROUTE}", content=b"{contents")
        exhausted = post(server, {"contents": [USER]})
    assert streamed.status_code == 400 and "generateContent only" in streamed.text
    assert unknown.status_code == 404 and unknown.json()["error"]["status"] == "NOT_FOUND"
    assert not_json.status_code == 400 and "Invalid JSON payload" in not_json.text
    assert exhausted.status_code == 400 and "script is exhausted" in exhausted.text
