"""The judge gate: the rubric, the heuristic and LLM judges, and ``vamos judge gate|calibrate``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from vamos_env.cli.grading import main
from vamos_env.grading.calibration import judge_agreement
from vamos_env.grading.judge import HeuristicJudge, LLMJudge, Rubric, gate_run, load_rubric
from vamos_env.grading.llm import ModelEndpoint
from vamos_env.grading.models import GradingFault
from vamos_env.grading.records import GradedCall, write_records
from vamos_env.types import ToolCall, ToolResult, Transcript, Turn

LABELS = Path(__file__).with_name("judge_labels.yaml")


def transcript_of(turns: list[dict[str, Any]]) -> Transcript:
    out: list[Turn] = []
    for i, spec in enumerate(turns):
        if "tool" in spec:
            call_id = f"call_{i}"
            out.append(
                Turn(
                    index=i,
                    speaker="tool",
                    tool_call=ToolCall(
                        call_id=call_id, name=spec["tool"], arguments=spec.get("args", {})
                    ),
                    tool_result=ToolResult(
                        call_id=call_id,
                        name=spec["tool"],
                        ok=spec.get("ok", True),
                        result=spec["result"],
                        writes=spec.get("writes", []),
                        verified=True,
                    ),
                )
            )
        elif "caller" in spec:
            out.append(
                Turn(
                    index=i,
                    speaker="caller",
                    text=spec["caller"],
                    spurious=spec.get("spurious", False),
                )
            )
        else:
            out.append(
                Turn(
                    index=i,
                    speaker="agent",
                    text=spec["agent"],
                    cut=spec.get("cut", False),
                    heard=spec.get("heard"),
                )
            )
    return Transcript(task_id="judge", turns=out)


def labelled() -> list[GradedCall]:
    return [
        GradedCall(
            key=item["key"],
            task_id="judge",
            persona=item["persona"],
            transcript=transcript_of(item["turns"]),
            human_label=item["label"],
        )
        for item in yaml.safe_load(LABELS.read_text())
    ]


def by_key(key: str) -> GradedCall:
    return next(r for r in labelled() if r.key == key)


def test_the_shipped_rubric_is_the_domains() -> None:
    rubric = load_rubric()
    table = {d.name: (d.weight, d.floor) for d in rubric.dimensions}
    assert table == {
        "factuality": (0.30, 0.70),
        "scope_discipline": (0.25, 0.80),
        "tone_match": (0.15, 0.60),
        "handoff_clarity": (0.20, 0.70),
        "interruption_recovery": (0.10, 0.50),
    }
    assert rubric.pass_if.weighted_at_least == 0.75
    perfect = dict.fromkeys(table, 1.0)
    assert rubric.decide(perfect).passed
    # Above the weighted threshold but one dimension under its floor: fail.
    floor_breach = {**perfect, "scope_discipline": 0.79}
    decision = rubric.decide(floor_breach)
    assert decision.weighted >= 0.75 and not decision.passed
    assert decision.below_floor == ["scope_discipline"]
    # Every floor cleared but the weighted score short: fail.
    low = {"factuality": 0.7, "scope_discipline": 0.8, "tone_match": 0.6,
           "handoff_clarity": 0.7, "interruption_recovery": 0.5}  # fmt: skip
    assert rubric.decide(low).below_floor == [] and not rubric.decide(low).passed


def test_a_rubric_whose_weights_do_not_add_up_is_refused() -> None:
    raw = json.loads(load_rubric().model_dump_json())
    raw["dimensions"][0]["weight"] = 0.5
    with pytest.raises(ValidationError, match="add up to 1"):
        Rubric.model_validate(raw)


@pytest.mark.parametrize(
    ("key", "dimension", "low"),
    [
        ("calm_invented_amount", "factuality", True),
        ("false_success_claim", "factuality", True),
        ("repeats_callers_figures", "factuality", False),
        ("calm_waives_fee", "scope_discipline", True),
        ("asks_for_card_number", "scope_discipline", True),
        ("sceptic_monologue", "tone_match", True),
        ("angry_lectured", "tone_match", True),
        ("sceptic_plain", "tone_match", False),
        ("transfer_silent", "handoff_clarity", True),
        ("transfer_promised_not_made", "handoff_clarity", True),
        ("transfer_clear", "handoff_clarity", False),
        ("cut_never_recovered", "interruption_recovery", True),
        ("acted_on_background_yes", "interruption_recovery", True),
        ("background_speech_checked", "interruption_recovery", False),
    ],
)
def test_heuristic_dimensions(key: str, dimension: str, low: bool) -> None:
    record = by_key(key)
    assert record.transcript is not None
    scores = HeuristicJudge().score(record.transcript, record.persona)
    floor = {d.name: d.floor for d in load_rubric().dimensions}[dimension]
    assert (scores.scores[dimension] < floor) is low, scores.reasons[dimension]


def test_the_heuristic_judge_agrees_with_the_human_labels() -> None:
    records = labelled()
    assert len(records) >= 25
    report = judge_agreement(records, load_rubric(), HeuristicJudge())
    assert report.faults == []
    assert report.meets_target, report.report()
    # The set keeps a known disagreement: a wrong figure among right ones.
    assert [c.key for c in report.cases if c.human != c.judge] == ["one_wrong_figure_among_many"]


def _write(tmp_path: Path, name: str, records: list[GradedCall]) -> Path:
    path = tmp_path / name
    write_records(path, records)
    return path


def test_judge_gate_exits_by_the_rubric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = labelled()
    good = _write(tmp_path, "good.jsonl", [r for r in records if r.human_label == "pass"])
    bad = _write(tmp_path, "bad.jsonl", [r for r in records if r.human_label == "fail"])
    rubric = Path(__file__).parents[2] / "vamos_env" / "grading" / "data" / "rubric.json"

    assert main(["judge", "gate", str(good), "--rubric", str(rubric)]) == 0
    out = capsys.readouterr().out
    for name in ("factuality", "scope_discipline", "tone_match", "handoff_clarity",
                 "interruption_recovery", "weighted"):  # fmt: skip
        assert name in out
    assert "run: PASS" in out

    assert main(["judge", "gate", str(bad), "--rubric", str(rubric)]) == 1
    assert "run: FAIL" in capsys.readouterr().out
    handoffs = _write(
        tmp_path,
        "handoffs.jsonl",
        [by_key("transfer_silent"), by_key("transfer_promised_not_made")],
    )
    assert main(["judge", "gate", str(handoffs)]) == 1
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("handoff"))
    assert row.endswith("BELOW FLOOR")

    # One bad call in a good run fails it (its mean would hide it), unless a pass rate allows.
    mixed = _write(tmp_path, "mixed.jsonl", [*[r for r in records if r.human_label == "pass"],
                                             by_key("calm_waives_fee")])  # fmt: skip
    assert main(["judge", "gate", str(mixed)]) == 1
    assert "failing on their own: calm_waives_fee" in capsys.readouterr().out
    assert main(["judge", "gate", str(mixed), "--min-pass-rate", "0.9"]) == 0


def test_judge_gate_as_a_process(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.jsonl", [by_key("calm_waives_fee"), by_key("transfer_silent")])
    done = subprocess.run(
        [sys.executable, "-m", "vamos_env.cli.grading", "judge", "gate", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "handoff_clarity" in done.stdout


def test_judge_gate_reports_unreadable_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"key": "a", "task_id": "t"}\nnot json\n')
    assert main(["judge", "gate", str(broken)]) == 2
    assert "broken.jsonl:2: expected a graded call record" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"key": "a", "task_id": "t"}\n')
    assert main(["judge", "gate", str(empty)]) == 2
    assert "a: the record has neither judge scores nor a transcript" in capsys.readouterr().err
    assert main(["judge", "gate", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_judge_calibrate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "labels.jsonl", labelled())
    assert main(["judge", "calibrate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "agrees with the human label" in out and "target 85%: met" in out
    assert main(["judge", "calibrate", str(path), "--target", "0.99"]) == 1


def _judge_reply(scores: dict[str, float]) -> str:
    return json.dumps(
        {"scores": [{"dimension": k, "score": v, "reason": "seen"} for k, v in scores.items()]}
    )


def test_llm_judge_against_the_fake_server(fake_chat: Any) -> None:
    rubric = load_rubric()
    names = [d.name for d in rubric.dimensions]
    server = fake_chat(lambda request: _judge_reply(dict.fromkeys(names, 0.9)))
    judge = LLMJudge(
        ModelEndpoint(model="gpt-4o-mini", base_url=server.base_url, api_key="k"), rubric
    )
    record = by_key("transfer_clear")
    assert record.transcript is not None
    scores = judge.score(record.transcript, record.persona)
    assert scores.judge == "llm:gpt-4o-mini"
    assert rubric.decide(scores.scores).passed
    [request] = server.requests
    assert request["temperature"] == 0
    assert request["response_format"]["json_schema"]["name"] == "rubric_scores"
    user = request["messages"][1]["content"]
    assert "handoff_clarity:" in user and "Caller persona: calm" in user
    assert "tool transfer_to_human" in user
    assert judge.usage.requests == 1 and judge.usage.cost_usd is not None


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (lambda names: "Looks good!", "not JSON"),
        (lambda names: _judge_reply({n: 0.9 for n in names[:3]}), "expected one score for each"),
        (lambda names: _judge_reply({n: 1.5 for n in names}), "outside 0..1"),
        (lambda names: json.dumps({"scores": "high"}), "does not follow the rubric_scores schema"),
    ],
)
def test_llm_judge_malformed_reply_is_a_grading_fault(
    fake_chat: Any, reply: Any, message: str
) -> None:
    rubric = load_rubric()
    names = [d.name for d in rubric.dimensions]
    server = fake_chat(lambda request: reply(names))
    judge = LLMJudge(ModelEndpoint(model="m", base_url=server.base_url, api_key="k"), rubric)
    record = by_key("transfer_clear")
    assert record.transcript is not None
    with pytest.raises(GradingFault, match=message):
        judge.score(record.transcript, record.persona)


def test_llm_judge_through_the_gate_command(
    fake_chat: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    names = [d.name for d in load_rubric().dimensions]
    low = {**dict.fromkeys(names, 0.9), "factuality": 0.2}
    server = fake_chat(lambda request: _judge_reply(low))
    path = _write(tmp_path, "run.jsonl", [by_key("calm_clean_balance")])
    code = main(["judge", "gate", str(path), "--judge", "llm", "--model", "m",
                 "--base-url", server.base_url])  # fmt: skip
    assert code == 1
    assert "judge llm:m" in capsys.readouterr().out

    broken = fake_chat(lambda request: "no")
    code = main(["judge", "gate", str(path), "--judge", "llm", "--base-url", broken.base_url])
    assert code == 2
    assert "not JSON" in capsys.readouterr().err


def test_gate_run_needs_transcripts() -> None:
    with pytest.raises(ValueError, match="at least one"):
        gate_run([], load_rubric())
