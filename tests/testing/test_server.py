"""The shared machinery of the fake vendor servers: concurrency, delay, recording, safety."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import openai
import pytest

from vamos_env.testing import FakeGeminiServer, FakeOpenAIServer, RecordedRequest, Reply

HELLO: Any = [{"role": "user", "content": "Hello"}]


def test_two_hundred_requests_in_flight_with_a_one_second_delay() -> None:
    """The runner's load: 200 calls waiting on the model at once, each reply taking 1 s."""

    async def burst(server: FakeOpenAIServer) -> list[str | None]:
        sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        async with sdk:
            replies = await asyncio.gather(
                *(sdk.chat.completions.create(model="m", messages=HELLO) for _ in range(200))
            )
        return [r.choices[0].message.content for r in replies]

    with FakeOpenAIServer(["ok"] * 200, delay_s=1.0) as server:
        started = time.perf_counter()
        said = asyncio.run(burst(server))
        elapsed = time.perf_counter() - started
    assert said == ["ok"] * 200 and len(server.requests) == 200
    assert server.most_at_once >= 100, f"only {server.most_at_once} requests in flight at once"
    assert 1.0 <= elapsed < 20.0, f"200 requests took {elapsed:.2f}s"


def test_a_reply_can_carry_its_own_delay() -> None:
    with FakeGeminiServer([Reply(text="slow", delay_s=0.3), "fast"], delay_s=0.0) as server:
        url = f"{server.base_url}/v1beta/models/g:generateContent"
        body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
        started = time.perf_counter()
        httpx.post(url, json=body)
        slow = time.perf_counter() - started
        started = time.perf_counter()
        httpx.post(url, json=body)
        fast = time.perf_counter() - started
    assert slow >= 0.3 > fast


def test_requests_are_recorded_with_what_was_answered() -> None:
    with FakeOpenAIServer(["ok"]) as server:
        httpx.post(
            f"{server.base_url}/chat/completions?trace=1",
            json={"model": "m", "messages": HELLO},
            headers={"X-Custom": "yes"},
        )
        httpx.get(f"{server.base_url}/models")
    first, second = server.requests
    assert (first.method, first.path, first.query) == (
        "POST",
        "/v1/chat/completions",
        {"trace": "1"},
    )
    assert first.headers["x-custom"] == "yes" and first.body == {"model": "m", "messages": HELLO}
    assert first.raw.startswith(b"{") and first.status == 200
    assert first.response["choices"][0]["message"]["content"] == "ok"
    assert server.model_requests() == [first] and second.method == "GET"


def test_a_broken_script_answers_500_instead_of_hanging() -> None:
    def broken(request: RecordedRequest) -> str:
        raise KeyError("no such turn")

    with FakeOpenAIServer(broken) as server:
        response = httpx.post(
            f"{server.base_url}/chat/completions", json={"model": "m", "messages": HELLO}
        )
    assert response.status_code == 500 and "no such turn" in response.text


def test_only_loopback_and_sane_options() -> None:
    with pytest.raises(ValueError, match="loopback"):
        FakeOpenAIServer(host="0.0.0.0")
    with pytest.raises(ValueError, match="delay_s"):
        FakeGeminiServer(delay_s=-1)


def test_a_closed_server_refuses_connections() -> None:
    server = FakeOpenAIServer(["ok"]).start()
    url = f"{server.base_url}/models"
    assert httpx.get(url).status_code == 200
    server.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def test_per_conversation_scripts_follow_each_conversation_not_arrival_order() -> None:
    script = ["Hello.", "Goodbye."]
    first_turn: Any = [{"role": "user", "content": "Hi"}]
    second_turn: Any = [*first_turn, {"role": "assistant", "content": "Hello."}, *first_turn]
    with FakeOpenAIServer.per_conversation(script) as server:
        sdk = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        said = [
            sdk.chat.completions.create(model="m", messages=turns).choices[0].message.content
            for turns in (second_turn, first_turn, second_turn)
        ]
        with pytest.raises(openai.BadRequestError, match="no reply for model turn 2"):
            sdk.chat.completions.create(
                model="m", messages=[*second_turn, {"role": "assistant", "content": "Bye."}]
            )
    assert said == ["Goodbye.", "Hello.", "Goodbye."]
    with FakeGeminiServer.per_conversation(script) as server:
        body = {
            "contents": [
                {"role": "user", "parts": [{"text": "Hi"}]},
                {"role": "model", "parts": [{"text": "Hello."}]},
                {"role": "user", "parts": [{"text": "Bye"}]},
            ]
        }
        reply = httpx.post(f"{server.base_url}/v1beta/models/g:generateContent", json=body)
    assert reply.json()["candidates"][0]["content"]["parts"] == [{"text": "Goodbye."}]
