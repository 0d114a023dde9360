"""``vamos eval --mode duplex``: duplex calls through the runner, stored, resumable."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vamos_env.runner.evaluate import EvalConfig, evaluate
from vamos_env.runner.plan import make_stack_agent, resolve_stack
from vamos_env.runner.store import read_store

# A task whose first repeat is cast in the clean room (no background to synthesize).
TASK = "c-a02-arrangement_too_little_owed.pay_bill-sep.explain_bill-sep.payment_history"


class QuietAgent:
    """A frame-level agent that listens for three seconds and hangs up."""

    duplex = True

    def reset(self, info: Mapping[str, Any]) -> None:
        self.samples = 0

    def step(self, line_audio: Any, tool_results: Any) -> tuple[Any, list[Any]]:
        self.samples += len(line_audio)
        actions = [{"type": "end_call"}] if self.samples >= 3 * 16_000 else []
        return np.zeros(len(line_audio)), actions


def test_cascade_over_a_registered_text_stack_resolves() -> None:
    ref = resolve_stack("cascade:naive")
    assert (ref.name, ref.offline) == ("cascade-naive", True)
    agent = make_stack_agent(ref)
    assert agent.duplex and agent.inner == "naive"
    assert resolve_stack("cascade").name == "cascade"
    with pytest.raises(ValueError, match="unknown stack"):
        resolve_stack("cascade:nobody")


def test_the_main_job_leaves_voice_stacks_to_duplex_runs() -> None:
    from vamos_env.runner.mainjob import offline_stacks

    names = offline_stacks()
    assert "reference" in names and "cascade" not in names


def _config(tmp_path: Path, stack: str, mode: str = "duplex") -> EvalConfig:
    return EvalConfig(
        stacks=[stack],
        out=tmp_path / "run",
        tasks=TASK,
        repeats=1,
        executor="local",
        progress=False,
        mode=mode,  # type: ignore[arg-type]
        line="g711",
    )


def test_the_mode_and_the_stack_must_agree(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="try cascade:reference"):
        evaluate(_config(tmp_path, "reference"))
    with pytest.raises(ValueError, match="use --mode duplex"):
        evaluate(_config(tmp_path, "cascade", mode="text"))


@pytest.mark.audio
def test_a_duplex_run_stores_its_metrics_and_resumes(tmp_path: Path) -> None:
    stack = f"quiet={Path(__file__).resolve()}:QuietAgent"
    first = evaluate(_config(tmp_path, stack))
    assert (first.planned, first.ran) == (1, 1)
    (record,) = read_store(tmp_path / "run" / "results.jsonl")
    assert record.end_reason == "end_call" and record.status == "fail"
    assert record.duplex is not None and record.duplex["line"] == "g711"
    metrics = record.duplex["metrics"]
    assert 2.9 < metrics["duration_s"] < 3.2 and metrics["caller_speech_s"] > 1.0
    assert metrics["audio_out_s"] == 0.0 and metrics["missed_replies"] == 1
    again = evaluate(_config(tmp_path, stack))
    assert (again.already_done, again.ran) == (1, 0)
