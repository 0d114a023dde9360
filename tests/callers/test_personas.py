"""Personas change wording and behaviour, never the task: and each sceptic behaviour is observed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import vamos_env.callers
from vamos_env.callers.base import HangUp, Utterance
from vamos_env.callers.persona import (
    SHIPPED_PERSONAS,
    Behaviours,
    Persona,
    PersonaFileError,
    load_persona,
    load_persona_file,
    parse_persona,
)
from vamos_env.callers.scripted import ScriptedCaller
from vamos_env.speech import find_digit_strings, find_money

PERSONA_DIR = Path(vamos_env.callers.__file__).parent / "personas"


def with_behaviours(name: str, **changes: object) -> Persona:
    persona = load_persona(name)
    behaviours = persona.behaviours.model_copy(update=changes)
    checked = Behaviours.model_validate(behaviours.model_dump())
    return persona.model_copy(update={"behaviours": checked})


def verified(task, persona: Persona | str, seed: int = 0) -> ScriptedCaller:
    caller = ScriptedCaller(task, persona, rng=seed)
    caller.open()
    caller.hear("Account number, full name, and your postal code?")
    caller.hear("Thanks, you're verified. How can I help?")
    return caller


# --- the files ---------------------------------------------------------------------------


def test_shipped_personas_load_and_match_their_files() -> None:
    assert sorted(p.stem for p in PERSONA_DIR.glob("*.yaml")) == sorted(SHIPPED_PERSONAS)
    for name in SHIPPED_PERSONAS:
        assert load_persona_file(PERSONA_DIR / f"{name}.yaml") == load_persona(name)
    assert load_persona("sceptic").behaviours.interrupt_after_words == 20  # 8 s at 150 wpm
    assert load_persona("sceptic-nl").language == "nl-NL"
    assert load_persona("calm").behaviours.interrupt_after_words is None


def test_language_is_a_persona_field() -> None:
    english, dutch = load_persona("sceptic"), load_persona("sceptic-nl")
    assert english.behaviours == dutch.behaviours and english.language != dutch.language


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda raw: raw["wording"].update(why=["Why {reason}?"]), r"placeholders \['reason'\]"),
        (lambda raw: raw.update(mood="sunny"), "mood"),
        (lambda raw: raw["wording"].pop("goodbye"), "goodbye"),
        (lambda raw: raw["behaviours"].update(false_yes_rate=2), "false_yes_rate"),
        (lambda raw: raw.update(language="Dutch"), "language"),
    ],
)
def test_a_bad_persona_file_says_what_is_wrong(change, message) -> None:
    raw = yaml.safe_load((PERSONA_DIR / "calm.yaml").read_text())
    change(raw)
    with pytest.raises(PersonaFileError, match=message):
        parse_persona(raw)


def test_file_name_and_persona_name_must_agree(tmp_path) -> None:
    path = tmp_path / "cheerful.yaml"
    path.write_text((PERSONA_DIR / "calm.yaml").read_text())
    with pytest.raises(PersonaFileError, match="expected 'cheerful'"):
        load_persona_file(path)
    with pytest.raises(KeyError, match="expected one of"):
        load_persona("cheerful")


# --- same task, same facts ---------------------------------------------------------------


def _facts_said(caller: ScriptedCaller) -> set[str]:
    words = " ".join(a.text for a in caller.acts)
    return {m.value for m in find_digit_strings(words)} | {str(m.value) for m in find_money(words)}


@pytest.mark.parametrize(
    "task_id",
    ["t-balance-pay", "t-arrangement-paperless", "t-quote-promise", "t-decline-supervisor",
     "t-record-extension"],
)  # fmt: skip
def test_personas_give_the_same_requests_facts_and_account_changes(
    tasks, answer_key_agent, converse, task_id
) -> None:
    task = tasks[task_id]
    expected_changes = [(c.request_index, c.tool) for c in task.expected_changes]
    results = {}
    for persona in ("calm", "angry", "sceptic"):
        for style in ("words", "digits"):
            caller = ScriptedCaller(task, persona, rng=5)
            agent = answer_key_agent(task, money_style=style)
            converse(caller, agent.reply)
            raised = [a.act for a in caller.acts if a.act in ("request", "next_request")]
            results[persona, style] = (
                caller.outcomes,
                caller.goal_met(),
                len(raised),
                [a for a in agent.actions if a[1] != "transfer_to_human"],
                _facts_said(caller),
            )
            assert caller.outcomes == [r.expected_outcome for r in task.requests]
            if expected_changes:
                assert results[persona, style][3] == expected_changes
    assert len({repr(r) for r in results.values()}) == 1, results


def test_the_angry_caller_never_adds_demands_or_asks_for_a_supervisor(
    tasks, answer_key_agent, converse
) -> None:
    for task in tasks.values():
        if any(r.kind == "supervisor" for r in task.requests):
            continue
        for seed in range(3):
            call = converse(ScriptedCaller(task, "angry", rng=seed), answer_key_agent(task).reply)
            said = " ".join(call.said_by("caller")).lower()
            assert not re.search(r"supervisor|manager|refund|compensation", said)


def test_the_dutch_sceptic_speaks_dutch(tasks, answer_key_agent, converse) -> None:
    task = tasks["t-balance-pay"]
    caller = ScriptedCaller(task, "sceptic-nl", rng=0)
    call = converse(caller, answer_key_agent(task, money_style="digits").reply)
    said = " ".join(call.said_by("caller"))
    assert "Klantnummer 4417-90781" in said and "Ik wil mijn rekening betalen" in said
    assert caller.outcomes == ["resolved", "resolved"]


# --- the sceptic, behaviour by behaviour --------------------------------------------------


def test_sceptic_interrupts_after_about_eight_seconds(tasks) -> None:
    caller = verified(tasks["t-balance-pay"], "sceptic")
    long_turn = " ".join(["Let me walk you through how our billing works."] * 4)  # 36 words
    reply = caller.hear(long_turn)
    assert isinstance(reply, Utterance) and reply.cut_in_after_words == 20
    assert caller.acts[-1].act == "interrupt"
    short = caller.hear("Sorry. What would you like to know?")
    assert isinstance(short, Utterance) and short.cut_in_after_words is None
    calm = verified(tasks["t-balance-pay"], "calm")
    assert calm.hear(long_turn).cut_in_after_words is None


def test_sceptic_asks_why_the_first_time_a_fact_is_quoted(tasks) -> None:
    caller = verified(tasks["t-balance-pay"], "sceptic")
    first = caller.hear("The past due amount is $222.89, according to your account.")
    assert first.text == "Why?"
    caller.hear("It's your August bill, which is unpaid.")  # answers, and the caller moves on
    second = caller.hear("Your September bill is $180.10, as your account shows.")
    assert caller.acts[-1].act != "why" and "Why" not in second.text
    calm = verified(tasks["t-balance-pay"], "calm")
    assert calm.hear("The past due amount is $222.89.").text != "Why?"


def test_sceptic_demands_a_source_for_numbers(tasks) -> None:
    caller = verified(tasks["t-quote-promise"], "sceptic")
    caller.hear("The first payment would be due October tenth.")  # the "why?" goes to the date
    assert caller.acts[-1].act == "why"
    unsourced = caller.hear("It would be seventy-three dollars and thirty cents a month.")
    assert caller.acts[-1].act == "source"
    assert unsourced.text in load_persona("sceptic").wording.source
    caller.hear("That's your past-due balance split over six months, from your account records.")
    caller.hear("Okay. Anything else?")
    sourced = caller.hear("Sure. Your records show a balance of $439.79 on the arrangement.")
    assert caller.acts[-1].act != "source", sourced


def test_sceptic_hangs_up_when_the_agent_contradicts_itself(tasks) -> None:
    caller = verified(tasks["t-record-extension"], "sceptic")
    caller.hear("The outstanding balance on your arrangement is $366.50, as your records show.")
    caller.hear("That's from your arrangement schedule.")
    ending = caller.hear("Sorry, the outstanding balance on your arrangement is $439.79.")
    assert isinstance(ending, HangUp) and ending.reason == "contradiction"
    # A change the agent marks as a change is not a contradiction.
    again = verified(tasks["t-record-extension"], "sceptic")
    again.hear("The outstanding balance on your arrangement is $439.79, as your records show.")
    again.hear("That's from your arrangement schedule.")
    after = again.hear("I've recorded it. The outstanding balance is now $366.50, per records.")
    assert not isinstance(after, HangUp)
    calm = verified(tasks["t-record-extension"], "calm")
    calm.hear("The outstanding balance on your arrangement is $366.50.")
    assert not isinstance(calm.hear("Sorry, the outstanding balance is $439.79."), HangUp)


def test_sceptic_says_yes_when_it_means_no_and_takes_it_back(tasks) -> None:
    always = with_behaviours("sceptic", false_yes_rate=1.0, asks_why_first_fact=False)
    caller = verified(tasks["t-balance-pay"], always)
    wrong = caller.hear("Would you like me to sign you up for our budget billing program?")
    assert wrong.text == "Yes."
    follow = caller.hear("Great. Budget billing spreads your costs evenly over the year.")
    assert follow.text.startswith("No. I meant no.")


def test_sceptic_wrong_yes_comes_about_one_turn_in_ten(tasks) -> None:
    yes = 0
    trials = 600
    for seed in range(trials):
        caller = verified(tasks["t-balance-pay"], "sceptic", seed)
        reply = caller.hear("Would you like to hear about our budget billing program?")
        yes += reply.text == "Yes."
    assert 0.06 < yes / trials < 0.14


def test_sceptic_never_says_a_wrong_yes_to_consent(tasks) -> None:
    always = with_behaviours("sceptic", false_yes_rate=1.0, asks_why_first_fact=False)
    caller = verified(tasks["t-balance-pay"], always)
    caller.hear("The past due amount is $222.89, from your account records.")
    wrong = caller.hear(
        "I can charge $150.00 to the card ending in 4242, from your records. Shall I go ahead?"
    )
    assert caller.acts[-1].act == "object" and "Yes" not in wrong.text
    transfer = caller.hear("Would you like me to transfer you to a colleague?")
    assert caller.acts[-1].act == "decline_offer", transfer
