"""``cascade``: the local voice stack, ears, a text agent and a voice, on a duplex line.

It hears the line with the audio channel's detector run as a stream (Silero behind the
loudness gate, Pipecat's defaults; on a band-limited line Silero's release model, as the
line's ``detector_settings`` say), and its end-of-turn rule is the detector's stop:
``stop_s`` (0.8 s) without voiced windows ends the caller's turn. Whisper tiny.en
recognises the turn (1.0 s of pre-roll, as the audio channel gives it); a turn with no
words is dropped. A text agent of the registry makes the decisions (``reference`` by
default; ``cascade:<stack>`` puts another behind the same ears and voice); each decision
is charged ``decision_s`` on the call's clock (a modelled cost: the simulated clock
does not count compute). Its words are spoken by Piper. It is interruptible: when its
detector confirms speech while it is talking, it stops at once and tells the text agent
what it had said (``info["agent_cut"]``, as the text and audio channels do).

Tool calls go to the line as actions; their results come back in the next step and go
to the text agent as a text call gives them. ``end_call`` is sent once its last words
have been spoken.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vamos_env.actions import ActionError, EndCall, Say, ToolCallAction, parse_action
from vamos_env.channel.audio import engines
from vamos_env.channel.audio.backgrounds import REFERENCE_RMS
from vamos_env.channel.audio.channel import spoken_form
from vamos_env.channel.audio.dsp import RATE, Audio, active_rms
from vamos_env.channel.audio.vad import DetectorSettings
from vamos_env.duplex.engine import FRAME, Recognise, Synthesize, _Tape, tool_observation
from vamos_env.duplex.hearing import Offset, Onset, StreamingDetector
from vamos_env.duplex.line import line_condition
from vamos_env.speech import find_money, render

AGENT_VOICE = engines.Voice()
PRE_ROLL_S = 1.0
POST_ROLL_S = 0.2
DECISION_S = 0.3
_WORDLESS = set(" .,?!-'\"")


_DIGIT_WORDS = [
    "zero",
    "oh",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
]
_DIGIT = rf"(?:\d|{'|'.join(_DIGIT_WORDS)})"
_DIGIT_RUN = re.compile(
    rf"\b{_DIGIT}(?:[ ,]+(?:dash[ ,]+)?{_DIGIT}){{2,}}\b(?![.,]\d)", re.IGNORECASE
)
_NAMES = dict(zip("0123456789", [w for w in _DIGIT_WORDS if w != "oh"], strict=True))


def paced_digits(text: str) -> str:
    """Codes read one digit at a time with a pause after each, as an agent reads an account
    number back over the phone: "five eight two two dash one" becomes "five, eight, two,
    two, dash, one". Piper runs plain digit words together, and a recogniser then merges
    repeated digits ("five eight two two" heard as "582") or hears "four" as "for"."""

    def pace(match: re.Match[str]) -> str:
        words = re.split(r"[ ,]+", match.group())
        return ", ".join(_NAMES.get(w, w) for w in words)

    return _DIGIT_RUN.sub(pace, text)


def money_in_words(text: str) -> str:
    """Amounts said whole, dollars and cents by name ("two hundred fifteen twenty-eight"
    becomes "two hundred fifteen dollars and twenty-eight cents"), as an agent says a
    figure on the phone.

    The reference's short register leaves the units out; Piper says "two hundred fifteen
    twenty-eight" in a way Whisper tiny.en writes as "21528", "sixty-two fifty" as "6 to
    250" (no dollars in either). Written as numerals instead, Piper's phonemizer reads
    "$49.64" as "dollar forty nine point six four", which no agent says. Over 50 figures
    said whole (tests/duplex/test_ear.py), Whisper tiny.en wrote 42 right alone and 45
    packed as the grader reads them."""
    out, last = [], 0
    for mention in find_money(text):
        out += [text[last : mention.start], render.money(mention.value, style="words")]
        last = mention.end
    return "".join(out) + text[last:]


def agent_voice_synthesizer(voice: engines.Voice = AGENT_VOICE) -> Synthesize:
    def say(text: str) -> Audio:
        speech = engines.synthesize(paced_digits(spoken_form(money_in_words(text))), voice)
        return speech * (REFERENCE_RMS / max(active_rms(speech), 1e-9))

    return say


@dataclass
class Compute:
    """Wall seconds the stack spent, by part (for profiles; never on the call's clock)."""

    detect_s: float = 0.0
    recognise_s: float = 0.0
    decide_s: float = 0.0
    synthesize_s: float = 0.0
    turns: int = 0

    def as_dict(self) -> dict[str, float]:
        return {k: round(float(v), 4) for k, v in self.__dict__.items()}


@dataclass
class _Saying:
    text: str
    audio: Audio
    position: int = 0


@dataclass
class CascadeAgent:
    """Detector + Whisper + a text agent + Piper, speaking 20 ms frames."""

    inner: str = "reference"
    decision_s: float = DECISION_S
    settings: DetectorSettings = field(default_factory=DetectorSettings)
    synthesize: Synthesize | None = None
    recognise: Recognise | None = None
    agent: Any = None  # a text agent object to use instead of the registry's ``inner``
    offline = True
    duplex = True

    def __post_init__(self) -> None:
        self._agent: Any = self.agent
        self._say = self.synthesize or agent_voice_synthesizer()
        self._hear: Recognise = self.recognise or engines.transcribe
        self.compute = Compute()
        self.reset({})

    def reset(self, info: Mapping[str, Any]) -> None:
        from vamos_env.agents.base import make_agent

        if info:
            if self._agent is None:
                self._agent = make_agent(self.inner)
            self._agent.reset(info)
        self._info = dict(info)
        # A deployed stack is told its line (Twilio's start message names mu-law at 8 kHz)
        # and tunes its detector to it; the line's name is in the call's info.
        line = line_condition(str(info.get("line") or "wideband"))
        self.ears = StreamingDetector(line.detector_settings(self.settings))
        self.tape = _Tape()
        self.sample = 0
        self._queue: list[_Saying] = []
        self._turns: list[tuple[int, str]] = []  # (due sample, recognised words)
        self._awaiting = False
        self._ending = False
        self._cut: str | None = None
        self.heard: list[str] = []
        # The stack's own account of the call: what it heard and meant to say, and when.
        self.log: list[dict[str, Any]] = []
        self.barge_ins = 0
        self.compute = Compute()

    @property
    def usage(self) -> Any:
        return getattr(self._agent, "usage", None)

    @property
    def speaking(self) -> bool:
        return bool(self._queue)

    def step(
        self, line_audio: Audio, tool_results: list[dict[str, Any]] | None = None
    ) -> tuple[Audio, list[Any]]:
        """Hear the line's frames; answer with as many frames of speech and any actions."""
        began = time.perf_counter()
        self.tape.append(line_audio)
        events = self.ears.feed(line_audio)
        self.compute.detect_s += time.perf_counter() - began
        for event in events:
            if isinstance(event, Onset) and self.speaking:
                self._stop_speaking()
            elif isinstance(event, Offset):
                self._heard(event)
        self.sample += len(line_audio)
        actions: list[Any] = []
        if tool_results and self._awaiting:
            self._awaiting = False
            self._decide(tool_observation(tool_results), actions)
        while not self._awaiting and not self._ending and self._turns:
            if self._turns[0][0] > self.sample:
                break
            texts = []
            while self._turns and self._turns[0][0] <= self.sample:
                texts.append(self._turns.pop(0)[1])
            self._decide("\n".join(texts), actions)
        out = self._speak(len(line_audio))
        if self._ending and not self.speaking and not self._awaiting:
            actions.append(EndCall())
            self._ending = False
        return out, actions

    # -- ears --------------------------------------------------------------------------------
    def _heard(self, event: Offset) -> None:
        a = event.start - round(PRE_ROLL_S * RATE)
        b = event.end + round(POST_ROLL_S * RATE)
        began = time.perf_counter()
        text = self._hear(self.tape.slice(a, b)).strip()
        self.compute.recognise_s += time.perf_counter() - began
        if not text or set(text) <= _WORDLESS:
            return
        self.heard.append(text)
        self.log.append({"time_s": round(event.at / RATE, 3), "heard": text})
        self._turns.append((event.at + round(self.decision_s * RATE), text))

    def _stop_speaking(self) -> None:
        saying = self._queue[0]
        words = saying.text.split()
        share = saying.position / max(len(saying.audio), 1)
        self._cut = " ".join(words[: int(len(words) * share)])
        self.log.append({"time_s": round(self.sample / RATE, 3), "cut": self._cut})
        self._queue.clear()
        self.barge_ins += 1

    # -- decisions ---------------------------------------------------------------------------
    def _decide(self, observation: str, actions: list[Any]) -> None:
        info = dict(self._info)
        if self._cut is not None:
            info["agent_cut"] = self._cut
            self._cut = None
        began = time.perf_counter()
        raw = self._agent.act(observation, info)
        self.compute.decide_s += time.perf_counter() - began
        self.compute.turns += 1
        parsed = parse_action(raw)
        if isinstance(parsed, ActionError):
            actions.append(raw)  # the line answers with the error, as a text call would
            return
        for action in parsed.actions:
            if isinstance(action, Say):
                began = time.perf_counter()
                audio = self._say(action.text)
                self.compute.synthesize_s += time.perf_counter() - began
                self._queue.append(_Saying(action.text, audio))
                self.log.append({"time_s": round(self.sample / RATE, 3), "said": action.text})
            elif isinstance(action, ToolCallAction):
                actions.append(action)
                self._awaiting = True
            elif isinstance(action, EndCall):
                self._ending = True

    # -- voice -------------------------------------------------------------------------------
    def _speak(self, samples: int) -> Audio:
        out = np.zeros(samples)
        filled = 0
        while filled < samples and self._queue:
            saying = self._queue[0]
            piece = saying.audio[saying.position : saying.position + samples - filled]
            out[filled : filled + len(piece)] = piece
            filled += len(piece)
            saying.position += len(piece)
            if saying.position >= len(saying.audio):
                self._queue.pop(0)
        return out


def __getattr__(name: str) -> Any:
    """``cascade_over_<stack>``: a factory of the cascade with that text agent behind it
    (how ``cascade:<stack>`` reaches the runner's entry points)."""
    prefix = "cascade_over_"
    if name.startswith(prefix):
        inner = name[len(prefix) :]

        def factory(**kwargs: Any) -> CascadeAgent:
            return CascadeAgent(inner=inner, **kwargs)

        factory.offline = inner in _OFFLINE  # type: ignore[attr-defined]
        return factory
    raise AttributeError(name)


_OFFLINE = {"reference", "leaky", "eager", "promiser", "sloppy", "naive"}

__all__ = ["FRAME", "CascadeAgent", "agent_voice_synthesizer"]
