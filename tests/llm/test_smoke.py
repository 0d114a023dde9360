"""Smoke tests against the real local server (marker ``local_llm``; ``make smoke-llm``).

They need the ``local-llm`` extra and a few minutes of CPU: one server (started here unless
one answers at the local URL) serves the agent, the caller, the verifier and the judge.
What they hold the server to is what the fakes cannot show: real tool calls parsed out
of the model's text, a caller reply under the strict schema, structured grader replies,
and a reply the model really wrote that cannot be used ending as the recorded fault.
Figures (time per turn, tokens) are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import pytest

import vamos_env  # noqa: F401  (registers the env)
from vamos_env.agents.reference import ReferenceAgent
from vamos_env.cli.evaluation import main as vamos_eval
from vamos_env.grading.judge import LLMJudge, load_rubric
from vamos_env.grading.llm_verifier import LLMVerifier, verification_request
from vamos_env.grading.recitation import CHECK_ID as RECITATION
from vamos_env.grading.timeline import Timeline
from vamos_env.llm.roles import LocalAgent, caller_options, grader_endpoint

pytestmark = pytest.mark.local_llm
ROOT = Path(__file__).resolve().parents[2]
# A two-request exam task (paperless on, then July's bill against June's): short, with tools.
SHORT_TASK = "c-a24-enable_paperless.compare_bills-jul"
# Turns are what a smoke test pays for: the first agent request reads the 4,400-token
# prompt and tools; each later one only its new tokens (the prompt cache), plus the reply.
EXAM_TURNS = 6
CALLER_TURNS = 5
# A judge reply names five dimensions with a sentence each: about 200-300 tokens. Far more
# is a reply that ran away (spaces under the grammar, measured before the judge spelled out
# the reply's shape).
JUDGE_REPLY_TOKENS = 700
VERIFIED_CHECK = "r1_difference"


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def base_url() -> str:
    from vamos_env.llm.server import ensure_local_server

    started = time.perf_counter()
    url = ensure_local_server()
    print(f"\nlocal server at {url} ready in {time.perf_counter() - started:.1f} s")
    return url


def test_an_exam_call_of_the_local_stack_through_vamos_eval(base_url: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    status = vamos_eval(
        [
            "eval",
            "--stacks",
            "local",
            "--tasks",
            SHORT_TASK,
            "--repeats",
            "1",
            "--executor",
            "local",
            "--max-turns",
            str(EXAM_TURNS),
            "--timeout",
            "1200",
            "--recogniser",
            "ideal",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 1
    record = records[0]
    usage = record["usage"]
    latencies = record["response_latencies_s"]
    verdict = record["verdict"]
    print(
        f"\nexam call {record['key']}: status {record['status']}, end {record['end_reason']}, "
        f"reward {verdict and verdict['reward']}, {record['agent_turns']} agent turns, "
        f"{usage['requests']} requests, {usage['prompt_tokens']} prompt + "
        f"{usage['completion_tokens']} completion tokens, {record['wall_s']:.0f} s"
    )
    print("time per turn (s): " + ", ".join(f"{s:.1f}" for s in latencies))
    for turn in record["transcript"]["turns"]:
        shown = turn["text"] or (turn["tool_call"] and turn["tool_call"]["name"])
        print(f"  [{turn['index']}] {turn['speaker']}: {str(shown)[:110]}")
    # The call ran to a verdict with the model in the loop, not to an agent fault.
    assert record["agent_fault"] is None, record["agent_fault"]
    assert verdict is not None and usage["requests"] >= 2 and usage["prompt_tokens"] > 4000
    agent_text = " ".join(
        t["text"] or "" for t in record["transcript"]["turns"] if t["speaker"] == "agent"
    )
    # The pitfalls: tool calls left in the words instead of parsed into tool_calls. (Whether
    # this small model calls a tool on the exam is its business; the test below makes sure
    # that when it does, the server hands the call over as tool_calls.)
    assert "<tool_call>" not in agent_text and '"arguments"' not in agent_text


# Right after the exam call: its system prompt and tools are still in the prompt cache.
def test_an_empty_reply_from_the_real_agent_model_ends_the_call(base_url: str) -> None:
    # The server refuses a grammar beside tools ("Cannot use custom grammar constraints
    # with tools"), so a logit bias on Qwen2.5's end-of-turn token (<|im_end|>, id 151645)
    # makes the model end its reply before its first word.
    env = gym.make("VamosEnergy-v0", recogniser="ideal")
    observation, info = env.reset(seed=0, options={"task_id": SHORT_TASK})
    agent = LocalAgent(extra_body={"logit_bias": {"151645": 100}}, max_completion_tokens=4)
    agent.reset(info)
    action = agent.act(observation, info)
    assert action == {"type": "end_call"} and agent.empty_replies == 2
    agent.close()


VERIFY = {
    "type": "function",
    "function": {
        "name": "verify_caller",
        "description": "Verify the caller by account number, full name and postal code.",
        "parameters": {
            "type": "object",
            "properties": {
                "account_number": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{5}$"},
                "full_name": {"type": "string"},
                "postal_code": {"type": "string"},
            },
            "required": ["account_number", "full_name", "postal_code"],
        },
    },
}
ASKED = [
    {
        "role": "system",
        "content": "You are a billing agent for Acme Energy. Verify the caller with "
        "verify_caller before anything else.",
    },
    {"role": "user", "content": "Hi, account 4417-90781, Maria Lopez, postal code 19104."},
]


@pytest.mark.parametrize("stream", [False, True])
def test_real_tool_calls_come_back_as_tool_calls(base_url: str, stream: bool) -> None:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="local", timeout=1800, max_retries=0)
    options: dict[str, Any] = {"model": "local", "messages": ASKED, "tools": [VERIFY]}
    if not stream:
        reply = client.chat.completions.create(**options, temperature=0, seed=0)
        message = reply.choices[0].message
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
        content = message.content or ""
    else:
        parts: dict[int, list[str]] = {}
        names: dict[int, str] = {}
        content = ""
        for chunk in client.chat.completions.create(**options, temperature=0, seed=0, stream=True):
            delta = chunk.choices[0].delta if chunk.choices else None
            if delta is None:
                continue
            content += delta.content or ""
            for call in delta.tool_calls or []:
                if call.function and call.function.name:
                    names[call.index] = call.function.name
                parts.setdefault(call.index, []).append(
                    (call.function and call.function.arguments) or ""
                )
        calls = [(names.get(i, ""), "".join(parts[i])) for i in sorted(parts)]
    print(f"\ntool calls (stream={stream}): {calls}; content {content!r}")
    assert calls, f"no tool_calls; the model's words were {content!r}"
    name, arguments = calls[0]
    assert name == "verify_caller"
    assert json.loads(arguments)["account_number"] == "4417-90781"
    assert "<tool_call>" not in content and '"arguments"' not in content


def test_the_local_caller_against_the_reference_agent(base_url: str) -> None:
    env = gym.make(
        "VamosEnergy-v0", caller="local", recogniser="ideal", max_agent_turns=CALLER_TURNS
    )
    agent = ReferenceAgent()
    observation, info = env.reset(seed=3, options={"task_id": SHORT_TASK})
    agent.reset(info)
    done, turns, started = False, 0, time.perf_counter()
    while not done:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
        done = terminated or truncated
        turns += 1
    took = time.perf_counter() - started
    kinds = [d["kind"] for d in info["deviations"]]
    print(
        f"\nlocal caller: {turns} agent turns in {took:.0f} s, end {info['end_reason']}, "
        f"reward {info['verdict']['reward']}, deviations {kinds}"
    )
    for turn in info["transcript"]["turns"]:
        if turn["speaker"] == "caller":
            print(f"  caller: {turn['text'][:110]}")
    # Every reply of the real model was a usable reply object (no caller_error).
    assert "caller_error" not in kinds, info["deviations"]
    assert turns >= 2


def _smallest_labelled_calls(count: int) -> tuple[Any, list[Any]]:
    _load("hacking_tricks", ROOT / "tests/grading/hacking/tricks.py")
    agreement = _load("labelled_agreement", ROOT / "tests/grading/labelled/agreement.py")
    calls = agreement.load()
    size = {c.id: len(verification_request(c.task, Timeline.of(c.transcript))) for c in calls}
    return agreement, sorted(calls, key=lambda c: (size[c.id], c.id))[:count]


def test_the_llm_verifier_on_a_graded_call(base_url: str) -> None:
    from vamos_env.grading import grade

    agreement, [call] = _smallest_labelled_calls(1)
    # One of the call's checks (the bill difference, a money "say" check): its request is
    # about 2,600 characters where the call's four checks come to 6,900, and a request is
    # read at 10-45 tokens a second here.
    check = next(c for c in call.task.checks if c.id == VERIFIED_CHECK)
    task = call.task.model_copy(update={"checks": [check]})
    verifier = LLMVerifier(grader_endpoint("local", base_url))
    started = time.perf_counter()
    verdict = grade(task, call.transcript, agreement.replay(call), verifier=verifier)
    took = time.perf_counter() - started
    assert verdict.grading_fault is None, verdict.grading_fault
    results = {c.id: c for c in verdict.requirements.checks}
    print(
        f"\nverifier on {call.id}, check {check.id} (labelled "
        f"{call.checks[check.id].verdict}): {results[check.id].passed} in {took:.0f} s; "
        f"evidence {results[check.id].evidence}; usage {verifier.usage}"
    )
    # The task's check, judged by the model, and the grader's own no_recitation (code).
    assert set(results) == {check.id, RECITATION}
    assert verifier.usage.requests == 1 and verifier.usage.completion_tokens > 0


def test_the_judge_on_a_graded_call(base_url: str) -> None:
    judged = _load("judge_label_cases", ROOT / "tests/grading/test_judge.py")
    case = min(judged.labelled(), key=lambda r: (len(r.transcript.turns), r.key))
    rubric = load_rubric()
    judge = LLMJudge(grader_endpoint("local", base_url), rubric)
    started = time.perf_counter()
    scores = judge.score(case.transcript, case.persona)
    took = time.perf_counter() - started
    print(
        f"\njudge on {case.key} (human {case.human_label}): {scores.scores} in {took:.0f} s; "
        f"rubric says {'pass' if rubric.decide(scores.scores).passed else 'fail'}; "
        f"usage {judge.usage}"
    )
    assert set(scores.scores) == {d.name for d in rubric.dimensions}
    assert all(0.0 <= s <= 1.0 for s in scores.scores.values())
    assert all(reason.strip() for reason in scores.reasons.values())
    # One reply of about a sentence per dimension, not one that ran to the token limit.
    assert judge.usage.requests == 1
    assert judge.usage.completion_tokens < JUDGE_REPLY_TOKENS, judge.usage


def test_a_bare_number_from_the_real_caller_model_is_a_caller_error(base_url: str) -> None:
    # A grammar makes the real model write exactly what broke the first contact.
    bare = caller_options({"reply_format": "none", "extra_body": {"grammar": 'root ::= "203.91"'}})
    env = gym.make("VamosEnergy-v0", caller="local", recogniser="ideal", caller_options=bare)
    env.reset(seed=0, options={"task_id": SHORT_TASK})
    *_, terminated, _, info = env.step({"type": "say", "text": "May I have your account number?"})
    assert terminated
    assert [d["kind"] for d in info["deviations"]] == ["caller_error"]
    assert "expected a JSON object, got float" in info["deviations"][0]["detail"]
