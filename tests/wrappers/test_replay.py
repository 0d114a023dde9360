"""RecordedReplay: a recorded noisy call replays turn for turn; the first departure is found."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from vamos_env.types import Transcript
from vamos_env.wrappers import RecordedReplay, RecordEpisode, read_records

END = {"type": "end_call"}
NOISY = {"background": "television", "level_db": 5}


@pytest.fixture(scope="module")
def recorded(call: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The passing script, recorded in a noisy room (misheard words, TV turns, cut replies)."""
    path = tmp_path_factory.mktemp("replay") / "calls.jsonl"
    env = RecordEpisode(call.make_env(recogniser="whisper-tiny.en"), path)
    call.run(env, [*call.PASSING, END], seed=0, options={"task_id": call.TASK, **NOISY})
    env.close()
    (record,) = read_records(path)
    turns = record["transcript"]["turns"]
    assert any(t["spurious"] for t in turns) and any(t["cut"] for t in turns)
    assert any(t["heard"] for t in turns if t["speaker"] == "caller" and not t["spurious"])
    return record


def replay(call: ModuleType, recording: Any, actions: list[Any]) -> list[tuple[Any, ...]]:
    env = RecordedReplay(call.make_env(), recording)
    return call.run(env, actions, seed=123)  # a different seed: the recording decides


def agent_moves(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in record["transcript"]["turns"] if t["speaker"] != "caller"]


def test_the_same_agent_reproduces_the_recorded_call(
    call: ModuleType, recorded: dict[str, Any]
) -> None:
    env = RecordedReplay(call.make_env(), recorded)
    opening, info = env.reset(seed=123)
    first = recorded["transcript"]["turns"][0]
    assert opening.startswith(first["heard"] or first["text"]) and info["divergence"] is None
    steps = call.run(env, [*call.PASSING, END], seed=123)
    assert all(s[4]["divergence"] is None for s in steps)
    final = steps[-1][4]
    assert final["transcript"] == recorded["transcript"]
    assert final["verdict"] == recorded["verdict"]
    assert not final["replay_exhausted"]


def test_different_words_are_found_at_their_turn(
    call: ModuleType, recorded: dict[str, Any]
) -> None:
    actions = [*call.PASSING, END]
    actions[3] = {"type": "say", "text": "Shall I turn on paperless billing?"}
    steps = replay(call, recorded, actions)
    assert all(s[4]["divergence"] is None for s in steps[:3])
    divergence = steps[3][4]["divergence"]
    assert divergence == {
        "turn": agent_moves(recorded)[3]["index"],
        "move": 3,
        "expected": {"kind": "say", "text": call.READ_BACK},
        "actual": {"kind": "say", "text": "Shall I turn on paperless billing?"},
    }
    assert steps[-1][4]["divergence"] == divergence  # the first one stays reported


def test_case_and_spacing_do_not_count_but_arguments_do(
    call: ModuleType, recorded: dict[str, Any]
) -> None:
    actions: list[Any] = [
        {"type": "say", "text": "  " + call.ASK.upper()},
        {
            "type": "tool_call",
            "name": "verify_caller",
            "arguments": {**call.ACCOUNT, "second_factor": "15702"},
        },
    ]
    steps = replay(call, recorded, actions)
    assert steps[0][4]["divergence"] is None
    divergence = steps[1][4]["divergence"]
    assert divergence["move"] == 1 and divergence["turn"] == agent_moves(recorded)[1]["index"]
    assert divergence["expected"]["arguments"]["second_factor"] == "15701"
    assert divergence["actual"]["arguments"]["second_factor"] == "15702"


def test_ending_early_and_going_on_too_long(call: ModuleType, recorded: dict[str, Any]) -> None:
    steps = replay(call, recorded, [call.PASSING[0], END])
    assert steps[-1][4]["divergence"]["expected"]["kind"] == "tool_call"
    assert steps[-1][4]["divergence"]["actual"] == {"kind": "end_call"}

    # More speech than the recording has: the replayed caller has nothing left and hangs up.
    steps = replay(call, recorded, [*call.PASSING, {"type": "say", "text": "One more thing."}])
    last = steps[-1][4]
    assert last["divergence"]["expected"] == {"kind": "end_call"}
    assert last["divergence"]["actual"] == {"kind": "say", "text": "One more thing."}
    assert last["replay_exhausted"] and last["end_reason"] == "hang_up"


def test_recordings_load_from_a_transcript_or_a_file(
    call: ModuleType, recorded: dict[str, Any], tmp_path: Path
) -> None:
    transcript = Transcript.model_validate(recorded["transcript"])
    steps = replay(call, transcript, [*call.PASSING, END])
    assert steps[-1][4]["divergence"] is None
    assert steps[-1][4]["transcript"] == recorded["transcript"]

    path = tmp_path / "calls.jsonl"
    env = RecordEpisode(call.make_env(recogniser="whisper-tiny.en"), path)
    call.run(env, [END], seed=0, options=call.CALM_CLEAN)
    call.run(env, [call.PASSING[0], END], seed=0, options=call.CALM_CLEAN)
    env.close()
    replayed = RecordedReplay(call.make_env(), path, index=1)
    steps = call.run(replayed, [call.PASSING[0], END])
    assert steps[-1][4]["divergence"] is None
    assert steps[-1][4]["transcript"] == read_records(path)[1]["transcript"]


def test_a_recording_of_another_task_is_refused(call: ModuleType, recorded: dict[str, Any]) -> None:
    env = RecordedReplay(call.make_env(), recorded)
    with pytest.raises(ValueError, match="the recording is of"):
        env.reset(options={"task_id": "s-supplier-a01"})
