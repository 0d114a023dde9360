"""The wrappers together: Gymnasium's checker accepts each, and they stack as documented."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from vamos_env.wrappers import (
    ChatFormat,
    FaultInjection,
    PartialCredit,
    RecordEpisode,
    TranscriptRig,
    read_records,
)

WRAPPERS: dict[str, Callable[[gym.Env[Any, Any]], gym.Env[Any, Any]]] = {
    "rig": TranscriptRig,
    "chat": ChatFormat,
    "partial": PartialCredit,
    "faults": lambda env: FaultInjection(env, rate=0.5),
}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_the_gymnasium_checker_accepts_each_wrapper(call: ModuleType, name: str) -> None:
    env = WRAPPERS[name](call.make_env().unwrapped)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    # The only remark is that a wrapped env is being checked, which is the point here.
    assert all("different from the unwrapped" in str(w.message) for w in caught)
    assert env.spec is not None and env.spec.additional_wrappers[-1].name == type(env).__name__


def test_a_stack_records_shaped_tagged_text_calls(call: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    env = RecordEpisode(
        PartialCredit(FaultInjection(TranscriptRig(call.make_env()), rate=0.0)), path
    )
    env.reset(seed=0, options={"task_id": call.TASK, "persona": "calm"})
    env.step(call.ASK)
    env.step('/tool verify_caller {"account_number": "8550-48787", "second_factor": "15701"}')
    _, reward, terminated, _, _ = env.step("/end")
    (record,) = read_records(path)
    assert terminated and record["reward"] == reward
    assert 0.0 < reward < 1.0  # partly right: the gate holds, nothing else was done
    assert record["partial_credit"]["base_reward"] == 0.0
    assert record["faults_injected"] == [] and record["background"] == "clean"
    # The bad verify call (no name) reached the tool as written and was refused there.
    assert "name_on_account" in record["trace"][0]["result"]["error"]
