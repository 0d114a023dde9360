"""``AgentModel``: a text agent of the registry answering chat completions.

Whole text calls run with the ``openai`` stack (the official SDK) against
``FakeOpenAIServer(AgentModel("reference"))`` and must end as the reference's own calls
do; the conversation reading (greeting, observations, cut replies) is checked on
hand-written message lists.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from vamos_env.agents.base import make_agent
from vamos_env.agents.openai_agent import OpenAIAgent
from vamos_env.envs.energy.env import VamosEnergyEnv
from vamos_env.testing import FakeOpenAIServer
from vamos_env.testing.agent_model import AgentModel, observations

PROMPT = {"role": "system", "content": "You are Rory."}
GREETING = {"role": "assistant", "content": "Thank you for calling Acme Energy."}


def _play(agent: Any, env: VamosEnergyEnv, task_id: str) -> tuple[float, Any, int]:
    """The call's reward, verdict and number of agent turns."""
    observation, info = env.reset(seed=3, options={"task_id": task_id, "persona": "calm"})
    agent.reset(info)
    done, reward, turns = False, 0.0, 0
    while not done:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        done, turns = terminated or truncated, turns + 1
    return float(reward), info.get("verdict"), turns


@pytest.fixture(scope="module")
def exam() -> VamosEnergyEnv:
    return VamosEnergyEnv("exam")


def test_whole_text_calls_over_the_wire_end_as_the_reference_does(exam: VamosEnergyEnv) -> None:
    ids = sorted(t.task_id for t in exam.task_set.tasks)
    # Two callers, two different sets of requests (writes and reads, a payment, paperless).
    chosen = [ids[0], next(i for i in ids if i.startswith("c-a16"))]
    with FakeOpenAIServer(AgentModel("reference"), models=("reference",)) as server:
        for task_id in chosen:
            direct = _play(make_agent("reference"), exam, task_id)
            wired = _play(
                OpenAIAgent("reference", base_url=server.base_url, api_key="k"), exam, task_id
            )
            assert direct == wired, task_id
            assert direct[0] == 1.0
        requests = server.model_requests()
    assert len(requests) > 20 and all(r.status == 200 for r in requests)
    last = requests[-1].body["messages"]
    assert {m["role"] for m in last} == {"system", "user", "assistant", "tool"}


def test_the_greeting_is_skipped_and_tool_results_are_one_observation() -> None:
    messages = [
        PROMPT,
        GREETING,
        {"role": "user", "content": "Hi, what do I owe?"},
        {"role": "assistant", "content": "May I have your account number?"},
        {"role": "user", "content": [{"type": "text", "text": "It's 4417-90781."}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_bill", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"amount_due": 1200})},
    ]
    prompt, seen = observations(messages)
    assert prompt == "You are Rory."
    assert [o.text for o in seen] == [
        "Hi, what do I owe?",
        "It's 4417-90781.",
        json.dumps({"amount_due": 1200}),
    ]
    assert seen[0].said == ["May I have your account number?"] and not seen[0].called
    assert seen[1].said == [] and seen[1].called
    assert json.loads(seen[2].text) == {"amount_due": 1200}


class InfoSpy:
    """The reference, keeping a copy of the info each act is given."""

    def __init__(self, infos: list[dict[str, Any]]) -> None:
        self.inner = make_agent("reference")
        self.infos = infos

    def reset(self, info: Any) -> None:
        self.inner.reset(info)

    def act(self, observation: str, info: Any) -> Any:
        self.infos.append(dict(info))
        return self.inner.act(observation, info)


def test_a_reply_the_framework_cut_short_reaches_the_agent_as_cut() -> None:
    """The reference asks for the account number; the framework kept only its first words
    (the caller talked over it), so the next act is told ``agent_cut``, as the cascade tells
    it. Where the framework kept every word, nothing is said of a cut."""
    infos: list[dict[str, Any]] = []
    model = AgentModel(lambda: InfoSpy(infos))
    opening = {"role": "user", "content": "Hi, what do I owe?"}
    first = model_reply(model, [PROMPT, opening])["choices"][0]["message"]["content"]
    words = first.split()
    assert len(words) > 4
    again = {"role": "user", "content": "Sorry, what was that?"}
    for kept, cut in ((words[:3], True), (words, False)):
        infos.clear()
        said = {"role": "assistant", "content": " ".join(kept)}
        model_reply(model, [PROMPT, opening, said, again])
        assert len(infos) == 2 and "agent_cut" not in infos[0]
        assert infos[1].get("agent_cut") == (" ".join(kept) if cut else None)


def model_reply(model: AgentModel, messages: list[dict[str, Any]]) -> dict[str, Any]:
    with FakeOpenAIServer(model) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        reply = client.chat.completions.create(model="reference", messages=messages)  # type: ignore[arg-type]
    return reply.model_dump()


def test_a_streamed_request_gets_the_agent_s_tool_call() -> None:
    with FakeOpenAIServer(AgentModel("reference")) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        messages: Any = [
            PROMPT,
            {"role": "user", "content": "Hi, what do I owe?"},
            {"role": "assistant", "content": "Could I have your account number and full name?"},
            {"role": "user", "content": "It's 4417-90781, Maria Lopez."},
        ]
        chunks = list(client.chat.completions.create(model="m", messages=messages, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
    assert text or calls
    assert chunks[-1].choices[0].finish_reason in ("stop", "tool_calls")


def test_an_unknown_agent_fails_when_built_and_an_empty_conversation_is_refused() -> None:
    with pytest.raises(Exception, match="nobody"):
        AgentModel("nobody")
    with FakeOpenAIServer(AgentModel("reference")) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="no user or tool message"):
            client.chat.completions.create(model="m", messages=[PROMPT])  # type: ignore[list-item]


def test_the_first_reply_does_not_say_the_frameworks_greeting_again() -> None:
    """The framework greeted with the line the reference opens with; the reference's first
    reply leaves that sentence out, and the framework keeping the rest is not a cut."""
    infos: list[dict[str, Any]] = []
    model = AgentModel(lambda: InfoSpy(infos))
    opening = {"role": "user", "content": "Hi, what do I owe?"}
    plain = model_reply(model, [PROMPT, opening])["choices"][0]["message"]["content"]
    assert plain.startswith("Thank you for calling")
    greeted = {"role": "assistant", "content": "Thank you for calling Acme Energy, this is Rory."}
    first = model_reply(model, [PROMPT, greeted, opening])["choices"][0]["message"]["content"]
    assert first and not first.startswith("Thank you") and first in plain
    infos.clear()
    kept = {"role": "assistant", "content": first}
    again = {"role": "user", "content": "Sorry, what was that?"}
    model_reply(model, [PROMPT, greeted, opening, kept, again])
    assert "agent_cut" not in infos[1]
