"""``FakeOpenAIServer``: the chat-completions wire shape, OpenAI's refusals, and the script.

The official ``openai`` SDK is the client wherever it can send the request; raw
``httpx`` sends what the SDK would never send (bodies that are not JSON, wrong
conversations the SDK's types would not stop anyway, streaming).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from vamos_env.clock import NOW_UNIX
from vamos_env.testing import Call, Failure, FakeOpenAIServer, Raw, RecordedRequest, Reply

HELLO: Any = [{"role": "user", "content": "Hello"}]
TOOL: Any = {
    "type": "function",
    "function": {"name": "get_account", "parameters": {"type": "object"}},
}


def client(server: FakeOpenAIServer, key: str = "test-key") -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=0)


def post(server: FakeOpenAIServer, body: Any, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"{server.base_url}/chat/completions",
        content=content,
        headers={"content-type": "application/json", **headers},
    )


def test_a_text_reply_is_a_chat_completion() -> None:
    with FakeOpenAIServer(["Hi, this is Rory."]) as server:
        completion = client(server).chat.completions.create(model="gpt-x", messages=HELLO)
        request = server.requests[0]
    assert completion.object == "chat.completion" and completion.model == "gpt-x"
    assert completion.created == NOW_UNIX  # the frozen clock, never the wall clock
    choice = completion.choices[0]
    assert choice.finish_reason == "stop" and choice.message.content == "Hi, this is Rory."
    assert choice.message.tool_calls is None
    usage = completion.usage
    assert usage is not None and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert request.path == "/v1/chat/completions" and request.body["messages"] == HELLO
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.status == 200 and request.response["id"] == completion.id


def test_tool_calls_carry_ids_and_arguments_as_json_text() -> None:
    reply = Reply(
        text="One moment.",
        calls=(
            Call("get_bill", {"bill_id": "in_1"}),
            Call("get_bill", '{"bill_id": "in_2"', id="call_given"),  # malformed, verbatim
        ),
        usage=(120, 9),
    )
    with FakeOpenAIServer([reply]) as server:
        completion = client(server).chat.completions.create(model="m", messages=HELLO, tools=[TOOL])
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == "One moment."
    calls: Any = choice.message.tool_calls or []
    assert [c.type for c in calls] == ["function", "function"]
    assert json.loads(calls[0].function.arguments) == {"bill_id": "in_1"}
    assert calls[1].id == "call_given" and calls[1].function.arguments == '{"bill_id": "in_2"'
    assert calls[0].id.startswith("call_") and calls[0].id != calls[1].id
    assert completion.usage is not None and (
        completion.usage.prompt_tokens,
        completion.usage.completion_tokens,
    ) == (120, 9)


ASSISTANT_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_account", "arguments": "{}"}}
    ],
}
TOOL_ANSWER = {"role": "tool", "tool_call_id": "call_1", "content": "{}"}

INVALID = {
    "no model": ({"messages": HELLO}, None, "model parameter"),
    "no messages": ({"model": "m", "messages": []}, "messages", "too short"),
    "unknown role": (
        {"model": "m", "messages": [{"role": "robot", "content": "x"}]},
        "messages[0].role",
        "Supported values",
    ),
    "tool answers nothing": (
        {"model": "m", "messages": [*HELLO, TOOL_ANSWER]},
        "messages.[1].role",
        "must be a response to a preceding message with 'tool_calls'",
    ),
    "call left unanswered": (
        {"model": "m", "messages": [*HELLO, ASSISTANT_CALL, *HELLO]},
        "messages.[1].role",
        "did not have response messages: call_1",
    ),
    "call unanswered at the end": (
        {"model": "m", "messages": [*HELLO, ASSISTANT_CALL]},
        "messages.[1].role",
        "call_1",
    ),
    "empty tool_calls": (
        {"model": "m", "messages": [*HELLO, {"role": "assistant", "tool_calls": []}]},
        "messages[1].tool_calls",
        "empty array",
    ),
    "assistant with nothing": (
        {"model": "m", "messages": [*HELLO, {"role": "assistant", "content": None}]},
        "messages.[1].content",
        "got null",
    ),
    "tool without id": (
        {"model": "m", "messages": [*HELLO, ASSISTANT_CALL, {"role": "tool", "content": "{}"}]},
        "messages.[2].tool_call_id",
        "tool_call_id",
    ),
    "bad tool name": (
        {
            "model": "m",
            "messages": HELLO,
            "tools": [{"type": "function", "function": {"name": "get account"}}],
        },
        "tools[0].function.name",
        "does not match pattern",
    ),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_conversations_openai_refuses_are_refused_the_same_way(case: str) -> None:
    body, param, words = INVALID[case]
    with FakeOpenAIServer(["never sent"]) as server:
        response = post(server, body)
        assert server.pending == 1  # a refused request reaches no model
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert words in error["message"]


def test_a_well_formed_tool_round_trip_passes() -> None:
    body = {"model": "m", "messages": [*HELLO, ASSISTANT_CALL, TOOL_ANSWER], "tools": [TOOL]}
    with FakeOpenAIServer(["Done."]) as server:
        assert post(server, body).status_code == 200


def test_strict_off_answers_anything_with_a_model() -> None:
    with FakeOpenAIServer(["ok"], strict=False) as server:
        response = post(server, {"model": "m", "messages": [*HELLO, TOOL_ANSWER]})
    assert response.status_code == 200


def test_the_sdk_raises_its_own_errors_for_scripted_failures() -> None:
    script = [
        Failure(429, "Rate limit reached for requests."),
        Failure(500, "The server had an error."),
        Failure(400, "Too long.", code="context_length_exceeded"),
    ]
    with FakeOpenAIServer(script) as server:
        sdk = client(server)
        with pytest.raises(openai.RateLimitError) as limited:
            sdk.chat.completions.create(model="m", messages=HELLO)
        with pytest.raises(openai.InternalServerError):
            sdk.chat.completions.create(model="m", messages=HELLO)
        with pytest.raises(openai.BadRequestError) as bad:
            sdk.chat.completions.create(model="m", messages=HELLO)
    assert limited.value.code == "rate_limit_exceeded" and limited.value.type == "rate_limit_error"
    assert bad.value.code == "context_length_exceeded"


def test_raw_replies_are_sent_as_they_are() -> None:
    with FakeOpenAIServer([Raw(502, "upstream gone", "text/plain")]) as server:
        response = post(server, {"model": "m", "messages": HELLO})
    assert response.status_code == 502 and response.text == "upstream gone"
    assert server.requests[0].status == 502 and server.requests[0].response is None


def test_keys_are_checked_when_the_server_has_one() -> None:
    with FakeOpenAIServer(["ok", "ok"], api_key="sk-right") as server:
        with pytest.raises(openai.AuthenticationError) as wrong:
            client(server, "sk-wrong-key").chat.completions.create(model="m", messages=HELLO)
        missing = httpx.post(f"{server.base_url}/chat/completions", json={"model": "m"})
        assert client(server, "sk-right").chat.completions.create(model="m", messages=HELLO)
    assert wrong.value.code == "invalid_api_key" and "sk-wrong-key" not in str(wrong.value)
    assert missing.status_code == 401 and "didn't provide an API key" in missing.text


def test_routes_other_than_completions() -> None:
    with FakeOpenAIServer(models=("local-7b", "local-70b")) as server:
        listed = client(server).models.list()
        unknown = httpx.post(f"{server.base_url}/embeddings", json={"input": "x"})
        not_json = post(server, b"{model: m")
        streamed = post(server, {"model": "m", "messages": HELLO, "stream": "yes"})
    assert [m.id for m in listed.data] == ["local-7b", "local-70b"]
    assert unknown.status_code == 404
    assert unknown.json()["error"]["message"] == "Invalid URL (POST /v1/embeddings)"
    assert not_json.status_code == 400 and "parse the JSON body" in not_json.text
    assert streamed.status_code == 400 and streamed.json()["error"]["param"] == "stream"


def test_a_streamed_reply_is_the_same_reply_in_chunks() -> None:
    calls = (Call("get_account", {"account_number": "4417-90781"}), Call("get_bill"))
    reply = Reply("Let me look that up for you, one moment please.", calls)
    with FakeOpenAIServer([reply, reply, "Done.", "Raw."]) as server:
        sdk = client(server)
        whole = sdk.chat.completions.create(model="m", messages=HELLO, tools=[TOOL])
        chunks = list(
            sdk.chat.completions.create(
                model="m",
                messages=HELLO,
                tools=[TOOL],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        plain = list(sdk.chat.completions.create(model="m", messages=HELLO, stream=True))
        raw = post(server, {"model": "m", "messages": HELLO, "stream": True})
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
    assert chunks[0].choices[0].delta.role == "assistant"
    names: dict[int, str] = {}
    arguments: dict[int, str] = {}
    ids: dict[int, str] = {}
    for c in chunks:
        for call in (c.choices[0].delta.tool_calls or []) if c.choices else []:
            ids[call.index] = call.id or ids.get(call.index, "")
            names[call.index] = (call.function and call.function.name) or names.get(call.index, "")
            piece = (call.function and call.function.arguments) or ""
            arguments[call.index] = arguments.get(call.index, "") + piece
    assert [names[i] for i in sorted(names)] == ["get_account", "get_bill"]
    assert json.loads(arguments[0]) == {"account_number": "4417-90781"}
    assert json.loads(arguments[1]) == {}
    assert all(ids[i].startswith("call_") for i in ids)
    finishing = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishing[-1] == "tool_calls" and set(finishing[:-1]) == {None}
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens  # type: ignore[union-attr]
    assert all(c.usage is None for c in chunks[:-1])
    assert plain[-1].choices[0].finish_reason == "stop"
    assert "".join(c.choices[0].delta.content or "" for c in plain) == "Done."
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert raw.text.endswith("data: [DONE]\n\n")


def test_the_script_queue_function_and_exhaustion() -> None:
    with FakeOpenAIServer(["first"]) as server:
        sdk = client(server)
        server.push("second")
        said = [sdk.chat.completions.create(model="m", messages=HELLO) for _ in range(2)]
        with pytest.raises(openai.BadRequestError, match="script is exhausted after 2"):
            sdk.chat.completions.create(model="m", messages=HELLO)
    assert [c.choices[0].message.content for c in said] == ["first", "second"]

    def echo(request: RecordedRequest) -> str:
        return "you said: " + request.body["messages"][-1]["content"]

    with FakeOpenAIServer(echo) as server:
        reply = client(server).chat.completions.create(model="m", messages=HELLO)
        with pytest.raises(RuntimeError, match="no queue"):
            server.push("x")
    assert reply.choices[0].message.content == "you said: Hello"
