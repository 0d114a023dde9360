"""ChatFormat: every observation is a valid OpenAI conversation with tool results paired."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

from vamos_env.wrappers import ChatFormat, chat_problems

# The OpenAI SDK's own message types (a declared dependency), validated by pydantic.
OPENAI_MESSAGES: TypeAdapter[Any] = TypeAdapter(list[ChatCompletionMessageParam])


def valid(messages: list[dict[str, Any]]) -> None:
    """Both our structural check and the OpenAI SDK's own message types accept them."""
    assert chat_problems(messages) == []
    OPENAI_MESSAGES.validate_python(messages)


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    if call_id is not None:
        call["id"] = call_id
    return call


def test_a_passing_call_as_chat_messages(call: ModuleType) -> None:
    env = ChatFormat(call.make_env())
    messages, info = env.reset(seed=1, options=call.CALM_CLEAN)
    valid(messages)
    assert messages[0] == {"role": "system", "content": info["system_prompt"]}
    assert messages[1]["role"] == "user" and "paperless" in messages[1]["content"]
    assert len(info["tools"]) == 16

    messages, *_ = env.step(call.ASK)  # a plain string is the assistant's words
    assert messages[-2] == {"role": "assistant", "content": call.ASK}
    assert messages[-1]["role"] == "user" and "8550-48787" in messages[-1]["content"]

    # The agent's own id is kept; a call without one gets the environment's id.
    verify = tool_call("verify_caller", call.ACCOUNT, "call_mine")
    messages, *_ = env.step({"role": "assistant", "content": None, "tool_calls": [verify]})
    valid(messages)
    assert messages[-1] == {
        "role": "tool",
        "tool_call_id": "call_mine",
        "content": json.dumps({"status": "verified"}),
    }
    messages, *_ = env.step(
        {
            "role": "assistant",
            "content": call.READ_BACK,
            "tool_calls": [
                tool_call("get_account", {}),
                tool_call("set_paperless_billing", {"enabled": True}),
            ],
        }
    )
    valid(messages)
    assistant, first, second, caller = messages[-4:]
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert [first["tool_call_id"], second["tool_call_id"]] == ids
    assert len(set(ids)) == 2 and "call_mine" not in ids
    assert json.loads(second["content"])["paperless"] is True
    assert caller["role"] == "user" and "yes" in caller["content"].lower()

    messages, reward, terminated, truncated, info = env.step(
        {"role": "assistant", "content": call.CLOSE}
    )
    if not (terminated or truncated):
        messages, reward, terminated, truncated, info = env.step({"type": "end_call"})
    valid(messages)
    assert terminated and reward == 1.0
    assert env.observation_space.contains(messages)


def test_a_malformed_action_is_a_system_note_not_an_assistant_message(call: ModuleType) -> None:
    env = ChatFormat(call.make_env())
    before, _ = env.reset(seed=0, options=call.CALM_CLEAN)
    messages, reward, terminated, _, info = env.step({"role": "assistant", "content": 7})
    valid(messages)
    assert messages[: len(before)] == before and len(messages) == len(before) + 1
    assert messages[-1]["role"] == "system"
    assert messages[-1]["content"].startswith("Action not understood: expected 'content'")
    assert info["malformed_actions"] == 1 and not terminated and reward == 0.0


def test_the_optional_end_call_function(call: ModuleType) -> None:
    env = ChatFormat(call.make_env(), end_call_tool=True)
    _, info = env.reset(seed=0, options=call.CALM_CLEAN)
    assert info["tools"][-1]["function"]["name"] == "end_call" and len(info["tools"]) == 17
    messages, _, terminated, _, info = env.step(
        {
            "role": "assistant",
            "content": "Thanks for calling, goodbye.",
            "tool_calls": [tool_call("get_supplier_info", {}), tool_call("end_call", {}, "c9")],
        }
    )
    valid(messages)
    assert terminated and info["end_reason"] == "end_call"
    answers = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers][-1] == "c9"
    # The domain tool ran (refused before verification) and is paired with its result.
    assert "verif" in json.loads(answers[-2]["content"])["error"]


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "tool", "tool_call_id": "x", "content": "{}"}], "answers no open tool call"),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [tool_call("f", {}, "a")]},
                {"role": "user", "content": "hi"},
            ],
            "were not answered",
        ),
        ([{"role": "assistant", "content": None}], "needs content or tool_calls"),
        ([{"role": "assistant", "tool_calls": [tool_call("f", {})]}], "expected {'id'"),
        ([{"role": "caller", "content": "hi"}], "unknown role"),
        ("not a list", "expected a list"),
    ],
)
def test_invalid_conversations_are_named(messages: Any, problem: str) -> None:
    assert any(problem in p for p in chat_problems(messages))
