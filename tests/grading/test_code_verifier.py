"""The code verifier's parts: reading replies and claims, windows, and what it cannot judge."""

from __future__ import annotations

from typing import Any

import pytest

from vamos_env.envs.energy.tasks.schema import Check, Task
from vamos_env.grading import LedgerDiff, grade
from vamos_env.grading.code_verifier import CodeVerifier, ordered_for_windows
from vamos_env.grading.speech_evidence import agreement, claimed_phrase, relative_date, sentences
from vamos_env.grading.timeline import Timeline
from vamos_env.types import ToolCall, ToolResult, Transcript, Turn


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes, go ahead.", "agree"),
        ("Yep.", "agree"),
        ("That's right, please do.", "agree"),
        ("Okay.", "agree"),
        ("Yeah, no problem.", "agree"),
        ("No, that's not right.", "refuse"),
        ("Nope.", "refuse"),
        ("Hold on a second.", "refuse"),
        ("Right, not that one.", "refuse"),
        ("Yes. Wait, no.", "mixed"),
        ("How long does it take?", "none"),
        ("Hmm.", "none"),
    ],
)
def test_agreement(reply: str, expected: str) -> None:
    assert agreement(reply) == expected


@pytest.mark.parametrize(
    ("sentence", "claimed"),
    [
        ("Your payment went through.", "went through"),
        ("The payment did not go through.", None),
        ("It didn't go through, sorry.", None),
        ("The bill has not been paid.", None),
        ("Shall I put it through so the bill is paid?", None),
        ("Great, the bill is paid.", "is paid"),
        ("Unfortunately it was never paid.", None),
    ],
)
def test_claims_skip_negations_and_questions(sentence: str, claimed: str | None) -> None:
    assert claimed_phrase(sentence, ["went through", "go through", "is paid", "been paid",
                                     "paid"]) == claimed  # fmt: skip


def test_sentences_keep_abbreviations_and_amounts() -> None:
    parts = [s.text for s in sentences("It's $219.86. Due Aug. 29! Mrs. Park, okay? Yes")]
    assert parts == ["It's $219.86.", "Due Aug. 29!", "Mrs. Park, okay?", "Yes"]


def test_relative_dates() -> None:
    assert (
        relative_date("The first payment is due thirty days from today.")
        == "thirty days from today"
    )
    assert relative_date("It's due in 30 days") == "in 30 days"
    assert relative_date("It's due October 10th") is None


def _check(**kw: Any) -> Check:
    base = {"id": "c", "request_index": 0, "kind": "say", "description": "d"}
    return Check.model_validate({**base, **kw})


def _task(checks: list[Check]) -> Task:
    return Task.model_validate(
        {
            "task_id": "t",
            "caller": {
                "account_number": "8731-71970",
                "full_name": "Samuel Walsh-Obi",
                "second_factor": {"kind": "postal_code", "value": "18360"},
                "opening_line": "Hi.",
            },
            "requests": [
                {"kind": "balance", "says": "s", "rephrase": "r", "expected_outcome": "resolved"}
            ],
            "checks": [c.model_dump() for c in checks],
            "meta": {"request_kinds": ["balance"], "request_count": 1},
        }
    )


def _transcript(*turns: Turn) -> Transcript:
    return Transcript(task_id="t", turns=list(turns))


def test_a_check_with_nothing_to_look_for_is_undecided() -> None:
    task = _task([_check()])
    verdict = grade(task, _transcript(Turn(index=0, speaker="agent", text="Hello.")), LedgerDiff())
    result = verdict.requirements.check("c")
    assert result.passed is None and "cannot judge" in result.reason
    assert set(verdict.undecided) == {"c", "gate_disclosure", "no_recitation"}
    assert verdict.passed is False and verdict.requirements.passed is None
    # No ledger account data: the disclosure and recitation checks cannot be judged either.
    assert verdict.gate.check("gate_disclosure").passed is None


def test_a_result_in_a_later_turn_is_paired_with_its_call() -> None:
    call = ToolCall(call_id="call_1", name="transfer_to_human", arguments={"reason": "x"})
    result = ToolResult(
        call_id="call_1", name="transfer_to_human", ok=True, result={"status": "ok"}
    )
    timeline = Timeline.of(
        _transcript(
            Turn(index=0, speaker="agent", tool_call=call),
            Turn(index=1, speaker="agent", text="Transferring you."),
            Turn(index=2, speaker="tool", tool_result=result),
        )
    )
    [event] = timeline.events
    assert (event.turn, event.succeeded) == (0, True)
    unanswered = Timeline.of(_transcript(Turn(index=0, speaker="agent", tool_call=call)))
    assert unanswered.events[0].succeeded is False


def test_windows_open_after_another_checks_evidence() -> None:
    readback = _check(id="readback", topic_phrases=["email"], value="a@b.org", value_type="email")
    consent = _check(id="consent", kind="confirm", window={"after_check": "readback"})
    assert [c.id for c in ordered_for_windows([consent, readback])] == ["readback", "consent"]
    task = _task([consent, readback])
    early_yes = _transcript(
        Turn(index=0, speaker="caller", text="Yes please."),
        Turn(index=1, speaker="agent", text="We'd email a@b.org, right?"),
        Turn(index=2, speaker="caller", text="Hmm."),
    )
    results = {r.id: r for r in CodeVerifier().judge(task, Timeline.of(early_yes))}
    assert results["readback"].passed is True
    assert results["consent"].passed is False  # the only yes came before the read-back
    later_yes = _transcript(*early_yes.turns, Turn(index=3, speaker="caller", text="Yes."))
    results = {r.id: r for r in CodeVerifier().judge(task, Timeline.of(later_yes))}
    assert results["consent"].passed is True and results["consent"].evidence[0].turn == 3


def test_the_transcript_must_be_the_tasks() -> None:
    with pytest.raises(ValueError, match="expected 't'"):
        grade(_task([]), Transcript(task_id="other"), LedgerDiff())


def test_a_figure_broken_off_by_a_cut_states_nothing() -> None:
    balance = _check(id="balance", topic_phrases=["balance"], value=65995, value_type="money")
    task = _task([balance])
    said = (
        "Your balance shows four hundred thirty-seven dollars and ninety-seven cents past "
        "due. Your total open balance is six hundred fifty-nine dollars and ninety-five cents."
    )

    def call(heard: str) -> Transcript:
        return _transcript(
            Turn(index=0, speaker="caller", text="How much do I owe?"),
            Turn(index=1, speaker="agent", text=said, heard=heard, cut=True),
            Turn(index=2, speaker="caller", text="Sorry, you cut out there."),
            Turn(index=3, speaker="agent", text=said),
        )

    # Cut on "...and ninety-seven": the caller cannot know how the figure went on.
    broken = call("Your balance shows four hundred thirty-seven dollars and ninety-seven")
    [result] = CodeVerifier().judge(task, Timeline.of(broken))
    assert result.passed is True, result.reason
    # A figure heard whole before the cut is a figure the caller heard, right or wrong.
    whole = call("Your balance shows four hundred thirty-seven dollars and ninety-seven cents")
    [result] = CodeVerifier().judge(task, Timeline.of(whole))
    assert result.passed is False and "cannot tell which" in result.reason


def test_a_recognisers_spelling_of_past_due_is_read_as_past_due() -> None:
    nothing = _check(
        id="nothing_past_due",
        topic="nothing past due",
        topic_phrases=["nothing", "not past due", "isn't past due", "not overdue"],
    )
    task = _task([nothing])

    def call(said: str) -> Transcript:
        return _transcript(
            Turn(index=0, speaker="caller", text="Is any of it past due?"),
            Turn(index=1, speaker="agent", text=said),
        )

    # A duplex call's agent turn is Whisper's transcript of the agent's voice.
    heard = call("Nothing on your account is passed due.")
    heard_short = call("Nothing on your account is pass due.")
    written = call("Nothing on your account is past due.")
    for transcript in (heard, heard_short, written):
        [result] = CodeVerifier().judge(task, Timeline.of(transcript))
        assert result.passed is True, result.reason
    # "passed due to" is another phrase.
    other = call("The deadline passed due to the storm.")
    [result] = CodeVerifier().judge(task, Timeline.of(other))
    assert result.passed is not True


@pytest.mark.parametrize(
    ("said", "passed"),
    [
        # A recogniser's run-on: the rule ("needs at least") is the first form's only.
        ("unfortunately an arrangement needs at least 50 dollars past due nothing on your "
         "account is past due", True),
        ("Unfortunately, an arrangement needs at least $50 past due. Nothing is past due.", True),
        # The second form asserts it: no "nothing past due" there.
        ("an arrangement needs at least 50 dollars past due your september bill is past due",
         False),
        # A blocker after the form still blocks it: the instalment's, not the bills'.
        ("nothing is past due on your instalment plan", False),
    ],
)  # fmt: skip
def test_a_blocker_reaches_only_its_own_form_of_a_run_on(said: str, passed: bool) -> None:
    nothing = _check(
        id="nothing_past_due",
        topic="nothing past due",
        topic_phrases=["nothing", "not past due", "isn't past due", "not overdue"],
    )
    transcript = _transcript(
        Turn(index=0, speaker="caller", text="Can I get a payment plan?"),
        Turn(index=1, speaker="agent", text=said),
    )
    [result] = CodeVerifier().judge(_task([nothing]), Timeline.of(transcript))
    assert (result.passed is True) is passed, result.reason
