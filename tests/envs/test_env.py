"""VamosEnergy-v0 as Gymnasium users meet it: checker, seeding, bad actions, vector envs."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vamos_env  # noqa: F401  (registers the environment)

ROOT = Path(__file__).resolve().parents[2]
TASK = "c-a04-pay_after_decline-sep.payment_history.create_arrangement-36"

# A fixed, deterministic sequence of agent actions (not a good agent: a reproducible one).
SCRIPT: list[Any] = [
    {"type": "say", "text": "Thank you for calling Acme Energy, this is Rory. How can I help?"},
    {"type": "say", "text": "Can I have your account number, full name and one second factor?"},
    {"type": "tool_call", "name": "get_account", "arguments": {}},
    '{"type": "tool_call", "name": "verify_caller", "arguments": {"account_number": "8731-71970", '
    '"name_on_account": "Samuel Walsh-Obi", "second_factor": "224.97"}}',
    {"type": "tool_call", "name": "list_bills", "arguments": {}},
    {
        "type": "say",
        "text": "Your September bill is two hundred twenty-four dollars and ninety-seven cents.",
    },
    {"type": "end_call"},
]


def play(env: gym.Env[str, Any], seed: int, options: dict[str, Any]) -> list[Any]:
    seen: list[Any] = []
    obs, info = env.reset(seed=seed, options=options)
    seen.append(obs)
    for action in SCRIPT:
        obs, reward, terminated, truncated, info = env.step(action)
        seen.append((obs, reward, terminated, truncated))
        if terminated or truncated:
            seen.append(info["transcript"])
            seen.append(info["verdict"])
            break
    return seen


def test_gymnasium_env_checker_passes_without_warnings() -> None:
    env = gym.make("VamosEnergy-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_reachable_under_the_module_prefix() -> None:
    env = gym.make("vamos_env:VamosEnergy-v0")
    obs, info = env.reset(seed=3)
    assert isinstance(obs, str) and obs
    assert {"system_prompt", "tools", "task_id", "persona", "background"} <= set(info)
    assert len(info["tools"]) == 16
    # Never the answers.
    text = json.dumps(info)
    assert "expected_changes" not in text and "checks" not in text


def test_same_seed_same_call_different_seed_same_task() -> None:
    env = gym.make("VamosEnergy-v0")
    options = {"task_id": TASK, "background": "television", "level_db": 10}
    first = play(env, 11, options)
    again = play(env, 11, options)
    assert first == again
    other = play(env, 12, options)
    assert other != first  # wording or noise changed...
    assert other[-1]["task_id"] == first[-1]["task_id"] == TASK  # ...never the task


def test_a_malformed_action_is_an_observation_and_the_call_goes_on() -> None:
    env = gym.make("VamosEnergy-v0")
    env.reset(seed=0, options={"task_id": TASK})
    obs, reward, terminated, _truncated, info = env.step("not json at all")
    assert "action not understood" in obs and not terminated and reward == 0.0
    assert info["malformed_actions"] == 1
    obs, *_ = env.step({"type": "say", "text": "Sorry, how can I help?"})
    assert obs  # the caller answered


def test_openai_assistant_messages_are_accepted() -> None:
    env = gym.make("VamosEnergy-v0")
    env.reset(seed=0, options={"task_id": TASK})
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "get_supplier_info", "arguments": "{}"},
            }
        ],
    }
    obs, _, _, _, info = env.step(message)
    assert info["tool_results"][0]["tool_call_id"] == "call_abc"
    assert "verif" in json.loads(obs)["error"]


def test_bad_reset_options_fail_fast_naming_the_field() -> None:
    env = gym.make("VamosEnergy-v0")
    with pytest.raises(ValueError, match="task_idd"):
        env.reset(options={"task_idd": TASK})
    with pytest.raises(ValueError, match=r"options\.task_id: expected a task"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(ValueError, match="background"):
        env.reset(options={"background": "stadium"})


def test_turn_limit_truncates() -> None:
    env = gym.make("VamosEnergy-v0", max_agent_turns=3)
    env.reset(seed=0, options={"task_id": TASK})
    for _ in range(3):
        _obs, reward, terminated, truncated, info = env.step(
            {"type": "tool_call", "name": "get_account"}
        )
    assert truncated and not terminated and reward == 0.0
    assert info["verdict"]["passed"] is False


ACTIONS = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=50),
    st.integers(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(
        st.text(max_size=10), st.one_of(st.text(max_size=20), st.integers(), st.none()), max_size=4
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["say", "tool_call", "end_call", "dance", ""])},
        optional={
            "text": st.one_of(st.text(max_size=300), st.integers(), st.just("x" * 30_000)),
            "name": st.one_of(
                st.sampled_from(["verify_caller", "make_payment", "get_account", "rm -rf"]),
                st.integers(),
            ),
            "arguments": st.one_of(
                st.text(max_size=50),
                st.dictionaries(st.text(max_size=8), st.integers(), max_size=3),
            ),
        },
    ),
    st.fixed_dictionaries(
        {"role": st.just("assistant")},
        optional={
            "content": st.one_of(st.none(), st.text(max_size=100), st.integers()),
            "tool_calls": st.one_of(
                st.none(),
                st.integers(),
                st.lists(
                    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
                    max_size=2,
                ),
            ),
        },
    ),
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(action=ACTIONS)
def test_random_and_malformed_actions_never_raise(action: Any) -> None:
    env = _fuzz_env()
    if env.unwrapped._episode is None or env.unwrapped._episode.ended:  # type: ignore[attr-defined]
        env.reset(seed=0)
    obs, reward, _terminated, _truncated, _info = env.step(action)
    assert isinstance(obs, str)
    assert reward in (0.0, 1.0)


_ENV: list[gym.Env[str, Any]] = []


def _fuzz_env() -> gym.Env[str, Any]:
    if not _ENV:
        _ENV.append(gym.make("VamosEnergy-v0", max_agent_turns=40))
    return _ENV[0]


def test_async_vector_env() -> None:
    envs = gym.vector.AsyncVectorEnv(
        [lambda: gym.make("VamosEnergy-v0") for _ in range(2)], shared_memory=False
    )
    try:
        obs, _info = envs.reset(seed=[1, 2], options={"background": "clean"})
        assert len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
        obs, reward, _terminated, _truncated, _info = envs.step(
            [{"type": "say", "text": "Can I have your account number, please?"}] * 2
        )
        assert len(obs) == 2 and list(reward) == [0.0, 0.0]
    finally:
        envs.close()


def test_readme_training_loop_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    loop = next(b for b in blocks if "gym.make" in b)
    assert len(loop.strip().splitlines()) <= 12
    namespace: dict[str, Any] = {}
    exec(compile(loop, "README.md", "exec"), namespace)
    assert namespace["reward"] in (0.0, 1.0)


def test_text_enters_the_call_storable_and_deep_arguments_are_a_tool_error() -> None:
    import json as _json

    from vamos_env.envs.energy.env import VamosEnergyEnv

    env = VamosEnergyEnv()
    env.reset(seed=3)
    _obs, _r, _t, _tr, info = env.step({"type": "say", "text": "Hello \ud83d"})
    assert info["replaced_code_points"] == 1
    deep: dict[str, object] = {}
    for _ in range(300):
        deep = {"a": deep}
    observation, *_rest = env.step(
        {"type": "tool_call", "name": "verify_caller", "arguments": _json.dumps(deep)}
    )
    assert "max_depth" in _json.loads(observation)["error"]
    message = {"role": "assistant", "content": [{"type": "text", "text": None}]}
    observation, *_rest, info = env.step(message)
    assert info["malformed_actions"] == 1  # a null text part says nothing, not "None"
    *_head, info = env.step({"type": "end_call"})
    turns = info["transcript"]["turns"]
    assert all(t["text"] != "None" for t in turns)
    _json.dumps(info["transcript"]).encode("utf-8")  # storable
