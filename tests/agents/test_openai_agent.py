"""The OpenAI tool-calling agent, playing exam calls through ``gym.make`` against a fake server.

The "model" is ``FakeOpenAIServer`` answering from a script over the real wire
protocol; the official SDK is not patched. The tests read what the SDK sent (the
server records every request) to check the conversation is what the Chat
Completions API requires: the system prompt first, the tools as published, each
``tool_calls`` message followed by one ``tool`` message per call id carrying that
call's result, the caller's words as ``user`` messages.
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
from vamos_env.actions import MAX_TEXT
from vamos_env.agents.openai_agent import (
    END_CALL_TOOL,
    SILENCE,
    ModelCallError,
    OpenAIAgent,
    read_step,
)
from vamos_env.testing import Call, Failure, FakeOpenAIServer, Raw, RecordedRequest, Reply

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
        text="Thank you, you're verified. Let me pull up your bills.", calls=(Call("list_bills"),)
    ),
    Reply(calls=(Call("get_account"),)),
    Reply(text="Your September bill is two hundred twenty-four dollars and ninety-seven cents."),
    Reply(text="Thank you for calling Acme Energy. Goodbye.", calls=(Call("end_call"),)),
)


def make_env() -> Any:
    return gym.make("VamosEnergy-v0")


def agent_for(server: FakeOpenAIServer, **options: Any) -> OpenAIAgent:
    options = {"api_key": "test-key", "max_retries": 0, **options}
    return OpenAIAgent("fake-model", base_url=server.base_url, **options)


@dataclass
class Played:
    reset_info: dict[str, Any]
    info: dict[str, Any]  # the last step's
    seen: list[str]  # every observation the agent received


def play(env: Any, agent: OpenAIAgent, seed: int = 7) -> Played:
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
    """What the Chat Completions API requires of a conversation, checked on what was sent."""
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": system_prompt}
    assert all(m["role"] != "system" for m in messages[1:])
    i = 1
    while i < len(messages):
        message = messages[i]
        assert message["role"] in ("user", "assistant"), message
        if message["role"] == "assistant" and message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            answers = messages[i + 1 : i + 1 + len(ids)]
            assert [m["role"] for m in answers] == ["tool"] * len(ids)
            assert [m["tool_call_id"] for m in answers] == ids
            assert all(isinstance(json.loads(m["content"]), dict) for m in answers)
            i += len(ids)
        else:
            assert isinstance(message["content"], str) and message["content"].strip()
        i += 1


def model_requests(server: FakeOpenAIServer) -> list[RecordedRequest]:
    return server.model_requests()


# --- a whole exam call -----------------------------------------------------------------------


def test_plays_an_exam_call_end_to_end() -> None:
    env = make_env()
    with FakeOpenAIServer(SCRIPT) as server:
        agent = agent_for(server, end_call_tool=True)
        played = play(env, agent)
        requests = model_requests(server)

    info, seen = played.info, played.seen
    assert info["end_reason"] in ("end_call", "hang_up")
    assert server.pending == 0 and len(requests) == len(SCRIPT)
    prompt, tools = played.reset_info["system_prompt"], played.reset_info["tools"]
    for request in requests:
        assert request.status == 200
        assert request.headers["authorization"] == "Bearer test-key"
        assert request.body["model"] == "fake-model"
        assert request.body["tools"] == [*tools, END_CALL_TOOL]
        check_well_formed(request.body, prompt)

    # The last request holds the whole conversation.
    messages = requests[-1].body["messages"]
    assert messages[1] == {"role": "user", "content": seen[0]}  # the caller opened
    assert messages[2] == {"role": "assistant", "content": GREET}
    verify = messages[4]
    assert verify["tool_calls"][0]["function"]["name"] == "verify_caller"
    assert json.loads(verify["tool_calls"][0]["function"]["arguments"]) == VERIFY
    assert json.loads(messages[5]["content"]) == {"status": "verified"}
    # Words and a tool at once: the tool's answer first, then what the caller said.
    both = messages[6]
    assert both["content"].startswith("Thank you, you're verified")
    assert messages[7]["role"] == "tool" and "bills" in json.loads(messages[7]["content"])
    assert messages[8] == {"role": "user", "content": json.loads(seen[3])["caller"]}

    # Each tool message carries exactly what the environment returned for that call id.
    transcript = info["transcript"]["turns"]
    results = {
        t["tool_call"]["call_id"]: t["tool_result"]["result"] for t in transcript if t["tool_call"]
    }
    sent = {m["tool_call_id"]: json.loads(m["content"]) for m in messages if m["role"] == "tool"}
    assert sent == {k: v for k, v in results.items() if k in sent} and len(sent) == 3
    assert info["verdict"]["gate"]["passed"] is True  # verified before looking anything up

    # Usage: one entry per request, tokens as the server reported them.
    assert agent.usage.requests == len(requests)
    assert len(agent.usage.latencies_s) == len(requests)
    assert all(0 < s < 5 for s in agent.usage.latencies_s)
    assert agent.usage.prompt_tokens == sum(r.response["usage"]["prompt_tokens"] for r in requests)
    assert agent.usage.completion_tokens == sum(
        r.response["usage"]["completion_tokens"] for r in requests
    )
    assert agent.empty_replies == 0


def test_the_same_seed_and_script_give_the_same_call() -> None:
    env = make_env()
    transcripts = []
    for _ in range(2):
        with FakeOpenAIServer(SCRIPT) as server:
            played = play(env, agent_for(server, end_call_tool=True))
            transcripts.append(played.info["transcript"])
    assert transcripts[0] == transcripts[1]


def test_async_calls_wait_on_the_model_together() -> None:
    """Six calls at once, each request taking 0.25 s: they overlap instead of queueing."""

    async def one_call(server: FakeOpenAIServer, seed: int) -> tuple[dict[str, Any], OpenAIAgent]:
        env = make_env()
        agent = agent_for(server, end_call_tool=True)
        observation, info = env.reset(seed=seed, options={"task_id": TASK})
        await agent.areset(info)
        while True:
            action = await agent.aact(observation, info)
            observation, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                await agent.aclose()
                return info, agent

    async def all_calls(server: FakeOpenAIServer) -> list[tuple[dict[str, Any], OpenAIAgent]]:
        return await asyncio.gather(*(one_call(server, seed) for seed in range(6)))

    with FakeOpenAIServer.per_conversation(SCRIPT, delay_s=0.25) as server:
        started = time.perf_counter()
        played = asyncio.run(all_calls(server))
        elapsed = time.perf_counter() - started
        requests = model_requests(server)

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
        assert all(s >= 0.25 for s in agent.usage.latencies_s)
    for request in requests:
        check_well_formed(request.body, played[0][0]["system_prompt"])


# --- replies that need handling --------------------------------------------------------------


def test_malformed_arguments_go_to_the_environment_and_its_error_back_to_the_model() -> None:
    env = make_env()
    script = [
        Reply(calls=(Call("verify_caller", '{"account_number": "8731-71970", '),)),
        Reply(text="Sorry, could you give me your account number again?"),
        Reply(),
        Reply(),
    ]
    with FakeOpenAIServer(script) as server:
        played = play(env, agent_for(server))
        requests = model_requests(server)
    turns = played.info["transcript"]["turns"]
    tool_turn = next(t for t in turns if t["tool_call"])
    assert tool_turn["tool_result"]["ok"] is False
    call = requests[0].response["choices"][0]["message"]["tool_calls"][0]
    answer = requests[1].body["messages"][-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == call["id"]
    assert "not valid JSON" in json.loads(answer["content"])["error"]
    assert played.seen[1] == answer["content"]  # the observation the env gave, passed on as is
    # The model's own (broken) arguments stay in its history exactly as it wrote them.
    assert (
        requests[1].body["messages"][-2]["tool_calls"][0]["function"]["arguments"]
        == (call["function"]["arguments"])
    )


def test_an_empty_reply_is_asked_again_then_the_call_ends() -> None:
    env = make_env()
    with FakeOpenAIServer([Reply(), Reply(text=GREET), Reply(), Reply()]) as server:
        agent = agent_for(server)
        played = play(env, agent)
        requests = model_requests(server)
    assert played.info["end_reason"] == "end_call"
    assert agent.usage.requests == 4 == len(requests)
    assert agent.empty_replies == 3
    # The empty turns leave no trace in the conversation: the retry is the same request.
    assert requests[0].body["messages"] == requests[1].body["messages"]
    assert requests[2].body["messages"][-2] == {"role": "assistant", "content": GREET}


def test_no_retry_for_empty_replies_when_asked() -> None:
    with FakeOpenAIServer([Reply()]) as server:
        agent = agent_for(server, empty_retries=0)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        assert agent.act("Hello?") == {"type": "end_call"}
        assert agent.usage.requests == 1


def test_an_action_the_environment_refuses_still_answers_every_call() -> None:
    """Speech over the environment's limit: the whole action is refused, tools never run."""
    env = make_env()
    too_long = "word " * (MAX_TEXT // 4)
    script = [
        Reply(text=too_long, calls=(Call("get_account"), Call("list_bills"))),
        Reply(text=GREET),
    ]
    with FakeOpenAIServer(script) as server:
        agent = agent_for(server)
        observation, info = env.reset(seed=1, options={"task_id": TASK})
        agent.reset(info)
        observation, *_, info = env.step(agent.act(observation, info))
        assert info["malformed_actions"] == 1
        agent.act(observation, info)
        messages = model_requests(server)[1].body["messages"]
    ids = [c["id"] for c in messages[-3]["tool_calls"]]
    assert [m.get("tool_call_id") for m in messages[-2:]] == ids
    assert all("action not understood" in json.loads(m["content"])["error"] for m in messages[-2:])


def test_missing_or_repeated_call_ids_from_a_compatible_server_get_our_own() -> None:
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "local",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "",
                            "type": "function",
                            "function": {"name": "get_account", "arguments": ""},
                        },
                        {
                            "id": "",
                            "type": "function",
                            "function": {"name": "list_bills", "arguments": "{}"},
                        },
                    ],
                },
            }
        ],
    }
    with FakeOpenAIServer([Raw(200, json.dumps(body))]) as server:
        agent = agent_for(server)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        action = agent.act("Hi")
    ids = [c["id"] for c in action["tool_calls"]]
    assert len(set(ids)) == 2 and all(ids)
    assert action["content"] is None  # empty words are not speech
    assert agent.usage.requests == 1 and agent.usage.prompt_tokens == 0  # no usage reported


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (Failure(503, "The engine is currently overloaded."), 503),
        (Failure(401, "Incorrect API key provided."), 401),
        (Raw(200, "<html>bad gateway</html>", "text/html"), None),
        (Raw(200, json.dumps({"object": "chat.completion", "choices": []})), None),
    ],
)
def test_a_vendor_failure_raises_model_call_error(reply: Any, status: int | None) -> None:
    with FakeOpenAIServer([reply]) as server:
        agent = agent_for(server)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        with pytest.raises(ModelCallError) as raised:
            agent.act("Hi")
    assert raised.value.vendor == "openai" and raised.value.status == status


def test_key_and_base_url_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(["Hello."], api_key="sk-from-env") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        agent = OpenAIAgent("fake-model", max_retries=0)
        agent.reset({"system_prompt": "Be brief.", "tools": []})
        assert agent.act("Hi") == {"role": "assistant", "content": "Hello."}


def test_options_reach_the_request() -> None:
    with FakeOpenAIServer(["Hello."]) as server:
        agent = agent_for(
            server,
            temperature=0.0,
            seed=11,
            max_completion_tokens=256,
            parallel_tool_calls=False,
            extra_body={"top_k": 5},
        )
        agent.reset({"system_prompt": "Be brief.", "tools": [END_CALL_TOOL]})
        agent.act("Hi")
        body = model_requests(server)[0].body
    assert body["temperature"] == 0.0 and body["seed"] == 11
    assert body["max_completion_tokens"] == 256 and body["parallel_tool_calls"] is False
    assert body["top_k"] == 5


def test_act_before_reset_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        OpenAIAgent(api_key="x").act("Hi")
    with pytest.raises(ValueError, match="system_prompt"):
        OpenAIAgent(api_key="x").reset({"task_id": "t"})


# --- reading the environment's answer --------------------------------------------------------


def test_read_step_without_info_parses_the_observation() -> None:
    one = read_step('{"status": "verified"}', None, [("c1", "verify_caller")], spoke=False)
    assert one.results[0].result == {"status": "verified"} and one.heard is None
    both = json.dumps(
        {
            "caller": "Okay.",
            "tool_results": [
                {"tool_call_id": "c1", "name": "list_bills", "result": {"count": 0}},
                {"tool_call_id": "c2", "name": "get_account", "result": {"error": "No."}},
            ],
        }
    )
    reading = read_step(both, None, [("c1", "list_bills"), ("c2", "get_account")], spoke=True)
    assert [r.result for r in reading.results] == [{"count": 0}, {"error": "No."}]
    assert reading.heard == "Okay."


def test_read_step_marks_silence_and_plain_speech() -> None:
    assert read_step("", None, [], spoke=True).heard == SILENCE
    assert read_step("Yes, go ahead.", {}, [], spoke=True).heard == "Yes, go ahead."


# --- a real model ----------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="needs OPENAI_API_KEY")
def test_live_openai_model_plays_a_call() -> None:
    env = gym.make("VamosEnergy-v0", max_agent_turns=12)
    agent = OpenAIAgent(os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), temperature=0.0)
    played = play(env, agent)
    assert "verdict" in played.info
    assert agent.usage.requests >= 1 and agent.usage.completion_tokens > 0
