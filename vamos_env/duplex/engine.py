"""The duplex call engine: both sides stream 20 ms frames on a simulated clock.

A ``DuplexCall`` advances the call one frame at a time. In each frame:

1. the caller's side gives its next frame of speech (silence when it is not talking);
2. the call's background gives its next frame (one ``BackgroundStream`` for the whole
   call, never restarted), is added under it, and the mix is dithered;
3. the mix goes down the line to the agent (``Line``: the call's line condition) and is
   what the agent receives: caller speech plus background, never text;
4. the agent's frame for the same instant comes up the line the other way and reaches
   the caller's hearing: the audio channel's detector, run as a stream, and Whisper over
   each stretch of the agent's speech the caller heard.

The agent sends its frame for instant *k* after it has received the line's frames up to
*k - 1* (the step returns the line audio of the frames it advanced), so a frame of
pipeline delay is built in. Tool calls run at the instant they arrive, through the same
``Episode`` tool path as text calls (argument limits, storable text, the trace), and
their results come back in the same step.

The caller's turn-taking (``turntaking``): it answers ``reply_gap_s`` after its detector
decides the agent has stopped; it cuts in on an agent that has spoken without a break
for ``cut_in_after_s``; if it ``yields``, it stops talking when the agent starts over it
(the words it had not said are lost); after ``nudge_after_s`` of silence it speaks again.
It hears the agent only while it is not talking itself. Everything it hears is passed to
its brief (``Caller.hear``) as one turn; its words come out through the persona's voice.

The caller cuts in on unbroken agent speech after its patience, unless what it has heard
of the turn so far is something a person listens to the end of (its details read back, an
offer, figures: ``holds_cut_in``); cutting in, it answers as an interruption with what it
heard so far (``interrupt``), never as if it had heard a whole turn.

The transcript the grader reads is built on the same clock: the caller's words as
spoken (cut where it yielded), the agent's words as the grader's ear recognised them from
the agent's audio once the call is over (every stretch of it, heard by the caller or not,
packed into windows with word times: ``ear.py``), and the tool calls at the instant they
ran, ordered by time. Words of a stretch that spans a tool call go to either side of it by
their aligned start, so every word stands on the right side of every tool call
(docs/grading.md, "Duplex calls").

A caller played by a model session (``caller_stream``, a ``model_caller.ModelCaller``)
replaces steps 1 and 4 on the caller's side: each frame the session hears what came up
the line in the frame before and answers with its frame of voice; it takes turns by
itself (none of the rules above), its transcript gives the caller's turns, and its
speech for the metrics is where its voice carried speech. The room, the line, the agent's
side, the tools and the grading are the same.

Nothing reads the wall clock; the call is reproducible from its generators (a model
caller's session is not, and holds the call to the wall clock).
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vamos_env.actions import ActionError, Say, parse_action
from vamos_env.callers.base import Caller, HangUp, Utterance
from vamos_env.channel.audio import engines
from vamos_env.channel.audio.backgrounds import REFERENCE_RMS, BackgroundStream
from vamos_env.channel.audio.channel import spoken_form
from vamos_env.channel.audio.dsp import RATE, Audio, active_rms, dither, ratio_for_level
from vamos_env.channel.audio.vad import DetectorSettings, SpeechDetector
from vamos_env.duplex.ear import TimedRecognise, Word, code_digits, joined, stretch_words
from vamos_env.duplex.hearing import Offset, Onset, StreamingDetector
from vamos_env.duplex.line import Line, LineCondition
from vamos_env.duplex.metrics import CallMetrics, Segment, call_metrics, merged
from vamos_env.duplex.turntaking import TurnTaking
from vamos_env.episode import Episode
from vamos_env.types import Turn

FRAME_S = 0.02
FRAME = 320  # samples per 20 ms frame at 16 kHz
MAX_CALL_S = 900.0
# Roll around a stretch of the agent's speech when it is recognised: its audio is clean,
# so the detector's onset is close and a short roll keeps the previous stretch out.
PRE_ROLL_S = 0.3
POST_ROLL_S = 0.2
MIN_HEARD_S = 0.25  # shorter scraps of agent speech (after the caller stopped) are not heard
SPLIT_MARGIN_S = 0.25  # a tool call this close to a stretch's edge does not split it
# Stretches of agent speech at most this far apart are heard as one clip: the detector
# stops inside a sentence where it misses a few words (digits read slowly on a G.711 line),
# and each half alone is misheard ("the card ending one?" and "7." for "1-1-1-7").
JOIN_GAP_S = 1.5
JOIN_MAX_S = 25.0  # ...while the clip stays inside one Whisper window
AGENT_SPEECH_DBFS = -45.0  # an agent frame louder than this carries speech (ground truth)
AGENT_GAP_S = 0.5  # pauses shorter than this inside the agent's speech are not gaps
TRANSFER_GRACE_S = 10.0  # the agent's closing words after a transfer must start by then
HANG_UP_TAIL_S = 0.5
# A caller due to cut in that hears the agent reading its details back waits: it listens
# again every HOLD_RECHECK_S, for at most HOLD_MAX times its patience in all.
HOLD_RECHECK_S = 1.0
HOLD_MAX = 3.0

Synthesize = Callable[[str], Audio]
Recognise = Callable[[Audio], str]


class _Tape:
    """A growing float32 recording of one stream of the call."""

    def __init__(self) -> None:
        self._data = np.zeros(RATE * 60, dtype=np.float32)
        self.length = 0

    def append(self, frame: Audio) -> None:
        end = self.length + len(frame)
        if end > len(self._data):
            grown = np.zeros(max(end, 2 * len(self._data)), dtype=np.float32)
            grown[: self.length] = self._data[: self.length]
            self._data = grown
        self._data[self.length : end] = frame
        self.length = end

    def slice(self, start: int, end: int) -> Audio:
        start, end = max(0, start), min(self.length, end)
        return np.asarray(self._data[start:end], dtype=np.float64)

    def array(self) -> Audio:
        return self.slice(0, self.length)


class _NoSpeechChannel:
    """The episode's channel in a duplex call: speech never goes through it."""

    def to_agent(self, caller_text: str) -> list[str]:
        raise RuntimeError("a duplex call carries the caller's speech as audio")

    def to_caller(self, agent_text: str) -> str:
        raise RuntimeError("a duplex call carries the agent's speech as audio")


@dataclass
class _Speech:
    """A caller utterance being played."""

    text: str
    audio: Audio
    start: int  # call sample of its first sample
    speech: tuple[int, int]  # its voiced samples within ``audio``
    turn: Turn | None
    final: bool = False  # the caller's last words (it hung up)
    position: int = 0

    @property
    def done(self) -> bool:
        return self.position >= len(self.audio)


@dataclass(frozen=True)
class Event:
    """Something that happened on the call, at ``time_s`` on its clock."""

    kind: str
    time_s: float
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "time_s": round(self.time_s, 3), "detail": self.detail}


@dataclass
class StepResult:
    """What one engine step hands back to the agent."""

    audio: Audio  # the line's 16 kHz audio for the frames advanced
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    ended: bool = False
    truncated: bool = False


def caller_voice_synthesizer(voice: engines.Voice) -> Synthesize:
    """The persona's voice at the reference speech level (codes digit by digit)."""

    def say(text: str) -> Audio:
        speech = engines.synthesize(spoken_form(text), voice)
        return speech * (REFERENCE_RMS / max(active_rms(speech), 1e-9))

    return say


def voiced_range(audio: Audio, threshold: float = 0.02) -> tuple[int, int]:
    """The first and last sample louder than ``threshold`` of the peak (the speech)."""
    if len(audio) == 0:
        return (0, 0)
    loud = np.nonzero(np.abs(audio) >= threshold * max(float(np.max(np.abs(audio))), 1e-9))[0]
    return (int(loud[0]), int(loud[-1]) + 1) if len(loud) else (0, 0)


class DuplexCall:
    """One full-duplex call in progress, advanced frame by frame."""

    def __init__(
        self,
        episode: Episode,
        *,
        background: str,
        rng: np.random.Generator,
        level_db: float,
        line: LineCondition,
        taking: TurnTaking,
        agent_line: LineCondition | None = None,
        synthesize: Synthesize,
        recognise: Recognise = engines.transcribe,
        grading_ear: TimedRecognise | None = None,
        max_call_s: float = MAX_CALL_S,
        keep_line_audio: bool = False,
        caller_stream: Any = None,
    ) -> None:
        self.episode = episode
        self.caller: Caller = episode.caller
        self.taking = taking
        self.line = line
        self.agent_line = agent_line
        self.max_call_s = max_call_s
        self._synthesize = synthesize
        self._recognise = recognise
        # The grader's ear (``ear.py``); without one the transcript takes the words as the
        # caller's ear recognised each piece.
        self._grading_ear = grading_ear
        room_rng, dither_rng, down_rng, up_rng = rng.spawn(4)
        self.stream = BackgroundStream(background, room_rng, ratio_for_level(level_db))  # type: ignore[arg-type]
        self._dither_rng = dither_rng
        self.line_to_agent = Line(line, down_rng)
        self.line_to_caller = Line(line, up_rng)
        # The agent's audio may have crossed a narrower line than the call's before it came
        # in (a bridge's G.711 wire): the listeners tune to the narrower one. Tuned to a wide
        # line, the detector confirms speech from 8 kHz mu-law half a second late and the
        # caller's ear loses each sentence's first words ("Shall I charge" heard as "By
        # charge", no question asked).
        listening = agent_line if agent_line is not None and agent_line.narrow else line
        self.hearing = StreamingDetector(listening.detector_settings())
        self.sample = 0
        self.events: list[Event] = []
        self.end_reason: str | None = None
        self.truncated = False
        # Tapes: what the agent sent, what the caller heard of it, the room alone, the line.
        self.agent_tape = _Tape()
        self.heard_tape = _Tape()
        self.room_tape = _Tape()
        self.line_tape = _Tape() if keep_line_audio else None
        self.caller_segments: list[Segment] = []  # seconds, ground truth
        self.turn_times: dict[int, float] = {}  # id(turn) -> start seconds
        self.turn_ends: dict[int, float] = {}  # id(caller turn) -> seconds its words ended
        # An outside agent's own services (``ServedTwins``): it runs its tools there, the
        # call watches its call control, and ``finish`` rebuilds its trace from the log.
        self.outside: Any = None
        self.outside_identity: Any = None
        self.rebuilt: list[Any] = []
        self.tool_samples: list[int] = []
        self.agent_stretches: list[tuple[int, int]] = []  # the caller's detector over the agent
        self._recognised: dict[tuple[int, int], str] = {}
        self._speaking: _Speech | None = None
        # Agent speech the caller heard and has not answered: (start, end, whether the
        # agent had finished it, i.e. stopped on its own rather than being talked over).
        self._unanswered: list[tuple[int, int, bool]] = []
        self._deaf_until = 0
        self._reply_due: int | None = round(taking.opens_after_s * RATE)
        self._opened = False
        self._cut_in_at = -1  # the agent stretch the caller last cut in on (its start)
        self._hold_until = 0  # a cut-in held back is reconsidered from here
        self._quiet_since = 0
        self._transfer_at: int | None = None
        self._hung_up = False
        # What the caller's ear made of the agent each time it answered (for diagnosis: the
        # grader reads the agent's audio with its own ear, ``finish``).
        self.caller_heard: list[tuple[float, str]] = []
        # A caller played by a model session (``model_caller.ModelCaller``): its voice
        # frames come from the session, which hears the line itself (no synthesis, no
        # turn-taking rules, no caller ear). Its voice is taped to find its speech.
        self.caller_stream = caller_stream
        self.voice_tape = _Tape() if caller_stream is not None else None
        self._last_heard = np.zeros(FRAME)
        self._hang_up_at: int | None = None
        self._last_caller_turn: Turn | None = None

    # -- the clock -----------------------------------------------------------------------
    @property
    def now_s(self) -> float:
        return self.sample / RATE

    @property
    def ended(self) -> bool:
        return self.end_reason is not None

    def _event(self, kind: str, detail: str = "", at: int | None = None) -> Event:
        event = Event(kind, (self.sample if at is None else at) / RATE, detail)
        self.events.append(event)
        return event

    # -- one step ------------------------------------------------------------------------
    def step(self, agent_audio: Audio, actions: Sequence[Any] = ()) -> StepResult:
        """Run the agent's actions now, then advance one frame per ``FRAME`` samples of its
        audio (a whole number of frames); return the line audio of those frames."""
        if self.ended:
            raise RuntimeError("the call has ended")
        if len(agent_audio) % FRAME:
            raise ValueError(f"agent audio: expected whole 20 ms frames ({FRAME} samples)")
        first = len(self.events)
        result = StepResult(np.zeros(len(agent_audio)))
        for action in actions:
            self._act(action, result)
            if self.ended:
                break
        if self.outside is not None and not self.ended:
            self._outside_control()
        out = result.audio
        for k in range(len(agent_audio) // FRAME):
            if self.ended:
                break
            out[k * FRAME : (k + 1) * FRAME] = self._frame(agent_audio[k * FRAME : (k + 1) * FRAME])
        result.events = self.events[first:]
        result.ended, result.truncated = self.ended, self.truncated
        return result

    def _act(self, raw: Any, result: StepResult) -> None:
        parsed = parse_action(raw)
        if isinstance(parsed, ActionError) or any(isinstance(a, Say) for a in parsed.actions):
            why = (
                parsed.message
                if isinstance(parsed, ActionError)
                else "'say' is not an action in a duplex call: speak it as audio"
            )
            self.episode.malformed_actions += 1
            result.tool_results.append({"error": f"action not understood: {why}"})
            self._event("action_error", why)
            return
        outcome = self.episode.step(raw)
        for entry in outcome.tool_results:
            self.tool_samples.append(self.sample)
            result.tool_results.append(entry)
            self._event("tool_call", str(entry.get("name")))
        for turn in self.episode.transcript.turns:
            if turn.tool_call is not None and id(turn) not in self.turn_times:
                self.turn_times[id(turn)] = self.now_s
        if getattr(self.episode.session, "transferred", False) and self._transfer_at is None:
            self._transfer_at = self.sample
        if outcome.ended:
            self._end("end_call" if self.episode.end_reason == "end_call" else "turn_limit")

    def _outside_control(self) -> None:
        """An outside agent's call control (the served Twilio route): a ``<Dial>`` is a
        transfer (the call ends with its closing words, as after ``transfer_to_human``), a
        completed status a hang-up."""
        calls = self.outside.calls
        if calls.transferred_to is not None and self._transfer_at is None:
            self._transfer_at = self.sample
            self._event("tool_call", "transfer_to_human")
        elif calls.ended and self._transfer_at is None:
            self._end("end_call")

    def _frame(self, agent_frame: Audio) -> Audio:
        # A model caller's session hears what came up the line in the frame before (a
        # frame of delay, as the agent has) and takes its turns itself: the call only
        # watches the agent. A scripted caller is spoken and hears through ``_listen``.
        streamed = self.caller_stream is not None
        voice = self._session_voice() if streamed else self._caller_frame()
        room = self.stream.take(FRAME)
        to_agent = self.line_to_agent(dither(voice + room, self._dither_rng))
        heard = self.line_to_caller(agent_frame)
        self.agent_tape.append(agent_frame)
        self.heard_tape.append(heard)
        self.room_tape.append(room)
        if self.voice_tape is not None:
            self.voice_tape.append(voice)
        if self.line_tape is not None:
            self.line_tape.append(to_agent)
        self._last_heard = heard
        self.sample += FRAME
        if streamed:
            self._watch(heard)
        else:
            self._listen(heard)
        if not self.ended and self.now_s >= self.max_call_s:
            self.truncated = True
            self._end("turn_limit")
        return to_agent

    # -- a caller played by a model session ------------------------------------------------
    def _session_voice(self) -> Audio:
        stream = self.caller_stream
        voice = np.zeros(FRAME)
        if not stream.ended:
            voice = np.asarray(stream.frame(self._last_heard), dtype=np.float64)
        for said in stream.take_said():
            words = self.episode._clean(said.text)
            last = self._last_caller_turn
            if said.cut and last is not None and (not words or last.text.startswith(words)):
                # A barge-in cut what it was saying: the turn keeps the words played.
                last.text, last.cut = words, True
                self._event("caller_yielded", words, round(said.time_s * RATE))
                continue
            if not words:
                continue
            turn = self.episode._add(speaker="caller", text=words, cut=said.cut)
            self.turn_times[id(turn)] = said.time_s
            self.turn_ends[id(turn)] = said.time_s
            self._last_caller_turn = turn
        if self._hang_up_at is not None or not stream.ended:
            return voice
        if stream.fault is not None:
            self._event("caller_fault", stream.fault)
            self._event("caller_hang_up", "caller_error")
            self._hang_up_at = self.sample
        elif stream.hung_up:
            self._event("caller_hang_up", "caller_ended")
            self._hang_up_at = self.sample
        return voice

    def _watch(self, heard: Audio) -> None:
        """The call's own detector over the agent (its stretches go to the grader's ear),
        the caller's hang-up (its session's fault ends the call at once) and a transfer."""
        for event in self.hearing.feed(heard):
            if isinstance(event, Offset):
                self.agent_stretches.append((event.start, event.end))
        stream = self.caller_stream
        if self._hang_up_at is not None:
            tail = 0 if stream.fault is not None else round(HANG_UP_TAIL_S * RATE)
            if self.sample - self._hang_up_at >= tail:
                self._end("hang_up")
            return
        self._transfer_ended(self.sample)

    # -- the caller's voice --------------------------------------------------------------
    def _caller_frame(self) -> Audio:
        speech = self._speaking
        if speech is None:
            return np.zeros(FRAME)
        out = np.zeros(FRAME)
        piece = speech.audio[speech.position : speech.position + FRAME]
        out[: len(piece)] = piece
        speech.position += FRAME
        if speech.done:
            self._finish_speech(self.sample + FRAME)
        return out

    def _speak(self, text: str, *, final: bool = False, turn: Turn | None = None) -> None:
        audio = self._synthesize(text) if text else np.zeros(0)
        speech = _Speech(text, audio, self.sample, voiced_range(audio), turn, final)
        if turn is not None:
            self.turn_times[id(turn)] = (self.sample + speech.speech[0]) / RATE
        self._speaking = speech
        if len(audio) == 0:
            self._finish_speech(self.sample)

    def _finish_speech(self, at: int, *, yielded: bool = False) -> None:
        speech = self._speaking
        if speech is None:
            return
        self._speaking = None
        a, b = speech.speech
        played = min(b, at - speech.start)
        if played > a:
            self.caller_segments.append(((speech.start + a) / RATE, (speech.start + played) / RATE))
        if speech.turn is not None:
            self.turn_ends[id(speech.turn)] = (speech.start + max(played, a)) / RATE
        if yielded and speech.turn is not None:
            words = speech.text.split()
            share = max(0.0, (played - a) / max(b - a, 1))
            kept = " ".join(words[: int(len(words) * share)])
            speech.turn.text, speech.turn.cut = kept, True
            self._event("caller_yielded", kept, at)
        self._deaf_until = at
        self._quiet_since = at
        if speech.final:
            self._hung_up = True

    # -- the caller's ears ---------------------------------------------------------------
    def _listen(self, heard: Audio) -> None:
        for event in self.hearing.feed(heard):
            if isinstance(event, Onset):
                self._agent_onset(event)
            elif isinstance(event, Offset):
                self._agent_offset(event)
        now = self.sample
        if self._hung_up:
            if now - self._deaf_until >= HANG_UP_TAIL_S * RATE:
                self._end("hang_up")
            return
        if self._transfer_ended(now):
            return
        taking = self.taking
        agent_talking = self.hearing.speaking
        if self._speaking is not None:
            return
        start = self.hearing.segment_start
        begin = max(start, self._deaf_until)
        if (
            agent_talking
            and taking.cut_in_after_s is not None
            and start != self._cut_in_at
            and now - begin >= taking.cut_in_after_s * RATE
            and now >= self._hold_until
        ):
            if self._holds_cut_in(begin, now):
                return
            self._cut_in_at = start
            self._unanswered.append((begin, now, False))
            self._event("caller_cut_in")
            self._reply(interrupting=True)
            return
        if self._reply_due is not None and now >= self._reply_due and not agent_talking:
            self._reply()
            return
        if (
            self._reply_due is None
            and not agent_talking
            and now - self._quiet_since >= taking.nudge_after_s * RATE
        ):
            self._event("caller_nudge")
            self._reply()

    def _holds_cut_in(self, begin: int, now: int) -> bool:
        """Whether the caller, due to cut in, lets the agent go on: it hears what the agent
        has said so far and asks its brief (a caller without ``holds_cut_in`` never holds).
        It holds for at most ``HOLD_MAX`` times its patience, listening again every
        ``HOLD_RECHECK_S``."""
        holds = getattr(self.caller, "holds_cut_in", None)
        limit = self.taking.cut_in_after_s
        if holds is None or limit is None or now - begin >= HOLD_MAX * limit * RATE:
            return False
        if not holds(self._words(begin, now)):
            return False
        self._hold_until = now + round(HOLD_RECHECK_S * RATE)
        self._event("caller_held", f"{(now - begin) / RATE:.2f}")
        return True

    def _agent_onset(self, event: Onset) -> None:
        self._reply_due = None if self._opened else self._reply_due
        self._quiet_since = event.at
        speech = self._speaking
        if (
            speech is not None
            and not speech.final
            and speech.turn is not None
            and self.taking.yields
        ):
            self._finish_speech(event.at, yielded=True)

    def _agent_offset(self, event: Offset) -> None:
        self.agent_stretches.append((event.start, event.end))
        self._quiet_since = event.at
        begin = max(event.start, self._deaf_until)
        if event.end - begin >= MIN_HEARD_S * RATE and self._speaking is None:
            self._unanswered.append((begin, event.end, True))
        if self._unanswered and self._speaking is None and self._opened:
            self._reply_due = event.at + round(self.taking.reply_gap_s * RATE)

    def _transfer_ended(self, now: int) -> bool:
        """After a transfer the call ends with the agent's closing words (or without)."""
        at = self._transfer_at
        if at is None:
            return False
        closed = any(start >= at for start, _ in self.agent_stretches)
        if closed or now - at >= TRANSFER_GRACE_S * RATE:
            self._end("transfer")
            return True
        return False

    # -- the caller's turn ---------------------------------------------------------------
    def _pieces(self, start: int, end: int) -> list[tuple[int, int]]:
        """``[start, end)`` cut at every tool call well inside it."""
        margin = round(SPLIT_MARGIN_S * RATE)
        cuts = [t for t in self.tool_samples if start + margin < t < end - margin]
        edges = [start, *cuts, end]
        return list(itertools.pairwise(edges))

    def _words(self, start: int, end: int) -> str:
        key = (start, end)
        if key not in self._recognised:
            a = start - round(PRE_ROLL_S * RATE)
            b = end + round(POST_ROLL_S * RATE)
            self._recognised[key] = self._recognise(self.heard_tape.slice(a, b)).strip()
        return self._recognised[key]

    def _joined(self) -> list[tuple[int, int, bool]]:
        """The unanswered stretches, those a short pause apart joined into one."""
        spans = [(start, end) for start, end, _ in self._unanswered]
        return [
            (self._unanswered[g[0]][0], self._unanswered[g[-1]][1], self._unanswered[g[-1]][2])
            for g in close_groups(spans)
        ]

    def _heard_text(self) -> str:
        texts = [
            _finished(self._words(a, b)) if finished else self._words(a, b)
            for start, end, finished in self._joined()
            for a, b in self._pieces(start, end)
        ]
        self._unanswered = []
        return " ".join(t for t in texts if t)

    def _reply(self, *, interrupting: bool = False) -> None:
        self._reply_due = None
        if not self._opened:
            self._opened = True
            reply: Utterance | HangUp = self.caller.open()
        else:
            text = self._heard_text()
            self.caller_heard.append((self.now_s, text))
            interrupt = getattr(self.caller, "interrupt", None)
            if interrupting and interrupt is not None:
                # It speaks over an agent still talking: what it heard so far counts, and
                # it answers as an interruption, not as if it had heard a whole turn.
                reply = interrupt(text)
            else:
                reply = self.caller.hear(text)
        if isinstance(reply, HangUp):
            words = self.episode._clean(reply.text) if reply.text else ""
            turn = self.episode._add(speaker="caller", text=words) if words else None
            self._event("caller_hang_up", reply.reason)
            self._speak(words, final=True, turn=turn)
            return
        said = self.episode._clean(reply.text)
        turn = self.episode._add(speaker="caller", text=said)
        self._speak(said, turn=turn)

    # -- the end -------------------------------------------------------------------------
    def _end(self, reason: str) -> None:
        if self.end_reason is None:
            self.end_reason = reason
            self.episode.end_reason = reason  # type: ignore[assignment]
            self._event("call_ended", reason)

    def finish(self) -> None:
        """Close the books: stop the caller, recognise every stretch of the agent's speech
        into the transcript, and order the transcript by time."""
        if self._speaking is not None:
            self._finish_speech(self.sample, yielded=self._speaking.turn is not None)
        if self.outside is not None:
            self._outside_trace()
        stretches = list(self.agent_stretches)
        if self.hearing.speaking:
            stretches.append((self.hearing.segment_start, self.sample))
        # One sentence the detector stopped inside (a short pause, nobody else talking) is
        # one turn for the grader, as for the caller: "the card ending one one" and
        # "seven" apart are two turns, and neither reads the card back.
        if self.caller_stream is not None:
            # A model caller's speech: where its own voice carried speech (ground truth).
            self.caller_segments = self._voiced(self.voice_tape)
        caller = [(round(a * RATE), round(b * RATE)) for a, b in self.caller_segments]

        def quiet(end: int, start: int) -> bool:
            return not any(a < start and b > end for a, b in caller)

        stretches = [
            (stretches[g[0]][0], stretches[g[-1]][1]) for g in close_groups(stretches, quiet)
        ]
        if self._grading_ear is not None:
            self._graded_words(stretches, self._grading_ear)
        else:
            for start, end in stretches:
                for a, b in self._pieces(start, end):
                    self._agent_turn(self._words(a, b), a)
        turns = self.episode.transcript.turns
        order = sorted(range(len(turns)), key=lambda i: (self.turn_times.get(id(turns[i]), 0.0), i))
        ordered = [turns[i] for i in order]
        for index, turn in enumerate(ordered):
            turn.index = index
        self.episode.transcript.turns[:] = ordered
        if self.caller_stream is not None:
            self.caller_stream.review(ordered)
            self.caller_stream.close()

    def _outside_trace(self) -> None:
        """An outside agent's tool calls, rebuilt from its served twins' request log, into
        the transcript at their times (``vamos_env.bridges.trace``). Verification is judged
        from the caller's words up to where each of its utterances ended."""
        from vamos_env.bridges.trace import rebuild_trace, tool_events

        caller_words = [
            (self.turn_ends.get(id(t), self.turn_times.get(id(t), 0.0)), t.text)
            for t in self.episode.transcript.turns
            if t.speaker == "caller" and t.tool_call is None and not t.spurious and t.text
        ]
        if self.outside_identity is None:
            self.rebuilt = []
            return
        self.rebuilt = rebuild_trace(
            self.outside.log, caller_words=caller_words, identity=self.outside_identity
        )
        for event in tool_events(self.rebuilt):
            call, result = event.turn_parts()
            turn = self.episode._add(speaker="tool", tool_call=call, tool_result=result)
            self.turn_times[id(turn)] = event.time_s
            bisect.insort(self.tool_samples, round(event.time_s * RATE))

    def _agent_turn(self, text: str, at: int) -> None:
        if text:
            turn = self.episode._add(speaker="agent", text=text)
            self.turn_times[id(turn)] = at / RATE

    def _graded_words(self, stretches: list[tuple[int, int]], ear: TimedRecognise) -> None:
        """Each stretch's words by the grader's ear (a word that sounds like a digit inside
        a code read as the digit: ``ear.code_digits``), split into pieces at the tool calls
        inside it by each word's start: a word begun before a tool call precedes it."""
        tape = self.heard_tape
        heard = stretch_words(
            tape.slice, stretches, tape.length, ear, scorer=getattr(ear, "scorer", None)
        )
        for (start, end), words in zip(stretches, heard, strict=True):
            pieces = self._pieces(start, end)
            cuts = [b for _, b in pieces[:-1]]
            split: list[list[Word]] = [[] for _ in pieces]
            for word in words:
                split[bisect.bisect_right(cuts, word.start_s * RATE)].append(word)
            for (a, _), piece in zip(pieces, split, strict=True):
                self._agent_turn(code_digits(joined(piece)), a)

    def timeline(self) -> list[dict[str, Any]]:
        """Each transcript turn's start on the call's clock (after ``finish``)."""
        return [
            {
                "turn": t.index,
                "speaker": t.speaker,
                "start_s": round(self.turn_times.get(id(t), 0.0), 3),
            }
            for t in self.episode.transcript.turns
        ]

    # -- ground truth and metrics ----------------------------------------------------------
    def agent_segments(self) -> list[Segment]:
        """Where the agent's own audio carried speech (frame level above -45 dBFS)."""
        return self._voiced(self.agent_tape)

    @staticmethod
    def _voiced(tape: _Tape | None) -> list[Segment]:
        """Where a tape carried speech (frame level above -45 dBFS, short pauses joined)."""
        if tape is None:
            return []
        audio = tape.array()
        n = len(audio) // FRAME
        if n == 0:
            return []
        power = np.mean(np.square(audio[: n * FRAME].reshape(n, FRAME)), axis=1)
        loud = 10.0 * np.log10(np.maximum(power, 1e-12)) >= AGENT_SPEECH_DBFS
        segments = [(k * FRAME_S, (k + 1) * FRAME_S) for k in np.nonzero(loud)[0]]
        return merged(segments, gap_s=AGENT_GAP_S)

    def background_segments(self) -> list[Segment]:
        """Where the room alone carried speech, by a fresh detector of the pipeline's kind."""
        room = self.room_tape.array()
        if len(room) == 0 or not np.any(room):
            return []
        from vamos_env.channel.audio.vad import whole_windows

        padded = np.zeros(whole_windows(len(room)))
        padded[: len(room)] = room
        detector = SpeechDetector(DetectorSettings(pre_roll_s=0.0, post_roll_s=0.0))
        return [(a / RATE, min(b, len(room)) / RATE) for a, b in detector.segments(padded)]

    def metrics(self) -> CallMetrics:
        """The call's metrics; after ``finish``, which finds a model caller's speech."""
        return call_metrics(
            self.caller_segments,
            self.agent_segments(),
            self.background_segments(),
            self.now_s,
        )

    def summary(self) -> dict[str, Any]:
        """The call's duplex record: metrics, line, events and the transcript's timing."""
        return {
            "line": self.line.name,
            **({"agent_line": self.agent_line.name} if self.agent_line is not None else {}),
            "frames": self.sample // FRAME,
            "frames_lost": {
                "to_agent": self.line_to_agent.lost,
                "to_caller": self.line_to_caller.lost,
            },
            "metrics": self.metrics().as_dict(),
            "events": [e.as_dict() for e in self.events],
            "timeline": self.timeline(),
            "caller_segments": [[round(a, 3), round(b, 3)] for a, b in self.caller_segments],
            "agent_segments": [[round(a, 3), round(b, 3)] for a, b in self.agent_segments()],
            **(
                {"outside_trace": [e.as_dict() for e in self.rebuilt]}
                if self.outside is not None
                else {}
            ),
            "caller_heard": [
                {"time_s": round(t, 3), "text": text} for t, text in self.caller_heard
            ],
        }


def close_groups(
    spans: Sequence[tuple[int, int]],
    quiet: Callable[[int, int], bool] = lambda end, start: True,
) -> list[list[int]]:
    """Indices of ``spans`` (samples, in order) grouped where one starts at most
    ``JOIN_GAP_S`` after the last ended, with ``quiet(end, start)`` over the pause, while
    the group spans at most ``JOIN_MAX_S``."""
    gap, longest = round(JOIN_GAP_S * RATE), round(JOIN_MAX_S * RATE)
    groups: list[list[int]] = []
    for i, (start, end) in enumerate(spans):
        if groups:
            first, last = spans[groups[-1][0]], spans[groups[-1][-1]]
            if start - last[1] <= gap and end - first[0] <= longest and quiet(last[1], start):
                groups[-1].append(i)
                continue
        groups.append([i])
    return groups


def _finished(text: str) -> str:
    """Words the agent finished saying, closed as finished speech.

    The caller heard the agent stop on its own (its detector's stop, nobody talking
    over it), as a person hears a sentence end. A recogniser often leaves the last
    sentence open ("... the card ending 4444"), and the caller's listening takes open
    text for speech that was cut off, whose last value may be incomplete."""
    stripped = text.rstrip(" ,;:-")
    if not stripped or stripped.endswith((".", "?", "!")):
        return text
    return stripped + "."


def tool_observation(results: list[dict[str, Any]]) -> str:
    """Tool results as a text agent receives them in a text call (one result: its JSON)."""
    if len(results) == 1 and "result" in results[0]:
        return json.dumps(results[0]["result"])
    return json.dumps({"tool_results": results})
