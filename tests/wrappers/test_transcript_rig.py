"""TranscriptRig: the text contract both ways, the clean channel, and a full call in text."""

from __future__ import annotations

import json
from types import ModuleType

import pytest

from vamos_env.wrappers import (
    TextAction,
    TextActionError,
    TranscriptRig,
    format_observation,
    parse_text_action,
    read_observation,
)
from vamos_env.wrappers.outcome import StepParts


def test_lines_become_speech_tools_and_end() -> None:
    parsed = parse_text_action(
        'One moment.\n/tool get_bill {"bill_id": "in_1"}\n  please hold \n/tool list_bills\n/end'
    )
    assert parsed == TextAction(
        "One moment. please hold",
        (("get_bill", {"bill_id": "in_1"}), ("list_bills", {})),
        end=True,
    )
    # Speech first, then the calls, as one assistant message.
    message = parsed.to_env_action()
    assert message is not None and message["content"] == "One moment. please hold"
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_bill", "list_bills"]
    assert TextAction("hello").to_env_action() == {"type": "say", "text": "hello"}
    assert parse_text_action("/end") == TextAction(end=True)
    assert TextAction(end=True).to_env_action() is None


def test_bad_lines_are_errors_and_bad_arguments_reach_the_tool() -> None:
    assert isinstance(parse_text_action("/tol get_account"), TextActionError)
    assert isinstance(parse_text_action("/tool"), TextActionError)
    assert isinstance(parse_text_action("  \n "), TextActionError)
    assert isinstance(parse_text_action("/end now"), TextActionError)
    # Not an object: passed on as written, for the tool session to explain.
    assert parse_text_action("/tool get_bill [1, 2]") == TextAction(
        tool_calls=(("get_bill", "[1, 2]"),)
    )


def test_observation_text_round_trips() -> None:
    parts = StepParts(
        "Yes, that's right.\nsecond line",
        [
            {"tool_call_id": "call_1", "name": "get_account", "result": {"email": "a@b.c"}},
            {"tool_call_id": "call_2", "name": "list_bills", "result": {"bills": [1, "é"]}},
        ],
    )
    text = format_observation(parts)
    assert text.splitlines()[-1] == '/result list_bills {"bills": [1, "é"]}'
    back = read_observation(text)
    assert back.caller == parts.caller
    assert back.results == [(r["name"], r["result"]) for r in parts.tool_results]
    assert read_observation(format_observation(StepParts(None, error="bad"))).error == "bad"


def test_a_whole_call_in_text_passes_in_the_clean_channel(call: ModuleType) -> None:
    rig = TranscriptRig(call.make_env())
    opening, info = rig.reset(seed=4, options={"task_id": call.TASK, "persona": "calm"})
    assert info["background"] == "clean"
    assert "paperless" in opening and not opening.startswith("/")

    obs, *_ = rig.step(call.ASK)
    assert "8550-48787" in obs and "/result" not in obs
    obs, *_ = rig.step(f"/tool verify_caller {json.dumps(call.ACCOUNT)}")
    assert read_observation(obs).results == [("verify_caller", {"status": "verified"})]
    assert read_observation(obs).caller is None
    # Words and a tool in one action: the caller's answer first, then the result.
    obs, *_ = rig.step(f'{call.READ_BACK}\n/tool set_paperless_billing {{"enabled": true}}')
    seen = read_observation(obs)
    assert seen.caller and "yes" in seen.caller.lower()
    assert seen.results[0][0] == "set_paperless_billing" and seen.results[0][1]["paperless"]
    obs, reward, terminated, truncated, info = rig.step(f"{call.CLOSE}\n/end")
    assert terminated and not truncated and reward == 1.0
    assert info["end_reason"] in ("end_call", "hang_up")
    # No speech in the path: every word arrived as said.
    assert all(t["heard"] is None and not t["spurious"] for t in info["transcript"]["turns"])


def test_an_unknown_command_is_an_error_observation_counted_as_malformed(
    call: ModuleType,
) -> None:
    rig = TranscriptRig(call.make_env())
    rig.reset(seed=0, options=call.CALM_CLEAN)
    obs, reward, terminated, _, info = rig.step("/tol get_account")
    assert obs.startswith("/error unknown command '/tol'")
    assert info["malformed_actions"] == 1 and info["turn"] == 1
    assert not terminated and reward == 0.0
    obs, *_ = rig.step("/tool get_account")  # before verification: the tool refuses
    assert "verif" in read_observation(obs).results[0][1]["error"]


def test_the_rig_refuses_a_noisy_background(call: ModuleType) -> None:
    rig = TranscriptRig(call.make_env())
    with pytest.raises(ValueError, match="clean channel"):
        rig.reset(options={"task_id": call.TASK, "background": "television"})
