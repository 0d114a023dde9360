"""The duplex engine on constructed audio: barge-in both ways, and determinism from the seed.

Speech is real (Piper, the Silero detector), recognition is a stand-in (these tests are
about timing, not words), and callers and agents are scripted, so each test knows when
everybody speaks.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from vamos_env.callers.base import Deviation, HangUp, Utterance
from vamos_env.channel.audio import engines
from vamos_env.duplex.cascade import CascadeAgent, agent_voice_synthesizer
from vamos_env.duplex.engine import (
    FRAME,
    JOIN_GAP_S,
    JOIN_MAX_S,
    PRE_ROLL_S,
    DuplexCall,
    _NoSpeechChannel,
    caller_voice_synthesizer,
    close_groups,
)
from vamos_env.duplex.line import line_condition
from vamos_env.duplex.turntaking import turn_taking
from vamos_env.episode import Episode

pytestmark = pytest.mark.audio
RATE = 16_000
LONG = (
    "I have been with you for a very long time and I want to talk about my bill, "
    "which looks far too high this month compared with the one I had last month."
)
MONOLOGUE = " ".join(
    [
        "Thank you for calling. Let me tell you about every plan we offer this season,",
        "starting with the fixed rate plan, then the variable plan, then the green plan,",
        "then the budget billing plan, and finally the plan for small businesses, which",
        "has its own terms and conditions that I will now read to you one by one.",
    ]
)


class ScriptCaller:
    """Opens with a line, answers every turn with the next reply, then says goodbye."""

    def __init__(self, opening: str, replies: list[str]) -> None:
        self.opening, self.replies = opening, list(replies)
        self.heard: list[str] = []
        self.deviations: list[Deviation] = []

    def open(self) -> Utterance:
        return Utterance(self.opening)

    def hear(self, text: str) -> Utterance | HangUp:
        self.heard.append(text)
        return Utterance(self.replies.pop(0)) if self.replies else HangUp("done", "Bye.")

    def goal_met(self) -> bool:
        return False


def heard_words(audio: np.ndarray) -> str:
    """A stand-in recogniser: words, if there is any audio."""
    return "words" if len(audio) else ""


def make_call(
    caller: ScriptCaller,
    persona: str,
    *,
    background: str = "clean",
    line: str = "wideband",
    seed: int = 0,
) -> DuplexCall:
    session = SimpleNamespace(trace=[], call=lambda name, arguments: {"ok": True})
    episode = Episode("constructed", session, caller, _NoSpeechChannel(), 10**6)
    return DuplexCall(
        episode,
        background=background,
        rng=np.random.default_rng(seed),
        level_db=25.0,
        line=line_condition(line),
        taking=turn_taking(persona),
        synthesize=caller_voice_synthesizer(engines.CALLER),
        recognise=heard_words,
        max_call_s=40.0,
    )


def scripted_agent(clips: list[tuple[float, np.ndarray]]) -> Callable[[int], np.ndarray]:
    """An agent that plays each clip from its start time, whatever it hears."""
    track = np.zeros(int(60 * RATE))
    for start, clip in clips:
        at = int(start * RATE)
        track[at : at + len(clip)] += clip
    return lambda sample: track[sample : sample + FRAME]


def run_scripted(call: DuplexCall, agent: Callable[[int], np.ndarray], seconds: float) -> None:
    while not call.ended and call.now_s < seconds:
        call.step(agent(call.sample))
    call.finish()


class Monologue:
    """A text agent that answers the first turn with a long monologue, then briefly."""

    def __init__(self) -> None:
        self.observations: list[str] = []
        self.cuts: list[str] = []

    def reset(self, info: Mapping[str, Any]) -> None:
        pass

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self.observations.append(observation)
        if info and "agent_cut" in info:
            self.cuts.append(str(info["agent_cut"]))
        text = MONOLOGUE if len(self.observations) == 1 else "Yes, go on."
        return {"type": "say", "text": text}


def run_cascade(call: DuplexCall, agent: CascadeAgent, seconds: float) -> None:
    agent.reset({"persona": "test"})
    audio, results = np.zeros(FRAME), []
    while not call.ended and call.now_s < seconds:
        out, actions = agent.step(audio, results)
        step = call.step(out, actions)
        audio, results = step.audio, step.tool_results
    call.finish()


def test_the_caller_cuts_in_and_the_cascade_stops_talking() -> None:
    caller = ScriptCaller(
        "Hello, I have a question about my bill.", ["Stop, I only want my balance."]
    )
    call = make_call(caller, "angry")  # cuts in after 5 s of unbroken agent speech
    agent = CascadeAgent(agent=Monologue(), recognise=heard_words)
    run_cascade(call, agent, 30.0)
    kinds = [e.kind for e in call.events]
    assert "caller_cut_in" in kinds
    cut_in = next(e.time_s for e in call.events if e.kind == "caller_cut_in")
    m = call.metrics()
    assert agent.barge_ins >= 1
    assert m.barge_ins >= 1
    assert m.barge_in_tail_max_s is not None and m.barge_in_tail_max_s < 0.6
    first_agent = call.agent_segments()[0]
    assert first_agent[1] - first_agent[0] == pytest.approx(cut_in - first_agent[0], abs=0.8)
    # The text agent was told what it had said before it was cut.
    inner = agent._agent
    assert inner.cuts and 0 < len(inner.cuts[0].split()) < len(MONOLOGUE.split())
    assert next(e["said"] for e in agent.log if "said" in e) == MONOLOGUE
    assert any(e.get("cut") == inner.cuts[0] for e in agent.log)


def test_an_agent_that_ignores_the_caller_keeps_talking_after_the_cut_in() -> None:
    caller = ScriptCaller(
        "Hello, I have a question about my bill.", ["Stop, I only want my balance."]
    )
    call = make_call(caller, "angry")
    monologue = agent_voice_synthesizer()(MONOLOGUE)
    run_scripted(call, scripted_agent([(4.0, monologue)]), 4.0 + len(monologue) / RATE + 2.0)
    m = call.metrics()
    assert "caller_cut_in" in [e.kind for e in call.events]
    assert m.barge_ins == 1
    assert m.barge_in_tail_max_s is not None and m.barge_in_tail_max_s > 5.0
    assert m.overlap_s > 1.0


def test_the_agent_talks_over_a_calm_caller_who_yields() -> None:
    caller = ScriptCaller(LONG, [])
    call = make_call(caller, "calm")
    interjection = agent_voice_synthesizer()("Sorry, can I have your account number first?")
    run_scripted(call, scripted_agent([(3.0, interjection)]), 10.0)
    yielded = [e for e in call.events if e.kind == "caller_yielded"]
    assert len(yielded) == 1
    assert 3.0 < yielded[0].time_s < 3.6  # the detector confirms the agent in about 0.2 s
    first = call.caller_segments[0]
    assert first[0] == pytest.approx(1.0, abs=0.2) and first[1] == pytest.approx(yielded[0].time_s)
    turn = next(t for t in call.episode.transcript.turns if t.speaker == "caller")
    assert turn.cut and 0 < len(turn.text.split()) < len(LONG.split())
    assert LONG.startswith(turn.text)
    overlap_s, _ = call.metrics().overlap_s, None
    assert overlap_s < 0.8


def test_an_angry_caller_does_not_yield_and_the_overlap_shows_it() -> None:
    caller = ScriptCaller(LONG, [])
    call = make_call(caller, "angry")
    interjection = agent_voice_synthesizer()("Sorry, can I have your account number first?")
    run_scripted(call, scripted_agent([(3.0, interjection)]), 12.0)
    assert not [e for e in call.events if e.kind == "caller_yielded"]
    turn = next(t for t in call.episode.transcript.turns if t.speaker == "caller")
    assert turn.text == LONG and not turn.cut
    assert call.metrics().overlap_s > 1.5


def _line_audio(seed: int) -> tuple[np.ndarray, list[Any], Any]:
    caller = ScriptCaller("Hi, I need my balance please.", ["It is four nine four four."])
    call = make_call(caller, "calm", background="street", line="g711-loss5", seed=seed)
    reply = agent_voice_synthesizer()("Your account number, please?")
    agent = scripted_agent([(4.5, reply)])
    received = []
    while not call.ended and call.now_s < 12.0:
        received.append(call.step(agent(call.sample)).audio)
    call.finish()
    return np.concatenate(received), [e.as_dict() for e in call.events], call.metrics()


def test_a_duplex_call_is_determined_by_its_seed() -> None:
    audio, events, metrics = _line_audio(3)
    again, events_again, metrics_again = _line_audio(3)
    other, _, _ = _line_audio(4)
    assert np.array_equal(audio, again)
    assert events == events_again and metrics == metrics_again
    assert not np.array_equal(audio, other)
    assert metrics.latencies_s  # the agent answered the caller's first words


def test_the_transcript_orders_turns_on_the_clock_and_splits_speech_at_tool_calls() -> None:
    caller = ScriptCaller("Hi, I need my balance please.", [])
    call = make_call(caller, "angry")  # angry: no yield, and no cut-in within 5 s
    heard: list[int] = []

    def recognise(audio: np.ndarray) -> str:
        heard.append(len(audio))
        return f"piece {len(heard)}"

    call._recognise = recognise
    clip = agent_voice_synthesizer()(
        "Let me look that up for you now, it will take a moment, thank you for waiting."
    )
    assert len(clip) / RATE > 3.0
    agent = scripted_agent([(5.0, clip)])
    tool = {"type": "tool_call", "name": "get_balance", "arguments": {}}
    while not call.ended and call.now_s < 5.0 + len(clip) / RATE + 2.0:
        actions = [tool] if abs(call.now_s - 6.0) < 1e-9 else []
        call.step(agent(call.sample), actions)
    call.finish()
    turns = call.episode.transcript.turns
    assert [t.index for t in turns] == list(range(len(turns)))
    kinds = [(t.speaker, t.text if t.speaker != "tool" else t.tool_call.name) for t in turns]
    first, second = (k for k in kinds if k[0] == "agent")
    assert kinds.index(first) < kinds.index(("tool", "get_balance")) < kinds.index(second)
    assert kinds[0] == ("caller", "Hi, I need my balance please.")
    times = {t["turn"]: t["start_s"] for t in call.timeline()}
    tool_turn = next(t for t in turns if t.speaker == "tool")
    assert times[tool_turn.index] == pytest.approx(6.0)
    assert sorted(times.values()) == [times[t.index] for t in turns]


class PatientCaller(ScriptCaller):
    """Holds its cut-in while what it heard of the agent's turn so far says ``holds_on``;
    a cut-in reaches it through ``interrupt``, not ``hear``."""

    def __init__(self, opening: str, replies: list[str], holds_on: str) -> None:
        super().__init__(opening, replies)
        self.holds_on = holds_on
        self.asked: list[str] = []
        self.interrupted: list[str] = []

    def holds_cut_in(self, text: str) -> bool:
        self.asked.append(text)
        return self.holds_on in text

    def interrupt(self, text: str) -> Utterance | HangUp:
        self.interrupted.append(text)
        return Utterance("Get to the point.")


def _monologue_call(caller: PatientCaller, recognise: Callable[[np.ndarray], str]) -> DuplexCall:
    call = make_call(caller, "angry")
    call._recognise = recognise
    monologue = agent_voice_synthesizer()(f"{MONOLOGUE} {MONOLOGUE}")
    assert len(monologue) / RATE > 20.0
    run_scripted(call, scripted_agent([(4.0, monologue)]), 24.0)
    return call


def test_a_cut_in_reaches_the_caller_as_an_interruption_with_what_it_heard() -> None:
    caller = PatientCaller("Hello, I have a question about my bill.", [], holds_on="account")
    call = _monologue_call(caller, heard_words)
    cut_in = next(e.time_s for e in call.events if e.kind == "caller_cut_in")
    assert cut_in == pytest.approx(4.0 + 5.0, abs=0.5)  # the angry caller's 5 s
    assert caller.interrupted == ["words"] and caller.heard == []
    assert "caller_held" not in [e.kind for e in call.events]


def test_a_caller_hearing_its_details_read_holds_its_cut_in_then_cuts_in() -> None:
    # The agent's turn, as heard so far, reads its account back: the caller listens on,
    # asking itself again each second, until three times its patience has passed.
    caller = PatientCaller("Hello, I have a question about my bill.", [], holds_on="account")
    call = _monologue_call(caller, lambda audio: "to confirm your account" if len(audio) else "")
    held = [e.time_s for e in call.events if e.kind == "caller_held"]
    cut_in = next(e.time_s for e in call.events if e.kind == "caller_cut_in")
    assert held[0] == pytest.approx(4.0 + 5.0, abs=0.5)
    assert all(b - a == pytest.approx(1.0, abs=0.05) for a, b in itertools.pairwise(held))
    assert cut_in == pytest.approx(4.0 + 15.0, abs=0.5)
    assert len(caller.interrupted) == 1 and caller.heard == []


def _over_g711(audio: np.ndarray) -> np.ndarray:
    """Audio as a Twilio media stream carries it: mu-law at 8 kHz, back to 16 kHz."""
    from vamos_env.bridges.audio import Resampler, mulaw_audio, mulaw_bytes

    padded = np.concatenate([audio, np.zeros(RATE // 2)])
    return Resampler(8_000, RATE)(mulaw_audio(mulaw_bytes(Resampler(RATE, 8_000)(padded))))


@pytest.mark.parametrize("agent_line", [None, "g711"])
def test_the_caller_hears_the_first_words_of_an_agent_on_a_g711_wire(
    agent_line: str | None,
) -> None:
    # The agent's audio crossed a G.711 wire (a Twilio bridge) into a wideband call. Tuned to
    # the wide line, the caller's detector confirms the speech about half a second late and
    # its clip starts after the first word; told the agent's line, it starts before it.
    caller = ScriptCaller("Hello, I have a question about my bill.", ["The postal code."])
    call = make_call(caller, "calm")
    if agent_line is not None:
        call = DuplexCall(
            call.episode,
            background="clean",
            rng=np.random.default_rng(0),
            level_db=25.0,
            line=line_condition("wideband"),
            agent_line=line_condition(agent_line),
            taking=turn_taking("calm"),
            synthesize=caller_voice_synthesizer(engines.CALLER),
            recognise=heard_words,
            max_call_s=40.0,
        )
    clip = _over_g711(
        agent_voice_synthesizer()(
            "Thanks. And one of: last four of a card on file, your postal code, or last bill"
            " amount?"
        )
    )
    speech_at = 5.0 + np.nonzero(np.abs(clip) > 0.02)[0][0] / RATE
    run_scripted(call, scripted_agent([(5.0, clip)]), 14.0)
    (start, _end), *_ = call.agent_stretches
    clip_from = start / RATE - PRE_ROLL_S  # the caller's ear is handed audio from here
    if agent_line is None:
        assert clip_from > speech_at + 0.1  # "Thanks." is lost
    else:
        assert call.summary()["agent_line"] == "g711"
        assert clip_from < speech_at


def _trimmed(audio: np.ndarray) -> np.ndarray:
    loud = np.nonzero(np.abs(audio) > 0.01)[0]
    return audio[loud[0] : loud[-1] + 1]


@pytest.mark.parametrize(("missed", "turns"), [("one one one", 1), ("one one one one", 2)])
def test_a_sentence_the_detector_stopped_inside_is_one_agent_turn_for_the_grader(
    missed: str, turns: int
) -> None:
    # The middle of the agent's sentence goes by below the detector's gate (as slow digits
    # can on a G.711 line), so its stretches stop inside the sentence. The grader still
    # reads one turn: "the card ending" and "seven" apart would be two turns, and neither
    # reads the card back. When the pause is long enough for the caller to start talking
    # in it, the turns stay apart.
    caller = ScriptCaller("Hello, I have a question about my bill.", ["Yes.", "Yes."])
    call = make_call(caller, "calm")
    say = agent_voice_synthesizer()
    start, middle, end = (
        _trimmed(say(t)) for t in ("Shall I charge the card ending", missed, "seven?")
    )
    sentence = np.concatenate([start, middle * 0.002, end])
    run_scripted(call, scripted_agent([(5.0, sentence)]), 12.0)
    assert len(call.agent_stretches) == 2  # the detector stopped inside the sentence
    agent = [t for t in call.episode.transcript.turns if t.speaker == "agent"]
    assert len(agent) == turns


def test_close_groups_join_spans_a_short_quiet_pause_apart() -> None:
    s = RATE
    spans = [(0, 4 * s), (5 * s, 6 * s), (9 * s, 10 * s), (11 * s, 12 * s)]
    assert close_groups(spans) == [[0, 1], [2, 3]]
    somebody_spoke = lambda end, start: not (end < 11 * s - 1 < start)  # noqa: E731
    assert close_groups(spans, somebody_spoke) == [[0, 1], [2], [3]]


def test_stretches_a_short_pause_apart_are_heard_as_one_clip() -> None:
    # The detector stops inside a sentence where it misses a few words (digits read slowly
    # on a G.711 line); the caller hears the sentence whole, not two halves.
    call = make_call(ScriptCaller("Hello.", []), "calm")
    s = RATE
    call._unanswered = [
        (0, 4 * s, True),
        (4 * s + int((JOIN_GAP_S - 0.1) * s), 6 * s, True),  # a pause inside the sentence
        (6 * s + int((JOIN_GAP_S + 0.1) * s), 8 * s, False),  # the next sentence
        (8 * s + s // 2, 8 * s + int(JOIN_MAX_S * s), True),  # would make one clip too long
    ]
    assert call._joined() == [
        (0, 6 * s, True),
        (6 * s + int((JOIN_GAP_S + 0.1) * s), 8 * s, False),
        (8 * s + s // 2, 8 * s + int(JOIN_MAX_S * s), True),
    ]
