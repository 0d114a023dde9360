"""LLM callers against local fake servers that speak OpenAI's and Gemini's real wire protocols.

No SDK is patched: the official clients send real HTTP to a small server on
127.0.0.1 that answers ``POST /v1/chat/completions`` in OpenAI's JSON shape and
``POST /v1*/models/{model}:generateContent`` in Gemini's. The server's "model" is
either a script of raw replies (to test malformed and empty ones) or a scripted
caller playing the model's part, so a whole call runs over the wire.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from vamos_env.callers.base import HangUp, Utterance
from vamos_env.callers.llm import (
    ANSWERED,
    REPLY_SCHEMA,
    CallerModelError,
    GeminiCaller,
    LLMCaller,
    OpenAICaller,
    caller_prompt,
    parse_reply,
)
from vamos_env.callers.persona import load_persona
from vamos_env.callers.scripted import ScriptedCaller

pytest.importorskip("openai")
pytest.importorskip("google.genai")

GEMINI_PATH = re.compile(r"^/v1[a-z0-9]*/models/(?P<model>[^/:]+):generateContent$")


class Raw:
    """A reply the fake server sends as is: an HTTP status and a body."""

    def __init__(self, status: int, body: str) -> None:
        self.status, self.body = status, body


NO_CHOICES = object()  # a 200 with no choices / no candidates


@dataclass
class FakeVendor:
    """The model behind both fake endpoints: scripted replies, or a function of the turns."""

    replies: list[Any] = field(default_factory=list)
    model: Callable[[list[tuple[str, str]]], str] | None = None
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)

    def next_reply(self, turns: list[tuple[str, str]]) -> Any:
        if self.model is not None:
            return self.model(turns)
        return self.replies.pop(0)


def _openai_body(content: Any) -> dict[str, Any]:
    choices = (
        []
        if content is NO_CHOICES
        else [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ]
    )
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1789000749,
        "model": "fake-model",
        "choices": choices,
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _gemini_body(content: Any) -> dict[str, Any]:
    candidates = (
        []
        if content is NO_CHOICES
        else [
            {
                "content": {"role": "model", "parts": [{"text": content}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ]
    )
    return {
        "candidates": candidates,
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-fake",
    }


def _handler(vendor: FakeVendor) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            vendor.requests.append(
                (self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            if self.path == "/v1/chat/completions":
                turns = [(m["role"], m["content"]) for m in body["messages"]]
                shape = _openai_body
            elif GEMINI_PATH.match(self.path):
                turns = [("system", body["systemInstruction"]["parts"][0]["text"])] + [
                    (c["role"], c["parts"][0]["text"]) for c in body["contents"]
                ]
                shape = _gemini_body
            else:
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            reply = vendor.next_reply(turns)
            if isinstance(reply, Raw):
                self._send(reply.status, reply.body)
            else:
                self._send(200, json.dumps(shape(reply)))

        def _send(self, status: int, text: str) -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def vendor() -> Iterator[tuple[FakeVendor, str]]:
    fake = FakeVendor()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def openai_caller(task, url: str, persona: str = "calm") -> LLMCaller:
    return OpenAICaller(
        task, persona, model="fake-model", base_url=f"{url}/v1", api_key="test-key", max_retries=0
    )


def gemini_caller(task, url: str, persona: str = "calm") -> LLMCaller:
    return GeminiCaller(task, persona, model="gemini-fake", base_url=url, api_key="test-key")


MAKERS = {"openai": openai_caller, "gemini": gemini_caller}


def said(text: str, *, end: bool = False, goal: bool | None = None) -> str:
    return json.dumps({"say": text, "end_call": end, "goal_met": goal})


# --- the wire ------------------------------------------------------------------------------


def test_openai_request_has_the_chat_completions_shape(tasks, vendor) -> None:
    fake, url = vendor
    fake.replies = [said("It's 4417-90781.")]
    caller = openai_caller(tasks["t-balance-pay"], url)
    caller.open()
    reply = caller.hear("What's your account number?")
    assert reply == Utterance("It's 4417-90781.")
    path, headers, body = fake.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer test-key"
    assert body["model"] == "fake-model"
    # A strict schema, not json_object: constrained decoders read json_object as "any JSON
    # value" and a real model answered a bare 203.91 (issue 18).
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == REPLY_SCHEMA
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert body["messages"][1]["content"] == ANSWERED
    assert body["messages"][-1]["content"] == "What's your account number?"
    assert "4417-90781" in body["messages"][0]["content"]


def test_gemini_request_has_the_generate_content_shape(tasks, vendor) -> None:
    fake, url = vendor
    fake.replies = [said("Dana Whitfield.")]
    caller = gemini_caller(tasks["t-balance-pay"], url)
    caller.open()
    assert caller.hear("And your full name?") == Utterance("Dana Whitfield.")
    path, headers, body = fake.requests[0]
    assert GEMINI_PATH.match(path) and "gemini-fake" in path
    assert headers["x-goog-api-key"] == "test-key"
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert "Dana Whitfield" in body["systemInstruction"]["parts"][0]["text"]


@pytest.mark.parametrize("vendor_name", ["openai", "gemini"])
def test_a_whole_call_over_the_wire(tasks, vendor, answer_key_agent, converse, vendor_name) -> None:
    """The fake model is a scripted caller reading the turns it is sent."""
    fake, url = vendor
    task = tasks["t-arrangement-paperless"]
    player = ScriptedCaller(task, "calm", rng=0)

    def model(turns: list[tuple[str, str]]) -> str:
        reply = player.hear(turns[-1][1])
        if isinstance(reply, HangUp):
            return said(reply.text or "Bye.", end=True, goal=player.goal_met())
        return said(reply.text)

    fake.model = model
    caller = MAKERS[vendor_name](task, url)
    player.open()
    call = converse(caller, answer_key_agent(task).reply)
    assert isinstance(call.ending, HangUp) and call.ending.reason == "caller_ended"
    assert caller.goal_met() and caller.deviations == []
    assert player.outcomes == ["resolved", "resolved"]


# --- replies that cannot be used -----------------------------------------------------------

BAD_REPLIES = {
    "not json": "Sure, my account number is 4417-90781.",
    "empty": "",
    "no say": json.dumps({"end_call": False}),
    "array": "[1, 2]",
    "bare number": "203.91",
    "bare string": json.dumps("Yes, that's right."),
    "null": "null",
    "no choices": NO_CHOICES,
    "server error": Raw(500, json.dumps({"error": {"message": "overloaded", "code": 500}})),
    "not json body": Raw(200, "<html>gateway</html>"),
}


@pytest.mark.parametrize("vendor_name", ["openai", "gemini"])
@pytest.mark.parametrize("case", list(BAD_REPLIES))
def test_unusable_replies_mark_a_benchmark_fault_and_crash_nothing(
    tasks, vendor, vendor_name, case
) -> None:
    fake, url = vendor
    fake.replies = [BAD_REPLIES[case]]
    caller = MAKERS[vendor_name](tasks["t-balance-pay"], url)
    caller.open()
    ending = caller.hear("What's your account number?")
    assert isinstance(ending, HangUp) and ending.reason == "caller_error"
    assert [d.kind for d in caller.deviations] == ["caller_error"]
    assert caller.deviations[0].detail.startswith(("openai:", "gemini:"))
    assert not caller.goal_met()


def test_unusable_reply_errors_say_what_came() -> None:
    with pytest.raises(CallerModelError, match="empty reply"):
        parse_reply("  ")
    with pytest.raises(CallerModelError, match="not JSON"):
        parse_reply("Hello there")
    with pytest.raises(CallerModelError, match='"end_call" to be true or false'):
        parse_reply('{"say": "hi", "end_call": "yes"}')
    with pytest.raises(CallerModelError, match="got nothing"):
        parse_reply('{"say": ""}')
    assert parse_reply('```json\n{"say": "Hi.", "end_call": true}\n```').end_call


# --- the deviation check -------------------------------------------------------------------


def test_volunteering_a_figure_is_a_deviation(tasks, vendor) -> None:
    fake, url = vendor
    fake.replies = [said("I want to pay the $222.89 on the card ending 4242.")]
    caller = openai_caller(tasks["t-balance-pay"], url)
    caller.open()
    caller.hear("How can I help?")
    assert [d.kind for d in caller.deviations] == ["volunteered_figure"]


def test_repeating_a_figure_the_agent_said_is_fine(tasks, vendor) -> None:
    fake, url = vendor
    fake.replies = [said("Okay, $222.89. I'd like to pay that.")]
    caller = openai_caller(tasks["t-balance-pay"], url)
    caller.open()
    caller.hear("The past due amount is two hundred twenty-two dollars and eighty-nine cents.")
    assert caller.deviations == []


def test_skipping_a_request_is_a_deviation(tasks, vendor) -> None:
    fake, url = vendor
    fake.replies = [said("Thanks, that's all. Bye.", end=True, goal=True)]
    caller = openai_caller(tasks["t-balance-pay"], url)  # the opening raised only the balance
    caller.open()
    ending = caller.hear(
        "The past due amount is two hundred twenty-two dollars and eighty-nine cents."
    )
    assert isinstance(ending, HangUp) and ending.reason == "caller_ended"
    kinds = [d.kind for d in caller.deviations]
    assert kinds == ["skipped_request"] and "pay_bill" in caller.deviations[0].detail


def test_hanging_up_while_the_agent_checks_is_a_deviation(tasks, vendor) -> None:
    fake, url = vendor
    fake.replies = [said("I'd like to pay my August bill today.")]
    fake.replies.append(said("Never mind. Bye.", end=True))
    caller = gemini_caller(tasks["t-balance-pay"], url)
    caller.open()
    caller.hear("The past due amount is two hundred twenty-two dollars and eighty-nine cents.")
    caller.hear("One moment, let me check that for you.")
    assert [d.kind for d in caller.deviations] == ["hung_up_while_waiting"]


def test_a_forbidden_demand_is_a_deviation_unless_the_brief_makes_it(tasks, vendor) -> None:
    fake, url = vendor
    fake.replies = [said("Get me your supervisor. And I want a refund.")]
    angry = openai_caller(tasks["t-balance-pay"], url, "angry")
    angry.open()
    angry.hear("How can I help?")
    assert [d.kind for d in angry.deviations] == ["forbidden", "forbidden"]
    fake.replies = [said("I'd like to speak to a supervisor, please.")]
    allowed = openai_caller(tasks["t-decline-supervisor"], url, "angry")
    allowed.open()
    allowed.hear("Anything else?")
    assert allowed.deviations == []


def test_prompt_carries_persona_and_brief(tasks) -> None:
    task = tasks["t-balance-pay"]
    prompt = caller_prompt(task, load_persona("sceptic-nl"))
    assert "nl-NL" in prompt and "4417-90781" in prompt and "15213" in prompt
    assert "card on file" not in prompt.lower() or "4242" in prompt  # consent names the card
    assert "Why?" in prompt and "$222.89" in prompt and '"end_call"' in prompt
    assert prompt.index(task.requests[0].says) < prompt.index(task.requests[1].says)


# --- live (real vendors; skipped without keys) ---------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY is not set")
def test_live_openai_caller_answers_in_the_protocol(tasks) -> None:
    caller = OpenAICaller(
        tasks["t-balance-pay"], model=os.environ.get("VAMOS_OPENAI_MODEL", "gpt-4o-mini")
    )
    caller.open()
    reply = caller.hear("Thank you. Can I have your account number, please?")
    assert isinstance(reply, Utterance) and caller.deviations == []


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("GOOGLE_API_KEY"), reason="GOOGLE_API_KEY is not set")
def test_live_gemini_caller_answers_in_the_protocol(tasks) -> None:
    caller = GeminiCaller(tasks["t-balance-pay"])
    caller.open()
    reply = caller.hear("Thank you. Can I have your account number, please?")
    assert isinstance(reply, Utterance) and caller.deviations == []


def test_the_reply_schema_is_what_parse_reply_reads() -> None:
    """Every reply the schema admits parses; the schema is strict (all required, no extras)."""
    assert set(REPLY_SCHEMA["required"]) == set(REPLY_SCHEMA["properties"])
    assert REPLY_SCHEMA["additionalProperties"] is False
    for goal in (True, False, None):
        assert parse_reply(said("Okay.", goal=goal)).goal_met is goal


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"reply_format": "json_object"}, {"type": "json_object"}),
        ({"reply_format": "none"}, None),
        ({"json_mode": False}, None),
    ],
)
def test_the_reply_format_can_be_loosened_for_servers_without_schemas(
    tasks, vendor, options, expected
) -> None:
    fake, url = vendor
    fake.replies = [said("It's 4417-90781.")]
    caller = OpenAICaller(
        tasks["t-balance-pay"],
        "calm",
        model="fake-model",
        base_url=f"{url}/v1",
        api_key="k",
        max_retries=0,
        **options,
    )
    caller.open()
    caller.hear("What's your account number?")
    assert fake.requests[0][2].get("response_format") == expected


def test_an_unknown_reply_format_is_refused(tasks) -> None:
    with pytest.raises(ValueError, match="reply_format"):
        OpenAICaller(tasks["t-balance-pay"], model="m", api_key="k", reply_format="yaml")
