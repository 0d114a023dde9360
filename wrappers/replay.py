"""``RecordedReplay``: a saved call's caller side replayed against a new agent.

The recording is a ``RecordEpisode`` record (a dict, or a JSONL file and an index) or
a bare ``Transcript``. On reset the environment starts the recorded task as usual,
then the call's caller and channel are swapped for the recording's:

- ``ReplayCaller`` says the recorded opening, and after the agent's n-th piece of
  speech it says what the caller said after the recorded agent's n-th piece of speech
  (hanging up where the recording hung up). When the recording has no more replies it
  hangs up (``info["replay_exhausted"]``).
- ``ReplayChannel`` delivers each caller turn to the agent exactly as the recorded
  agent received it (recognition errors and background turns included), and delivers
  agent speech identical to the recorded speech exactly as the recorded caller heard
  it (cut short where it was). Different speech arrives whole.

So up to the first difference the new call's transcript is the recording's, turn for
turn. The agent's moves (speech, tool calls with their arguments, ending the call) are
compared with the recording's in order; the first that differs is reported in
``info["divergence"]``: ``{"turn", "move", "expected", "actual"}``, where ``turn`` is
the transcript index at which the calls part, ``move`` the index among the agent's
moves, and ``expected`` / ``actual`` the two moves (``{"kind": "say", "text"}``,
``{"kind": "tool_call", "name", "arguments"}``, ``{"kind": "end_call"}``, or
``{"kind": "call_ended", "reason"}`` when one call ended where the other went on). It
is ``None`` while the calls agree. Speech is compared after folding case and
whitespace unless ``same_speech`` says otherwise. Caller interruptions are replayed
as what the caller heard, not re-simulated. The call is graded as usual.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, SupportsFloat

import gymnasium as gym

from vamos_env.callers.base import Deviation, HangUp, Utterance
from vamos_env.envs.energy.env import VamosEnergyEnv
from vamos_env.episode import Episode
from vamos_env.types import Transcript, Turn
from vamos_env.wrappers.recording import read_records

MoveKind = Literal["say", "tool_call", "end_call", "call_ended"]


@dataclass(frozen=True, slots=True)
class Move:
    """One thing the agent did: speech, a tool call, ending the call; or the call ending."""

    kind: MoveKind
    text: str = ""
    name: str = ""
    arguments: Any = None
    reason: str | None = None

    @classmethod
    def of(cls, turn: Turn) -> Move:
        if turn.tool_call is not None:
            return cls("tool_call", name=turn.tool_call.name, arguments=turn.tool_call.arguments)
        return cls("say", text=turn.text)

    def as_dict(self) -> dict[str, Any]:
        if self.kind == "say":
            return {"kind": "say", "text": self.text}
        if self.kind == "tool_call":
            return {"kind": "tool_call", "name": self.name, "arguments": self.arguments}
        if self.kind == "call_ended":
            return {"kind": "call_ended", "reason": self.reason}
        return {"kind": "end_call"}


def folded_speech_equal(expected: str, actual: str) -> bool:
    """Same words after folding case and runs of whitespace (punctuation and figures count)."""

    def fold(text: str) -> str:
        return re.sub(r"\s+", " ", text).strip().casefold()

    return fold(expected) == fold(actual)


@dataclass(frozen=True)
class CallerScript:
    """A recorded call cut into what the replay needs."""

    task_id: str
    opening: tuple[Turn, ...]
    replies: tuple[tuple[Turn, ...], ...]  # the caller's turns after each agent speech
    agent_speech: tuple[Turn, ...]
    moves: tuple[tuple[int, Move], ...]  # (transcript index, move)
    end_reason: str | None = None

    @classmethod
    def of(cls, transcript: Transcript, end_reason: str | None = None) -> CallerScript:
        turns = transcript.turns
        if not turns or turns[0].speaker != "caller":
            raise ValueError("expected a recorded call that starts with the caller's words")
        opening: list[Turn] = []
        replies: list[list[Turn]] = []
        speech: list[Turn] = []
        moves: list[tuple[int, Move]] = []
        for turn in turns:
            if turn.speaker == "caller":
                (replies[-1] if speech else opening).append(turn)
            else:
                moves.append((turn.index, Move.of(turn)))
                if turn.speaker == "agent":
                    speech.append(turn)
                    replies.append([])
        return cls(
            transcript.task_id,
            tuple(opening),
            tuple(tuple(r) for r in replies),
            tuple(speech),
            tuple(moves),
            end_reason,
        )

    @property
    def expected_end(self) -> Move | None:
        """How the recorded call ended after its last move (``None`` when unknown)."""
        if self.end_reason is None:
            return None
        if self.end_reason == "end_call":
            return Move("end_call")
        return Move("call_ended", reason=self.end_reason)


def _received(group: Sequence[Turn]) -> list[str]:
    main, *background = group
    return [main.heard if main.heard is not None else main.text, *(t.text for t in background)]


@dataclass
class ReplayChannel:
    """Delivers the recording's words as they were received (see the module docstring)."""

    script: CallerScript
    pending: list[list[str]] = field(default_factory=list)
    _said: int = 0

    def to_agent(self, caller_text: str) -> list[str]:
        return self.pending.pop(0) if self.pending else [caller_text]

    def to_caller(self, agent_text: str) -> str:
        k, self._said = self._said, self._said + 1
        if k < len(self.script.agent_speech):
            recorded = self.script.agent_speech[k]
            if recorded.text == agent_text and recorded.heard is not None:
                return recorded.heard
        return agent_text


@dataclass
class ReplayCaller:
    """Answers from the recording instead of a live caller."""

    script: CallerScript
    channel: ReplayChannel
    recorded_goal_met: bool = False
    deviations: list[Deviation] = field(default_factory=list)
    exhausted: bool = False
    _heard: int = 0

    def open(self) -> Utterance:
        return self._speak(self.script.opening)

    def hear(self, text: str) -> Utterance | HangUp:
        k, self._heard = self._heard, self._heard + 1
        if k >= len(self.script.replies):
            self.exhausted = True
            return HangUp("caller_ended")
        group = self.script.replies[k]
        if k == len(self.script.replies) - 1 and self.script.end_reason == "hang_up":
            return HangUp("done", group[0].text if group else "")
        if not group:
            return Utterance("")
        return self._speak(group)

    def _speak(self, group: Sequence[Turn]) -> Utterance:
        self.channel.pending.append(_received(group))
        return Utterance(group[0].text)

    def goal_met(self) -> bool:
        return self.recorded_goal_met


Recording = Mapping[str, Any] | Transcript | str | Path


class RecordedReplay(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Replay a recorded call's caller side and report where a new agent first departs."""

    def __init__(
        self,
        env: gym.Env[Any, Any],
        recording: Recording,
        *,
        index: int = 0,
        end_reason: str | None = None,
        same_speech: Callable[[str, str], bool] = folded_speech_equal,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, recording=recording, index=index, end_reason=end_reason, same_speech=same_speech
        )
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.unwrapped, VamosEnergyEnv):
            raise TypeError(
                f"RecordedReplay wraps VamosEnergyEnv, got {type(env.unwrapped).__name__}"
            )
        self.record = _load(recording, index)
        transcript = Transcript.model_validate(self.record["transcript"])
        self.script = CallerScript.of(transcript, end_reason or self.record.get("end_reason"))
        self.same_speech = same_speech
        self._episode: Episode | None = None
        self._caller: ReplayCaller | None = None
        self._checked = 0  # transcript turns already compared
        self._moves = 0  # agent moves already compared
        self._divergence: dict[str, Any] | None = None

    @property
    def divergence(self) -> dict[str, Any] | None:
        return self._divergence

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        chosen = dict(options or {})
        task_id = chosen.setdefault("task_id", self.script.task_id)
        if task_id != self.script.task_id:
            raise ValueError(
                f"options.task_id: the recording is of {self.script.task_id!r}, got {task_id!r}"
            )
        for key in ("persona", "background", "level_db", "repeat"):
            if key in self.record and self.record[key] is not None:
                chosen.setdefault(key, self.record[key])
        chosen["caller"] = "scripted"  # built and then replaced: never a model call
        _, info = self.env.reset(seed=seed, options=chosen)
        base = self.env.unwrapped
        assert isinstance(base, VamosEnergyEnv)
        live = base._episode
        if live is None:
            raise RuntimeError("the environment has no call in progress after reset")
        channel = ReplayChannel(self.script)
        self._caller = ReplayCaller(
            self.script, channel, bool(self.record.get("caller_goal_met", False))
        )
        # Same task, same session (no tool has run yet), the recording's caller and channel.
        # The episode uses only the channel's to_agent and to_caller, which ReplayChannel has.
        self._episode = Episode(
            live.task_id,
            live.session,
            self._caller,
            channel,
            live.max_agent_turns,
        )
        base._episode = self._episode
        observation = self._episode.start()
        self._checked, self._moves, self._divergence = len(self._episode.transcript.turns), 0, None
        return observation, {**info, "divergence": None, "replay_exhausted": False}

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._episode is None or self._caller is None:
            raise RuntimeError("call reset() before step()")
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self._divergence is None:
            self._compare(ended=terminated or truncated)
        info = {
            **info,
            "divergence": self._divergence,
            "replay_exhausted": self._caller.exhausted,
        }
        return observation, reward, terminated, truncated, info

    def _compare(self, *, ended: bool) -> None:
        assert self._episode is not None
        turns = self._episode.transcript.turns
        for turn in turns[self._checked :]:
            self._checked += 1
            if turn.speaker == "caller":
                continue
            if self._diverges(turn.index, Move.of(turn)):
                return
        if not ended:
            return
        reason = self._episode.end_reason
        actual = Move("end_call") if reason == "end_call" else Move("call_ended", reason=reason)
        expected = self.script.expected_end
        if self._moves < len(self.script.moves) or expected is not None:
            self._diverges(len(turns), actual)

    def _diverges(self, turn: int, actual: Move) -> bool:
        k = self._moves
        self._moves += 1
        if k < len(self.script.moves):
            expected = self.script.moves[k][1]
        elif self.script.expected_end is not None:
            expected = self.script.expected_end
        else:
            return False  # the recording's end is unknown: nothing to compare with
        if self._same(expected, actual):
            return False
        self._divergence = {
            "turn": turn,
            "move": k,
            "expected": expected.as_dict(),
            "actual": actual.as_dict(),
        }
        return True

    def _same(self, expected: Move, actual: Move) -> bool:
        if expected.kind != actual.kind:
            return False
        if expected.kind == "say":
            return self.same_speech(expected.text, actual.text)
        if expected.kind == "tool_call":
            return expected.name == actual.name and expected.arguments == actual.arguments
        return expected.reason == actual.reason


def _load(recording: Recording, index: int) -> dict[str, Any]:
    if isinstance(recording, Transcript):
        return {"transcript": recording.model_dump(mode="json")}
    if isinstance(recording, (str, Path)):
        records = read_records(recording)
        if not -len(records) <= index < len(records):
            raise IndexError(f"index: {recording} holds {len(records)} records, got {index}")
        return records[index]
    if "transcript" in recording:
        return dict(recording)
    if "turns" in recording:  # a dumped transcript
        return {"transcript": dict(recording)}
    raise ValueError("expected a RecordEpisode record (with 'transcript') or a transcript")
