"""A caller played by a speech-to-speech model session (a Realtime or Gemini Live session).

``ModelCaller`` is the caller's side of a duplex call when a frame-level session plays it:
any object with the bridges' shape (``reset(info)``, ``step(line_audio, tool_results) ->
(audio, actions)``, a ``log`` whose entries with ``"said"`` are what the model said, per
its transcript, and ``close()``), such as ``RealtimeAgent`` or ``GeminiLiveAgent`` built
with ``end_call_tool=True``, pointed at the vendor or at a local fake server.

- The session is opened with the caller's brief and persona (``spoken_caller_prompt``:
  ``caller_prompt`` with its JSON reply format replaced by phone manners: speak, and hang
  up by calling ``end_call``). It gets no other tools (the bridge declares ``end_call``).
- Each frame the call steps it with what the caller hears on the line (the agent's audio
  after the line) and plays the frame of voice it answers with. It hears and decides by
  itself: no scripted turn-taking, no caller ear.
- What it says (each ``"said"`` entry, at the call time the session logged it) becomes a
  caller turn of the episode transcript; a barge-in that cut it (``"cut"`` from the
  Realtime bridge, ``"interrupted"`` from Gemini Live) keeps only the words played.
- Its ``EndCall`` (or an ``end_call`` tool call) is the caller hanging up.
- A fault of the session (an exception from ``reset`` or ``step``) ends the call as the
  caller's fault: a ``caller_error`` deviation, as ``LLMCaller`` records an unusable
  model reply, so the call is excluded from the agent's score (never the agent's fault).
- ``review`` runs a ``BriefMonitor`` over the finished transcript in time order (the
  agent's words as the grader's ear heard them, the caller's as the session said them):
  deviations are recorded as for ``LLMCaller``.

``goal_met()`` is False: the session is never asked whether it got what it called for
(a spoken caller has no reply object to carry that belief).

Such a session hears the call in wall time, so ``frame`` holds the call to the wall
clock (``pace``) unless the session paces itself (``GeminiLiveAgent(pace=True)``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vamos_env.actions import EndCall, ToolCallAction
from vamos_env.callers.base import Deviation, HangUp, Utterance
from vamos_env.callers.deviation import BriefMonitor
from vamos_env.callers.llm import caller_prompt
from vamos_env.callers.persona import Persona, load_persona
from vamos_env.channel.audio.dsp import RATE, Audio
from vamos_env.envs.energy.tasks.schema import Task
from vamos_env.types import Turn

FRAME = 320  # 20 ms at 16 kHz (the engine's frame)
END_CALL = "end_call"

PHONE_MANNERS = """# On the phone
You are on a live phone call: speak your words aloud, as a person does on the phone. Never
say JSON, markup, labels or stage directions. The call has just been answered: start with
your opening line, unless the agent is already speaking (then let it finish first).
Speak one turn at a time and let the agent answer. When the call is over (every request
handled, the agent transferred you, or it made no progress for several turns), say goodbye
and then call the function end_call to hang up. You have no other tools."""


def spoken_caller_prompt(task: Task, persona: Persona) -> str:
    """The brief and persona of ``caller_prompt`` for a model that speaks on the call: its
    JSON reply format is replaced by phone manners (speak; hang up with ``end_call``)."""
    prompt = caller_prompt(task, persona)
    head, found, _ = prompt.partition("\n# Reply format")
    if not found:
        raise RuntimeError("caller_prompt no longer has its '# Reply format' section")
    return f"{head.rstrip()}\n\n{PHONE_MANNERS}"


@dataclass(frozen=True)
class Said:
    """Words the session said, at ``time_s`` on the call's clock; ``cut`` when a barge-in
    stopped them (``text`` is then what was played, or the last turn's replacement)."""

    time_s: float
    text: str
    cut: bool = False


class ModelCaller:
    """The caller side of a duplex call, played by a frame-level model session."""

    def __init__(
        self,
        session: Any,
        task: Task,
        persona: Persona | str,
        *,
        name: str = "model",
        pace: bool = True,
    ) -> None:
        self.session = session
        self.task = task
        self.persona = load_persona(persona) if isinstance(persona, str) else persona
        self.name = name
        self.system = spoken_caller_prompt(task, self.persona)
        self.monitor = BriefMonitor(task, self.persona)
        self.deviations: list[Deviation] = self.monitor.deviations  # one list, shared
        # The session paces itself (Gemini Live's ``pace``): do not hold the clock twice.
        self.pace = pace and not bool(getattr(session, "pace", False))
        self.hung_up = False
        self.fault: str | None = None
        self.said: list[Said] = []  # everything it said, in order
        self.frames = 0
        self._new: list[Said] = []
        self._seen = 0  # log entries read
        self._results: list[dict[str, Any]] = []
        self._began: float | None = None
        self._reviewed = False

    # -- the Caller protocol (the episode's caller; its speech is audio, never text) ---------
    def open(self) -> Utterance:
        raise RuntimeError("a model caller speaks audio on the duplex line, not text")

    def hear(self, text: str) -> Utterance | HangUp:
        raise RuntimeError("a model caller hears audio on the duplex line, not text")

    def goal_met(self) -> bool:
        # The session is never asked for its belief (a spoken caller has no reply object to
        # carry it), so it cannot say; the verdict does not depend on it.
        return False

    # -- the session -------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """What the session is opened with: the caller's prompt, no tools of the line."""
        return {
            "system_prompt": self.system,
            "tools": [],
            "persona": self.persona.name,
            "channel": "duplex",
            "sample_rate": RATE,
            "frame_s": FRAME / RATE,
        }

    @property
    def ended(self) -> bool:
        return self.hung_up or self.fault is not None

    def start(self) -> None:
        """Open the session; a failure is the caller's fault (``fault``), never raised."""
        try:
            self.session.reset(self.info())
        except Exception as exc:
            self._failed("failed to start", exc)

    def frame(self, heard: Audio) -> Audio:
        """One 20 ms frame: step the session with what the caller heard; its voice back."""
        if len(heard) != FRAME:
            raise ValueError(f"heard: expected one frame ({FRAME} samples), got {len(heard)}")
        if self.ended:
            self.frames += 1
            return np.zeros(FRAME)
        self._hold()
        results, self._results = self._results, []
        try:
            audio, actions = self.session.step(np.asarray(heard, dtype=np.float64), results)
        except Exception as exc:
            self._failed("failed", exc)
            self.frames += 1
            return np.zeros(FRAME)
        self.frames += 1
        self._read_log()
        for action in actions:
            if isinstance(action, EndCall) or (
                isinstance(action, ToolCallAction) and action.name == END_CALL
            ):
                self.hung_up = True
            elif isinstance(action, ToolCallAction):
                self._results.append(
                    {
                        "tool_call_id": action.call_id,
                        "name": action.name,
                        "error": f"the caller has no tool {action.name!r}; only {END_CALL}",
                    }
                )
        out = np.zeros(FRAME)
        voice = np.asarray(audio, dtype=np.float64).ravel()[:FRAME]
        out[: len(voice)] = voice
        return out

    def take_said(self) -> list[Said]:
        """What it said since the last call (for the transcript)."""
        new, self._new = self._new, []
        return new

    def close(self) -> None:
        close = getattr(self.session, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()

    def _hold(self) -> None:
        """Hold the call to the wall clock: the frame's instant never comes early."""
        if not self.pace:
            return
        now = time.perf_counter()
        if self._began is None:
            self._began = now
        ahead = self.frames * FRAME / RATE - (now - self._began)
        if ahead > 0:
            time.sleep(ahead)

    def _read_log(self) -> None:
        log = getattr(self.session, "log", None) or []
        for entry in log[self._seen :]:
            if not isinstance(entry, Mapping):
                continue
            at = float(entry.get("time_s", self.frames * FRAME / RATE))
            if "interrupted" in entry:  # Gemini Live: the turn it was saying, cut off
                text = str(entry.get("said") or "").strip()
                if text:
                    self._add(Said(at, text, cut=True))
            elif "cut" in entry:  # Realtime: what was played of the item a barge-in cut
                self._add(Said(at, str(entry.get("cut") or "").strip(), cut=True))
            elif "said" in entry:
                text = str(entry.get("said") or "").strip()
                if text:
                    self._add(Said(at, text))
        self._seen = len(log)

    def _add(self, said: Said) -> None:
        self.said.append(said)
        self._new.append(said)

    def _failed(self, what: str, exc: Exception) -> None:
        self.fault = f"{self.name} caller session {what}: {type(exc).__name__}: {exc}"
        self.deviations.append(Deviation("caller_error", self.fault, 0))

    # -- the brief ---------------------------------------------------------------------------
    def review(self, turns: Sequence[Turn]) -> None:
        """Hold the finished call to the brief (idempotent): the monitor hears the agent's
        and the caller's turns in the transcript's order, and judges how the call ended."""
        if self._reviewed:
            return
        self._reviewed = True
        heard = 0
        for turn in turns:
            if turn.tool_call is not None or not turn.text:
                continue
            if turn.speaker == "agent":
                heard += 1
                self.monitor.agent_said(turn.text)
            elif turn.speaker == "caller":
                self.monitor.caller_said(turn.text, heard)
        if self.fault is not None:
            self.monitor.call_ended("caller_error", heard)
        elif self.hung_up:
            self.monitor.call_ended("caller_ended", heard)


__all__ = ["END_CALL", "ModelCaller", "Said", "spoken_caller_prompt"]
