"""``VamosEnergy-v0``: one phone call to Acme Energy's billing line per episode.

``reset`` clones the seeded services, casts the caller's persona and the room's
background, and returns the caller's first words; ``info`` carries the system
prompt and the tool schemas (OpenAI function format; ``gemini_tools`` converts
them), the task id, persona and background, never the answers. ``step`` takes a
``say``, ``tool_call`` or ``end_call`` action as a dict, a JSON string or an
OpenAI-style assistant message; a malformed action is answered with an error
observation and the call goes on (counted in ``info["malformed_actions"]``). The
reward is 0 until the call ends, then 1.0 iff all three assertions of the verdict
pass; ``info["verdict"]`` has the breakdown. The turn limit truncates.

Randomness: the task (when not named), and the caller's and the channel's child
generators, all come from the reset seed; casting (persona per task, background
per repeat) is a fixed function of the trial, as in the benchmark, unless
``options`` override it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vamos_env.callers.casting import Casting, cast
from vamos_env.callers.persona import SHIPPED_PERSONAS
from vamos_env.channel.base import Channel
from vamos_env.channel.parameters import (
    BACKGROUNDS,
    DEFAULT_LEVEL_DB,
    DEFAULT_RECOGNISER,
    RECOGNISER_PROFILES,
)
from vamos_env.channel.text import TextChannel
from vamos_env.envs.energy.prompt import system_prompt
from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.schema import Task, TaskSet, describe_errors, load_task_set
from vamos_env.envs.energy.tools import tool_schemas
from vamos_env.episode import Episode
from vamos_env.grading.ledger import read_ledger
from vamos_env.grading.verdict import grade
from vamos_env.spaces import TextSpace
from vamos_env.toolschema import gemini_tools

DEFAULT_TRIAL = "default"
EXAM_PATH = Path(__file__).parent / "tasks" / "data" / "exam.json"
SINGLES_PATH = Path(__file__).parent / "tasks" / "data" / "singles.json"


class ResetOptions(BaseModel):
    """What ``reset(options=...)`` accepts; unknown keys are an error, not ignored."""

    model_config = ConfigDict(extra="forbid")

    task_id: str | None = None
    repeat: int = Field(default=0, ge=0)
    persona: str | None = None
    background: Literal["clean", "street", "cafe", "television"] | None = None
    level_db: float | None = None
    caller: Literal["scripted", "openai", "gemini", "local"] | None = None
    channel: Literal["text", "audio"] | None = None
    recogniser: Literal["whisper-tiny.en", "ideal"] | None = None


@cache
def _task_set(path: str) -> TaskSet:
    return load_task_set(path)


def choose_call(
    task_set: TaskSet,
    task_ids: Sequence[str],
    casting: Mapping[tuple[str, int], Casting],
    rng: np.random.Generator,
    task_id: str | None,
    repeat: int,
    persona: str | None,
) -> tuple[str, str, str | None]:
    """The call a reset plays: (task id, persona, the casting's background or None).

    The task is the one named (it must be one of ``task_ids``, the set's ids sorted) or
    one drawn with ``rng``; the persona is the one named or the casting's (calm for a
    repeat the casting lacks).
    """
    if task_id is None:
        task_id = task_ids[int(rng.integers(len(task_ids)))]
    elif task_id not in task_ids:
        raise ValueError(
            f"options.task_id: expected a task of {task_set.name!r} ({len(task_ids)} tasks), "
            f"got {task_id!r}"
        )
    row = casting.get((task_id, repeat))
    persona = persona or (row.persona if row else "calm")
    if persona not in SHIPPED_PERSONAS:
        raise ValueError(
            f"options.persona: expected one of {list(SHIPPED_PERSONAS)}, got {persona!r}"
        )
    return task_id, persona, row.background if row else None


def resolve_tasks(tasks: str | Path | TaskSet | Sequence[Task]) -> TaskSet:
    """``"exam"``, ``"singles"``, a task file path, a ``TaskSet`` or a list of tasks."""
    if isinstance(tasks, TaskSet):
        return tasks
    if isinstance(tasks, (str, Path)):
        named = {"exam": EXAM_PATH, "singles": SINGLES_PATH}
        path = named.get(str(tasks), Path(tasks))
        return _task_set(str(path))
    return TaskSet(name="custom", tasks=tuple(tasks))


def check_world(task_set: TaskSet, accounts: Collection[str]) -> None:
    """Refuse a task set whose callers' accounts are not in the seeded world: every call of
    such a task would be unsolvable, and the run would only find out call by call."""
    missing = sorted(
        {t.caller.account_number for t in task_set.tasks if t.caller.account_number not in accounts}
    )
    if missing:
        tasks = [t.task_id for t in task_set.tasks if t.caller.account_number in set(missing)]
        raise ValueError(
            f"tasks {task_set.name!r}: expected callers' accounts of the seeded world "
            f"({len(accounts)} accounts, e.g. {sorted(accounts)[0]}), got {missing[:5]} "
            f"in {len(tasks)} task(s) (first: {tasks[0]!r})"
        )


class VamosEnergyEnv(gym.Env[str, Any]):
    """A Gymnasium environment in which each episode is one call to the billing line."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012  (Gymnasium's shape)

    def __init__(
        self,
        tasks: str | Path | TaskSet | Sequence[Task] = "exam",
        *,
        caller: Literal["scripted", "openai", "gemini", "local"] = "scripted",
        channel: Literal["text", "audio"] = "text",
        audio_observations: bool = False,
        level_db: float = DEFAULT_LEVEL_DB,
        recogniser: Literal["whisper-tiny.en", "ideal"] = DEFAULT_RECOGNISER,
        max_agent_turns: int = 60,
        trial_id: str = DEFAULT_TRIAL,
        repeats: int = 3,
        caller_options: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode: expected one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.task_set = resolve_tasks(tasks)
        self._tasks = {t.task_id: t for t in self.task_set.tasks}
        self._task_ids = sorted(self._tasks)
        self.caller_kind = caller
        self.channel_kind = channel
        # Speech-native agents: the caller's mixed 16 kHz PCM16 audio beside the text.
        self.audio_observations = audio_observations
        if audio_observations and channel != "audio":
            raise ValueError("audio_observations=True needs channel='audio'")
        self.level_db = level_db
        # The text channel's recogniser profile: the measured Whisper tiny.en in every room,
        # or "ideal" (no recogniser: the caller's words as said) for ablations.
        if recogniser not in RECOGNISER_PROFILES:
            raise ValueError(
                f"recogniser: expected one of {list(RECOGNISER_PROFILES)}, got {recogniser!r}"
            )
        self.recogniser = recogniser
        self.max_agent_turns = max_agent_turns
        self.trial_id = trial_id
        self.caller_options = dict(caller_options or {})
        self.render_mode = render_mode
        self.observation_space = TextSpace()
        self.action_space = TextSpace()
        # Casting is fixed per trial: persona per task, background per repeat.
        self._casting: dict[tuple[str, int], Casting] = {
            (c.task_id, c.repeat): c
            for c in cast(self._task_ids, trial_id=trial_id, repeats=repeats)
        }
        self._snapshot = default_snapshot()
        check_world(self.task_set, self._snapshot.report.accounts)
        self._episode: Episode | None = None
        self._channel: Channel | None = None
        self._task: Task | None = None
        self._info: dict[str, Any] = {}

    # -- reset ---------------------------------------------------------------------------
    def _options(self, options: Mapping[str, Any] | None) -> ResetOptions:
        try:
            return ResetOptions.model_validate(dict(options or {}))
        except ValidationError as exc:
            raise ValueError(f"reset options are invalid:\n{describe_errors(exc)}") from None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        opts = self._options(options)
        task_id, persona, cast_in = choose_call(
            self.task_set,
            self._task_ids,
            self._casting,
            self.np_random,
            opts.task_id,
            opts.repeat,
            opts.persona,
        )
        task = self._tasks[task_id]
        background = opts.background or cast_in or "clean"
        level_db = opts.level_db if opts.level_db is not None else self.level_db
        caller_kind = opts.caller or self.caller_kind

        # Child generators from the reset seed: the caller's wording and the room's noise.
        entropy = int(self.np_random.integers(2**63))
        caller_seq, channel_seq = np.random.SeedSequence(entropy).spawn(2)
        self._baseline = self._snapshot.clone()
        self._twins = self._snapshot.clone()
        session = CallSession(self._twins.clients())
        caller_obj = self._make_caller(
            caller_kind, task, persona, np.random.default_rng(caller_seq)
        )
        channel_kind = opts.channel or self.channel_kind
        recogniser = opts.recogniser or self.recogniser
        if channel_kind == "audio" and recogniser != DEFAULT_RECOGNISER:
            raise ValueError(
                f"options.recogniser: the audio channel runs {DEFAULT_RECOGNISER!r} itself,"
                f" got {recogniser!r}"
            )
        channel = self._make_channel(
            channel_kind,
            background,
            np.random.default_rng(channel_seq),
            level_db,
            persona,
            recogniser,
        )
        self._task = task
        self._episode = Episode(task_id, session, caller_obj, channel, self.max_agent_turns)
        observation = self._episode.start()
        self._channel = channel
        self._info = {
            "system_prompt": system_prompt(),
            "tools": tool_schemas(),
            "task_id": task_id,
            "request_count": len(task.requests),
            "persona": persona,
            "background": background,
            "level_db": level_db,
            "repeat": opts.repeat,
            "caller": caller_kind,
            "channel": channel_kind,
            "recogniser": recogniser,
            "caller_voice": getattr(getattr(channel, "voice", None), "engine", None),
            "turn": 0,
            "malformed_actions": 0,
            "replaced_code_points": self._episode.replaced_code_points,
        }
        info = dict(self._info)
        self._attach_audio(info)
        return observation, info

    def _make_channel(
        self,
        kind: str,
        background: str,
        rng: np.random.Generator,
        level_db: float,
        persona: str,
        recogniser: Literal["whisper-tiny.en", "ideal"] = DEFAULT_RECOGNISER,
    ) -> Channel:
        if kind == "text":
            return TextChannel(
                background,  # type: ignore[arg-type]
                rng,
                level_db=level_db,
                persona=persona,
                recogniser=recogniser,
            )
        # Real speech in the loop (slow; needs the vamos-env[audio] extra).
        from vamos_env.channel.audio import AudioChannel
        from vamos_env.channel.audio.engines import missing_reason, voice_for

        reason = missing_reason()
        if reason is not None:
            raise RuntimeError(f"channel='audio' is not available: {reason}")
        return AudioChannel(
            background,  # type: ignore[arg-type]
            rng,
            level_db=level_db,
            keep_audio=self.audio_observations,
            voice=voice_for(persona),
        )

    def _make_caller(self, kind: str, task: Task, persona: str, rng: np.random.Generator) -> Any:
        if kind == "scripted":
            from vamos_env.callers.scripted import ScriptedCaller

            return ScriptedCaller(task, persona, rng=rng, **self.caller_options)
        from vamos_env.callers import llm

        if kind == "local":  # the OpenAI-compatible caller on the local server (docs/llm.md)
            from vamos_env.llm.roles import caller_options

            return llm.OpenAICaller(task, persona, **caller_options(self.caller_options))
        factory = llm.OpenAICaller if kind == "openai" else llm.GeminiCaller
        return factory(task, persona, **self.caller_options)

    # -- step ------------------------------------------------------------------------------
    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._episode is None or self._task is None:
            raise RuntimeError("call reset() before step()")
        episode = self._episode
        before = len(episode.transcript.turns)
        outcome = episode.step(action)
        info = {
            "system_prompt": self._info["system_prompt"],
            "task_id": self._task.task_id,
            "persona": self._info["persona"],
            "background": self._info["background"],
            "turn": episode.agent_turns,
            "malformed_actions": episode.malformed_actions,
            "replaced_code_points": episode.replaced_code_points,
            "tool_results": outcome.tool_results,
        }
        if outcome.error:
            info["action_error"] = outcome.error
        # A voice pipeline knows when its speech was stopped by a barge-in, and where.
        cut = [t for t in episode.transcript.turns[before:] if t.speaker == "agent" and t.cut]
        if cut:
            info["agent_cut"] = cut[-1].heard or ""
        self._attach_audio(info)
        reward = 0.0
        terminated = outcome.ended and not outcome.truncated
        if outcome.ended:
            verdict = grade(
                self._task,
                episode.transcript,
                read_ledger(self._baseline, self._twins, self._task.caller.account_number),
            )
            reward = float(verdict.reward)
            info["verdict"] = verdict.model_dump(mode="json")
            info["end_reason"] = episode.end_reason
            info["caller_goal_met"] = bool(episode.caller.goal_met())
            info["deviations"] = [d.__dict__ for d in getattr(episode.caller, "deviations", [])]
            info["transcript"] = episode.transcript.model_dump(mode="json")
        return outcome.observation, reward, terminated, outcome.truncated, info

    def _attach_audio(self, info: dict[str, Any]) -> None:
        audio = getattr(self._channel, "audio", None) if self.audio_observations else None
        if audio:
            info["caller_audio"] = audio[-1]  # 16 kHz mono PCM16 (numpy int16)
            info["caller_audio_rate"] = 16_000

    # -- render ------------------------------------------------------------------------------
    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._episode is None:
            return None
        lines = []
        for turn in self._episode.transcript.turns:
            if turn.tool_call is not None and turn.tool_result is not None:
                args = json.dumps(turn.tool_call.arguments)
                status = "ok" if turn.tool_result.ok else "error"
                lines.append(f"  [tool] {turn.tool_call.name}({args}) -> {status}")
            else:
                tag = " (background)" if turn.spurious else (" (cut)" if turn.cut else "")
                lines.append(f"{turn.speaker}{tag}: {turn.text}")
        return "\n".join(lines)


__all__ = [
    "BACKGROUNDS",
    "ResetOptions",
    "VamosEnergyEnv",
    "check_world",
    "gemini_tools",
    "resolve_tasks",
]
