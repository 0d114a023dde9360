"""The scripted caller answers the question put to it, whatever the agent says around it.

Each scene puts the caller at one point of a call (verification, the card question,
consent, the email read-back, an offer outside its brief, "anything else?") and asks
its question in many phrasings. With filler or small talk before or after the
question, the caller must do exactly what it does for the bare question: the same
act, the same words. Then the classes of turn that used to fool it, one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from vamos_env.callers.persona import load_persona
from vamos_env.callers.scripted import ScriptedCaller

PERSONAS = ("calm", "angry", "sceptic", "sceptic-nl")
BEFORE = (
    "One second.",
    "Sure thing!",
    "Thanks for waiting.",
    "Let me pull that up.",
    "Let me check.",
    "Okay, great.",
    "One second,",
)
AFTER = ("Thanks for waiting.", "Take your time.", "One second.", "Sure thing!")
VERIFY = (
    "Can I have your account number, full name, and your postal code?",
    "Thank you, you're verified.",
)


@dataclass(frozen=True)
class Scene:
    """A point in a call (the agent's lines so far), a question, and what answers it."""

    name: str
    task_id: str
    setup: tuple[str, ...]
    questions: tuple[str, ...]
    act: str
    says: str = ""  # in the reply
    not_says: str = ""  # never in the reply


SCENES = (
    Scene(
        "verification",
        "t-balance-pay",
        (),
        (
            "Can I have your account number and full name?",
            "What's your account number and the full name on the account?",
            "Could you give me your account number and your full name, please?",
            "Please tell me your account number and full name.",
            "I'll need your account number and full name.",
            "To start, your account number and full name, please.",
        ),
        "identity",
        says="4417-90781",
    ),
    Scene(
        "second factor",
        "t-balance-pay",
        ("Can I have your account number and full name?",),
        (
            "And one of: the last four of a card on file, your postal code, or last bill amount?",
            "For security, what's your zip code?",
            "Could you confirm the postal code on the account?",
            "I'll also need your postal code.",
        ),
        "identity",
        says="15213",
    ),
    Scene(
        "card question",
        "t-decline-supervisor",
        VERIFY,
        (
            "Which card would you like to use?",
            "Which card on file would you like to use today?",
            "What card should I charge?",
            "Which of your cards should I use?",
            "Could you tell me which card you'd like to use?",
            "Please tell me which card you want to use.",
            "Let me know which card you'd like to use.",
            "Which card would you like to use, the first or the second?",
        ),
        "private_fact",
        says="0002",
        not_says="4242",
    ),
    Scene(
        "card question after a decline",
        "t-decline-supervisor",
        (
            *VERIFY,
            "Which card would you like to use?",
            "Your bill shows a balance of $222.89.",
            "Shall I charge $222.89 to the card ending 0002?",
            "I'm sorry, the card ending 0002 was declined, so the bill was not paid.",
        ),
        (
            "Which other card would you like to use?",
            "Do you have another card on file you'd like to use?",
            "Would you like to try a different card?",
            "Is there another card I can try?",
            "Which card should I try now?",
        ),
        "private_fact",
        says="4242",
    ),
    Scene(
        "consent to a charge",
        "t-decline-supervisor",
        (*VERIFY, "Which card would you like to use?", "Your bill shows a balance of $222.89."),
        (
            "Shall I charge $222.89 to the card ending 0002?",
            "Can I go ahead and charge $222.89 to the card ending in 0002?",
            "I can charge $222.89 to the card ending 0002. Is that okay?",
            "That's $222.89 on the card ending 0002. Shall I go ahead?",
            "Would you like me to charge $222.89 to the card ending 0002?",
            "Please confirm I should charge $222.89 to the card ending 0002.",
        ),
        "agree",
        says="go ahead",
    ),
    Scene(
        "email read-back",
        "t-arrangement-paperless",
        (
            *VERIFY,
            "No down payment: first instalment $73.34, then $73.29 a month. Shall I set it up?",
            "Done. Your payment arrangement is now set up.",
        ),
        (
            "I have dana dot whitfield at example dot com on file. Shall I send your bills there?",
            "Shall I send paperless bills to dana.whitfield@example.com?",
            "Your email on file is dana.whitfield@example.com. Is that right?",
            "Can you confirm your email is dana.whitfield@example.com?",
            "Just to confirm, the email is dana.whitfield@example.com, correct?",
            "Please confirm the email dana.whitfield@example.com.",
        ),
        "agree",
        says="email",
    ),
    Scene(
        "paperless offer outside the brief",
        "t-balance-pay",
        VERIFY,
        (
            "Would you like to switch to paperless billing?",
            "Would you like your bills by email instead?",
            "Do you want to go paperless?",
        ),
        "decline_offer",
    ),
    Scene(
        "anything else",
        "t-balance-pay",
        ("Can I have your account number, full name, and your postal code?",),
        (
            "How can I help you today?",
            "What can I do for you?",
            "Is there anything else I can help with?",
            "What else can I help you with?",
        ),
        "request",
        says="owe",
    ),
)
CASES = [
    pytest.param(scene, question, id=f"{scene.name}: {question}")
    for scene in SCENES
    for question in scene.questions
]


def caller_at(tasks, scene: Scene, persona: str) -> ScriptedCaller:
    caller = ScriptedCaller(tasks[scene.task_id], persona, rng=5)
    caller.open()
    for line in scene.setup:
        caller.hear(line)
    return caller


def answer(tasks, scene: Scene, persona: str, line: str) -> tuple[str, str]:
    caller = caller_at(tasks, scene, persona)
    reply = caller.hear(line)
    assert caller.deviations == [], (line, caller.deviations)
    return caller.acts[-1].act, reply.text


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("scene", "question"), CASES)
def test_filler_around_a_question_changes_nothing(tasks, persona, scene, question) -> None:
    bare = answer(tasks, scene, persona, question)
    if persona in ("calm", "angry"):  # the sceptics challenge figures and may say a wrong yes
        act, text = bare
        assert act == scene.act, (question, bare)
        assert scene.says.lower() in text.lower() if scene.says else True, (question, text)
        assert not (scene.not_says and scene.not_says in text), (question, text)
    # A sceptic cuts a long turn short whatever it says: that is another test's business.
    limit = load_persona(persona).behaviours.interrupt_after_words or 10_000
    for line in [f"{b} {question}" for b in BEFORE] + [f"{question} {a}" for a in AFTER]:
        if len(line.split()) <= limit:
            assert answer(tasks, scene, persona, line) == bare, line


# --- the turns that used to fool it, class by class --------------------------------------


def card_caller(tasks, persona: str = "calm") -> ScriptedCaller:
    caller = ScriptedCaller(tasks["t-decline-supervisor"], persona, rng=5)
    caller.open()
    for line in VERIFY:
        caller.hear(line)
    return caller


@pytest.mark.parametrize(
    "turn",
    [
        "How are you today? Which card would you like to use?",
        "Which card would you like to use? Would you like a receipt by email too?",
        "Which card would you like to use? Can I also tell you about autopay?",
        "Do you want to hear about our new rates? Which card would you like to use?",
        "Let me check. Which card would you like to use?",
        "Let me check which cards are on file. Which one would you like to use?",
        "I can see two cards on file, the second one is newer. Which card would you like to use?",
        "Which card would you like to use? The second card on file expires next year.",
        "Which card would you like to use? Your other bill is already paid.",
        "If you have a preference, which card should I charge?",
    ],
)
def test_answers_the_card_question_whatever_stands_around_it(tasks, turn) -> None:
    caller = card_caller(tasks)
    reply = caller.hear(turn)
    assert caller.acts[-1].act == "private_fact" and "0002" in reply.text, reply.text
    assert "4242" not in reply.text and caller.deviations == []


@pytest.mark.parametrize(
    "turn",
    [
        "I can see which cards are on file.",
        "I can see which card you used last time, and the second one on file.",
        "Here's what I found: two cards, one of them is the other one you added.",
        "What you owe is on the August bill.",
        "When the payment goes through, the bill will show as paid.",
    ],
)
def test_a_statement_with_a_question_word_asks_nothing(tasks, turn) -> None:
    caller = card_caller(tasks)
    reply = caller.hear(turn)
    assert caller.acts[-1].act not in ("private_fact", "dont_know", "agree"), reply.text
    assert "0002" not in reply.text and "4242" not in reply.text


def test_small_talk_alone_gets_a_courtesy_and_the_call_goes_on(tasks) -> None:
    caller = card_caller(tasks)
    wording = caller.persona.wording
    reply = caller.hear("How are you doing today?")
    assert reply.text.startswith(wording.small_talk) and "pay" in reply.text  # and its request
    still = caller.hear("Are you still there?")
    assert still.text.startswith(wording.still_here) and caller.acts[-1].act == "nudge"


def test_a_wait_cue_counts_only_when_the_turn_ends_on_it(tasks) -> None:
    caller = card_caller(tasks)
    caller.hear("One moment, let me check that for you.")
    assert caller.acts[-1].act == "wait"
    caller.hear("Let me pull that up. That comes from your account records.")
    assert caller.acts[-1].act == "nudge"  # it was told something, not asked to wait
    caller.hear("Thanks for waiting. Let me check.")
    assert caller.acts[-1].act == "wait"


def test_names_the_card_it_wants_when_offered_the_other(tasks) -> None:
    caller = card_caller(tasks)
    caller.hear("Your bill shows a balance of $222.89.")
    reply = caller.hear("Shall I charge $222.89 to the card ending 4242?")
    assert caller.acts[-1].act == "object" and "0002" in reply.text
    assert caller.requests[0].agreed == set()  # the brief's first card comes first


def test_an_unknown_question_after_a_wait_cue_is_not_a_wait(tasks) -> None:
    caller = card_caller(tasks)
    caller.hear("Let me pull that up. What's your date of birth?")
    assert caller.acts[-1].act == "dont_know"


@pytest.mark.parametrize(
    ("line", "act"),
    [
        ("Is your account number 4417-90781?", "readback_right"),
        ("One second. Is your account number 4417-90782?", "readback_wrong"),
        ("Sure thing! Is the name on the account Dana Whitman?", "readback_wrong"),
    ],
)
def test_a_yes_no_question_carrying_a_detail_is_a_read_back(tasks, line, act) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=5)
    caller.open()
    caller.hear(line)
    assert caller.acts[-1].act == act


def test_a_yes_no_question_on_the_email_confirms_it(tasks) -> None:
    scene = next(s for s in SCENES if s.name == "email read-back")
    caller = caller_at(tasks, scene, "calm")
    caller.hear("Okay. Is dana dot whitfield at example dot com still the best email for you?")
    assert caller.acts[-1].act == "agree"


def test_a_yes_no_question_on_the_card_alone_is_answered_with_the_card(tasks) -> None:
    caller = card_caller(tasks)
    reply = caller.hear("One second. Is the card ending 0002 okay to use?")
    assert caller.acts[-1].act == "private_fact" and "0002" in reply.text


@pytest.mark.parametrize(
    "line",
    [
        "Anything else, or are we all set?",
        "What's the reason for your call today?",
        "Is that everything for today?",
        "Thanks for waiting. Can I help you with anything more?",
    ],
)
def test_anything_else_in_other_words(tasks, line) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=5)
    caller.open()
    caller.hear("Can I have your account number, full name, and your postal code?")
    reply = caller.hear(line)
    assert caller.acts[-1].act == "request" and "owe" in reply.text


def test_is_that_all_right_is_not_is_that_all(tasks) -> None:
    scene = next(s for s in SCENES if s.name == "email read-back")
    caller = caller_at(tasks, scene, "calm")
    caller.hear(
        "That's paperless billing to dana dot whitfield at example dot com. Is that all right?"
    )
    assert caller.acts[-1].act == "agree"


def test_a_question_the_agent_took_back_is_not_answered_after_why(tasks) -> None:
    caller = card_caller(tasks, "sceptic")
    caller.hear("Which card would you like to use?")
    caller.hear("Shall I charge $222.89 to the card ending 0002?")
    assert caller.acts[-1].act == "why"
    caller.hear("No problem. Nothing has been charged.")
    assert caller.acts[-1].act != "agree" and caller.requests[0].agreed == set()
    caller.hear("Which card would you like to use?")
    assert "0002" in caller.acts[-1].text  # still the first card: it was never tried


def test_a_read_back_cut_off_mid_code_is_corrected_when_its_start_is_wrong(tasks) -> None:
    caller = ScriptedCaller(tasks["t-balance-pay"], rng=5)
    caller.open()
    reply = caller.hear("To confirm: account nine seven three nine dash seven")
    assert caller.acts[-1].act == "readback_wrong" and "4417-90781" in reply.text
    caller.hear("To confirm: account four four one seven dash nine")
    assert caller.acts[-1].act != "readback_wrong"  # right so far: nothing to correct
