"""The local roles without a model: the same OpenAI-compatible code paths, the local URL.

A fake OpenAI server that lists the model ``local`` stands in for llama.cpp; the real
server is exercised by ``test_smoke.py`` (marker ``local_llm``, ``make smoke-llm``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

import vamos_env  # noqa: F401  (registers the env)
from vamos_env.agents import make_agent, stacks
from vamos_env.cli.grading import endpoint_of
from vamos_env.llm import server as local
from vamos_env.llm.roles import LocalAgent, caller_options, portable_patterns
from vamos_env.llm.server import LocalServerError, corrected_template, ensure_local_server
from vamos_env.testing.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_local(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(models=("local",)).start()
    monkeypatch.setenv(local.BASE_URL_VARIABLE, server.base_url)
    try:
        yield server
    finally:
        server.close()


def test_the_doubled_braces_of_qwen_tool_instructions_are_corrected() -> None:
    line = (
        '{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name '
        "and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n"
        '{{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}}'
        '\\n</tool_call><|im_end|>\\n" }}'
    )
    fixed = corrected_template(line)
    assert fixed is not None
    assert (
        '<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n'
        in (fixed)
    )
    assert fixed.startswith('{{- "') and fixed.endswith('" }}')  # Jinja's own braces kept
    assert corrected_template(fixed) is None
    assert corrected_template("{{- messages }}") is None


def test_an_answering_server_is_reused(fake_local: FakeOpenAIServer) -> None:
    assert ensure_local_server() == fake_local.base_url


def test_a_named_server_that_does_not_answer_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(local.BASE_URL_VARIABLE, "http://127.0.0.1:9/v1")
    with pytest.raises(LocalServerError, match="got no answer"):
        ensure_local_server()


def test_a_server_without_the_local_model_is_not_taken_for_it() -> None:
    with FakeOpenAIServer(models=("gpt-4o-mini",)) as other:
        assert not local.answers(other.base_url)


def test_the_local_stack_is_the_openai_agent_on_the_local_url(
    fake_local: FakeOpenAIServer,
) -> None:
    assert stacks()["local"].entry_point == "vamos_env.llm.roles:LocalAgent"
    assert LocalAgent.preflight({}) is None
    fake_local.push("Thank you for calling Acme Energy. How can I help?")
    env = gym.make("VamosEnergy-v0")
    observation, info = env.reset(seed=0)
    agent = make_agent("local")
    agent.reset(info)
    action = agent.act(observation, info)
    assert action["content"].startswith("Thank you")
    body = fake_local.model_requests()[0].body
    assert body["model"] == "local" and body["temperature"] == 0.0 and body["seed"] == 0
    assert body["messages"][0]["content"] == info["system_prompt"]
    # The tools as the environment gives them, but for the patterns llama.cpp cannot read.
    assert body["tools"] == portable_patterns(info["tools"])
    assert "\\d" in json.dumps(info["tools"]) and "\\d" not in json.dumps(body["tools"])
    agent.close()
    env.close()


def test_the_prompt_and_tools_are_byte_stable_across_calls() -> None:
    """The server's prompt cache serves a prefix only if it is the same bytes every call."""
    env = gym.make("VamosEnergy-v0")
    _, first = env.reset(seed=0)
    _, second = env.reset(seed=7, options={"task_id": sorted(env.unwrapped._tasks)[-1]})
    assert first["system_prompt"] == second["system_prompt"]
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
    env.close()


def test_the_local_caller_speaks_to_the_local_server(fake_local: FakeOpenAIServer) -> None:
    fake_local.push(json.dumps({"say": "It's 4417-90781.", "end_call": False, "goal_met": None}))
    env = gym.make("VamosEnergy-v0", caller="local", recogniser="ideal")
    env.reset(seed=0)
    observation, *_ = env.step({"type": "say", "text": "May I have your account number?"})
    assert observation == "It's 4417-90781."
    body = fake_local.model_requests()[0].body
    assert body["model"] == "local"
    assert body["response_format"]["type"] == "json_schema"
    env.close()


def test_the_local_caller_records_a_bare_number_as_a_caller_error(
    fake_local: FakeOpenAIServer,
) -> None:
    fake_local.push("203.91")
    env = gym.make("VamosEnergy-v0", caller="local")
    env.reset(seed=0)
    *_, terminated, _, info = env.step({"type": "say", "text": "Your balance is due."})
    assert terminated and info["end_reason"] == "hang_up"
    assert [d["kind"] for d in info["deviations"]] == ["caller_error"]
    assert "expected a JSON object, got float" in info["deviations"][0]["detail"]
    env.close()


def test_caller_options_keep_the_users_own(fake_local: FakeOpenAIServer) -> None:
    options = caller_options({"temperature": 1.0, "base_url": "http://127.0.0.1:1/v1"})
    assert options["temperature"] == 1.0 and options["base_url"] == "http://127.0.0.1:1/v1"
    assert caller_options()["base_url"] == fake_local.base_url


def test_graders_take_model_local(fake_local: FakeOpenAIServer) -> None:
    endpoint: Any = endpoint_of("local", None)
    assert endpoint.model == "local" and endpoint.base_url == fake_local.base_url
    other: Any = endpoint_of("gpt-4o-mini", "http://example.invalid/v1")
    assert other.base_url == "http://example.invalid/v1" and other.api_key is None


def test_portable_patterns_rewrite_only_pattern_strings() -> None:
    schema = {
        "type": "object",
        "properties": {
            "account_number": {"type": "string", "pattern": "^\\d{4}-\\d{5}$"},
            "pattern": {"type": "string", "description": "a field named pattern, \\d kept"},
        },
    }
    out = portable_patterns(schema)
    assert out["properties"]["account_number"]["pattern"] == "^[0-9]{4}-[0-9]{5}$"
    assert out["properties"]["pattern"] == schema["properties"]["pattern"]
    assert portable_patterns(out) == out
