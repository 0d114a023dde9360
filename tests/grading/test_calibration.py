"""``vamos grade calibrate``: the code verifier against the LLM verifier on the same checks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from vamos_env.cli.grading import main
from vamos_env.grading import grade
from vamos_env.grading.calibration import compare_verifiers
from vamos_env.grading.llm import ModelEndpoint
from vamos_env.grading.llm_verifier import LLMVerifier
from vamos_env.grading.records import GradedCall, read_records, write_records

CHECK_HEADER = re.compile(r"^check (\S+) \((\w+)\):", re.MULTILINE)


def model_disagreeing_on(check_ids: set[str]) -> Any:
    """A fake model that passes every check except ``check_ids``, which it fails."""

    def reply(request: dict[str, Any]) -> str:
        text = next(m["content"] for m in request["messages"] if m["role"] == "user")
        ids = CHECK_HEADER.findall(text)
        return json.dumps(
            {
                "checks": [
                    {
                        "id": check_id,
                        "verdict": "fail" if check_id in check_ids else "pass",
                        "evidence_turns": [],
                        "quote": "",
                        "reason": "model says so",
                    }
                    for check_id, _ in ids
                ]
            }
        )

    return reply


def graded(built: Any, example_id: str, server: Any, *, stack: str = "s") -> GradedCall:
    call = built(example_id)
    code = grade(call.task, call.transcript, call.ledger)
    llm = LLMVerifier(ModelEndpoint(model="gpt-4o-mini", base_url=server.base_url, api_key="k"))
    model = grade(call.task, call.transcript, call.ledger, verifier=llm)
    return GradedCall(
        key=f"{stack}/{call.task.task_id}/{example_id}",
        task_id=call.task.task_id,
        stack=stack,
        transcript=call.transcript,
        verdict=code,
        llm_checks=model.requirements.checks,
        llm_usage=llm.usage,
        llm_fault=model.grading_fault,
    )


@pytest.fixture
def records(built: Any, fake_chat: Any) -> list[GradedCall]:
    # The model agrees everywhere except on two checks of the wrong-amount call, where the
    # code verifier says fail/pass and the model says pass/fail.
    server = fake_chat(model_disagreeing_on({"card_read_back"}))
    agreeing = fake_chat(model_disagreeing_on(set()))
    return [
        graded(built, "pay_all_in_words", agreeing),
        graded(built, "pay_wrong_amount_spoken", server),
        graded(built, "paperless_reference", agreeing),
        graded(built, "arrangement_first_due_relative", agreeing),
    ]


def test_agreement_per_kind_and_per_call(records: list[GradedCall]) -> None:
    report = compare_verifiers(records)
    assert report.compared == 4 + 4 + 3 + 6
    by_call = {a.group: (a.compared, a.agreed) for a in report.by_call}
    assert by_call["s/ex.pay_bill/pay_all_in_words"] == (4, 4)
    # Wrong amount: code fails amount_read_back, model passes it; model fails the card.
    assert by_call["s/ex.pay_bill/pay_wrong_amount_spoken"] == (4, 2)
    # Relative date: the code verifier could not judge, which counts as a disagreement.
    assert by_call["s/ex.arrangement/arrangement_first_due_relative"] == (6, 5)
    kinds = {a.group: (a.compared, a.agreed) for a in report.by_kind}
    assert kinds["say"] == (12, 9)
    assert kinds["confirm"] == (4, 4)
    listed = {(d.key.split("/")[-1], d.check_id) for d in report.disagreements}
    assert listed == {
        ("pay_wrong_amount_spoken", "amount_read_back"),
        ("pay_wrong_amount_spoken", "card_read_back"),
        ("arrangement_first_due_relative", "first_due_stated"),
    }
    assert report.rate == pytest.approx(14 / 17)


def test_grade_calibrate_command(
    records: list[GradedCall], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.jsonl"
    faulted = GradedCall(key="s/x/1", task_id="x", llm_fault="the model's reply is not JSON")
    write_records(path, [*records, faulted])
    assert [r.key for r in read_records(path)][-1] == "s/x/1"  # records round-trip

    assert main(["grade", "calibrate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "checks compared: 17, agreed: 14 (82.4%)" in out
    assert "s/ex.pay_bill/pay_wrong_amount_spoken amount_read_back (say)" in out
    assert "code: fail" in out and "llm: pass" in out
    assert "evidence: turn 2" in out  # the code verifier's quote of the wrong amount
    assert "s/x/1: the model's reply is not JSON" in out  # skipped, with the reason

    assert main(["grade", "calibrate", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["compared"] == 17 and len(data["disagreements"]) == 3


def test_grade_calibrate_reports_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "k"}\n')
    assert main(["grade", "calibrate", str(path)]) == 2
    assert "results.jsonl:1: expected a graded call record" in capsys.readouterr().err


def test_verdicts_round_trip_through_json(records: list[GradedCall]) -> None:
    verdict = records[1].verdict
    assert verdict is not None
    dumped = json.loads(verdict.model_dump_json())
    assert dumped["passed"] is False and dumped["reward"] == 0.0 and dumped["outcome"] == "fail"
    again = type(verdict).model_validate(dumped)
    assert again == verdict
