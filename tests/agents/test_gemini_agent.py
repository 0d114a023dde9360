"""The Gemini function-calling agent, playing exam calls through ``gym.make`` against a fake server.

The "model" is ``FakeGeminiServer`` answering ``generateContent`` from a script over
the real wire protocol; ``google-genai`` is not patched. The tests read what the
SDK sent: the system prompt as ``systemInstruction``, the tools as function
declarations, the caller's words as ``user`` turns, each model turn as returned,
and after a turn with function calls one ``functionResponse`` per call, in order,
carrying what the environment returned.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import pytest

import vamos_env  # noqa: F401  (registers VamosEnergy-v0)
from vamos_env.agents.gemini_agent import GeminiAgent
from vamos_env.agents.openai_agent import END_CALL, ModelCallError
from vamos_env.testing import Call, Failure, FakeGeminiServer, Raw, Reply

TASK = "c-a04-pay_after_decline-sep.payment_history.create_arrangement-36"  # caller: 8731-71970
VERIFY = {
    "account_number": "8731-71970",
    "name_on_account": "Samuel Walsh-Obi",
    "second_factor": "8210",
}
GREET = (
    "Thank you for calling Acme Energy, this is Rory. I can help with that. May I have your "
    "account number, the full name on the account, and the last four digits of a card on file?"
)
SCRIPT: tuple[Reply, ...] = (
    Reply(text=GREET),
    Reply(calls=(Call("verify_caller", VERIFY),)),
    Reply(
        text="Thank you, you're verified. Let me pull up your bills.",
        calls=(Call("list_bills"), Call("get_account")),
    ),
    Reply(text="Your September bill is two hundred twenty-four dollars and ninety-seven cents."),
    Reply(text="Thank you for calling Acme Energy. Goodbye.", calls=(Call(END_CALL),)),
)


@dataclass
class Played:
    reset_info: dict[str, Any]
    info: dict[str, Any]  # the last step's
    seen: list[str]  # every observation the agent received


def agent_for(server: FakeGeminiServer, **options: Any) -> GeminiAgent:
    options = {"api_key": "test-key", "max_retries": 0, **options}
    return GeminiAgent("gemini-fake", base_url=server.base_url, **options)


def play(env: Any, agent: GeminiAgent, seed: int = 7) -> Played:
    observation, info = env.reset(seed=seed, options={"task_id": TASK, "background": "clean"})
    agent.reset(info)
    played = Played(info, info, [observation])
    while True:
        action = agent.act(observation, info)
        observation, _, terminated, truncated, info = env.step(action)
        played.seen.append(observation)
        if terminated or truncated:
            played.info = info
            return played


def check_well_formed(body: dict[str, Any], system_prompt: str) -> None:
    """Roles alternate sensibly and every function call is answered, in order, by name."""
    assert body["systemInstruction"]["parts"] == [{"text": system_prompt}]
    contents = body["contents"]
    assert contents[0]["role"] == "user"
    for i, content in enumerate(contents):
        assert content["role"] in ("user", "model")
        assert content["parts"], content
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        if content["role"] == "model" and calls:
            answer = contents[i + 1]
            assert answer["role"] == "user"
            responses = [p["functionResponse"] for p in answer["parts"] if "functionResponse" in p]
            assert [r["name"] for r in responses] == [c["name"] for c in calls]
            assert [r.get("id") for r in responses] == [c.get("id") for c in calls]
            assert all(isinstance(r["response"], dict) for r in responses)


def declared_names(body: dict[str, Any]) -> list[str]:
    return [d["name"] for tool in body["tools"] for d in tool["functionDeclarations"]]


# --- a whole exam call -----------------------------------------------------------------------


def test_plays_an_exam_call_end_to_end() -> None:
    env = gym.make("VamosEnergy-v0")
    with FakeGeminiServer(SCRIPT) as server:
        agent = agent_for(server, end_call_tool=True)
        played = play(env, agent)
        requests = server.model_requests()

    info = played.info
    assert info["end_reason"] in ("end_call", "hang_up")
    assert server.pending == 0 and len(requests) == len(SCRIPT)
    prompt = played.reset_info["system_prompt"]
    names = [t["function"]["name"] for t in played.reset_info["tools"]] + [END_CALL]
    for request in requests:
        assert request.status == 200
        assert request.headers["x-goog-api-key"] == "test-key"
        assert request.path.endswith("/models/gemini-fake:generateContent")
        assert declared_names(request.body) == names
        check_well_formed(request.body, prompt)

    contents = requests[-1].body["contents"]
    assert contents[0] == {"role": "user", "parts": [{"text": played.seen[0]}]}
    assert contents[1] == {"role": "model", "parts": [{"text": GREET}]}
    verify = contents[3]["parts"][0]["functionCall"]
    assert verify == {"name": "verify_caller", "args": VERIFY}
    assert contents[4]["parts"][0]["functionResponse"]["response"] == {"status": "verified"}
    # Words and two tools at once: both answers, then the caller's words, in one user turn.
    answer = contents[6]["parts"]
    assert [next(iter(p)) for p in answer] == ["functionResponse", "functionResponse", "text"]
    assert answer[2]["text"] == json.loads(played.seen[3])["caller"]

    # The results sent back are exactly the environment's, matched through our call ids.
    turns = [t for t in info["transcript"]["turns"] if t["tool_call"]]
    assert [t["tool_call"]["name"] for t in turns] == ["verify_caller", "list_bills", "get_account"]
    assert all(t["tool_call"]["call_id"].startswith("call_vamos_") for t in turns)
    sent = [
        p["functionResponse"]["response"]
        for c in contents
        for p in c["parts"]
        if "functionResponse" in p
    ]
    assert sent == [t["tool_result"]["result"] for t in turns]
    assert info["verdict"]["gate"]["passed"] is True

    assert agent.usage.requests == len(requests) == len(agent.usage.latencies_s)
    assert agent.usage.prompt_tokens == sum(
        r.response["usageMetadata"]["promptTokenCount"] for r in requests
    )
    assert agent.usage.completion_tokens == sum(
        r.response["usageMetadata"]["candidatesTokenCount"] for r in requests
    )


def test_async_calls_wait_on_the_model_together() -> None:
    async def one_call(server: FakeGeminiServer, seed: int) -> tuple[dict[str, Any], GeminiAgent]:
        env = gym.make("VamosEnergy-v0")
        agent = agent_for(server, end_call_tool=True)
        observation, info = env.reset(seed=seed, options={"task_id": TASK})
        await agent.areset(info)
        while True:
            action = await agent.aact(observation, info)
            observation, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                await agent.aclose()
                return info, agent

    async def all_calls(server: FakeGeminiServer) -> list[tuple[dict[str, Any], GeminiAgent]]:
        return await asyncio.gather(*(one_call(server, seed) for seed in range(6)))

    with FakeGeminiServer.per_conversation(SCRIPT, delay_s=0.25) as server:
        started = time.perf_counter()
        played = asyncio.run(all_calls(server))
        elapsed = time.perf_counter() - started
        requests = server.model_requests()

    sequential = len(requests) * 0.25
    assert len(requests) == 6 * len(SCRIPT)
    # Waiting together, not in turn: the six calls' requests overlapped at the server (a
    # count, not a clock, so a loaded machine cannot fail it), and the run took less than
    # the model time of the requests one after another.
    assert server.most_at_once >= 3, f"at most {server.most_at_once} requests at once"
    assert elapsed < sequential, f"{elapsed:.2f}s for {sequential:.2f}s of model time"
    for info, agent in played:
        assert info["end_reason"] in ("end_call", "hang_up")
        assert agent.usage.requests == len(SCRIPT)
    for request in requests:
        check_well_formed(request.body, played[0][0]["system_prompt"])


# --- replies that need handling --------------------------------------------------------------


def test_gemini_call_ids_are_echoed_in_the_function_responses() -> None:
    script = [Reply(calls=(Call("verify_caller", VERIFY, id="fc-7"),)), Reply(text="Thanks.")]
    with FakeGeminiServer(script) as server:
        env = gym.make("VamosEnergy-v0")
        observation, info = env.reset(seed=1, options={"task_id": TASK})
        agent = agent_for(server)
        agent.reset(info)
        action = agent.act(observation, info)
        assert action["tool_calls"][0]["id"] == "fc-7"
        observation, *_, info = env.step(action)
        assert info["tool_results"][0]["tool_call_id"] == "fc-7"
        agent.act(observation, info)
        answer = server.model_requests()[1].body["contents"][-1]
    assert answer["parts"][0]["functionResponse"]["id"] == "fc-7"


def test_a_malformed_function_call_counts_as_empty_and_is_asked_again() -> None:
    """Gemini cannot send unparseable arguments: it ends the turn MALFORMED_FUNCTION_CALL."""
    script = [Reply(calls=(Call("verify_caller", '{"account_number": '),)), Reply(text=GREET)]
    with FakeGeminiServer(script) as server:
        agent = agent_for(server)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        assert agent.act("Hi") == {"role": "assistant", "content": GREET}
        first = server.model_requests()[0].response["candidates"][0]
    assert first["finishReason"] == "MALFORMED_FUNCTION_CALL" and "content" not in first
    assert agent.empty_replies == 1 and agent.usage.requests == 2


def test_empty_replies_end_the_call_after_one_retry() -> None:
    blocked = Raw(200, json.dumps({"promptFeedback": {"blockReason": "SAFETY"}}))
    with FakeGeminiServer([Reply(), blocked]) as server:
        env = gym.make("VamosEnergy-v0")
        played = play(env, agent_for(server))
    assert played.info["end_reason"] == "end_call"
    assert len(server.model_requests()) == 2


def test_thoughts_are_not_spoken_and_are_billed_as_output() -> None:
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "The caller sounds upset; greet first.", "thought": True},
                        {"text": "Hello, this is Rory."},
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 100,
            "candidatesTokenCount": 6,
            "thoughtsTokenCount": 40,
            "totalTokenCount": 146,
        },
    }
    with FakeGeminiServer([Raw(200, json.dumps(body)), "Sure."]) as server:
        agent = agent_for(server)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        assert agent.act("Hi") == {"role": "assistant", "content": "Hello, this is Rory."}
        agent.act("Can you help?")
        history = server.model_requests()[1].body["contents"]
    assert agent.usage.prompt_tokens > 100 and agent.usage.completion_tokens >= 46
    # The model's turn goes back exactly as it came, thought included.
    assert history[1]["parts"][0] == {
        "text": "The caller sounds upset; greet first.",
        "thought": True,
    }


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (Failure(503, "The model is overloaded. Please try again later."), 503),
        (Failure(400, "API key not valid. Please pass a valid API key."), 400),
        (Raw(200, "<html>bad gateway</html>", "text/html"), None),
    ],
)
def test_a_vendor_failure_raises_model_call_error(reply: Any, status: int | None) -> None:
    with FakeGeminiServer([reply]) as server:
        agent = agent_for(server)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        with pytest.raises(ModelCallError) as raised:
            agent.act("Hi")
    assert raised.value.vendor == "gemini" and raised.value.status == status


def test_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    with FakeGeminiServer(["Hello."], api_key="from-env") as server:
        agent = GeminiAgent("gemini-fake", base_url=server.base_url, max_retries=0)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        assert agent.act("Hi") == {"role": "assistant", "content": "Hello."}


def test_options_reach_the_request() -> None:
    with FakeGeminiServer(["Hello."]) as server:
        agent = agent_for(server, temperature=0.0, seed=11, max_output_tokens=256)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        agent.act("Hi")
        config = server.model_requests()[0].body["generationConfig"]
    assert config == {"temperature": 0.0, "seed": 11, "maxOutputTokens": 256}


# --- a real model ----------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("GOOGLE_API_KEY"), reason="needs GOOGLE_API_KEY")
def test_live_gemini_model_plays_a_call() -> None:
    env = gym.make("VamosEnergy-v0", max_agent_turns=12)
    agent = GeminiAgent(os.environ.get("GEMINI_MODEL", "gemini-2.5-flash"), temperature=0.0)
    played = play(env, agent)
    assert "verdict" in played.info
    assert agent.usage.requests >= 1 and agent.usage.completion_tokens > 0
