"""``VamosEnergyDuplex-v0``: one call to the billing line per episode, in full-duplex audio.

Each step takes a chunk of the agent's audio (16 kHz mono PCM16, ``frames_per_step``
frames of 20 ms; 10 by default, tau-Voice's 200 ms tick) and any tool calls (a JSON
list of ``{"type": "tool_call", "name", "arguments"}`` or ``{"type": "end_call"}``, or
an OpenAI assistant message; ``""`` for none), and returns the next chunk of what the
line carries to the agent (the caller's voice over the call's background, through the
line condition), the tool results (JSON list) and the call's events (JSON list). The
tools run at the start of the chunk, so their results arrive with it.

The caller, its brief, the casting, the services and the verdict are the text env's:
the same seed draws the same caller wording generator. The reward is 0 until the call
ends, then 1.0 iff the verdict's three assertions pass; ``info["verdict"]`` has the
breakdown, ``info["duplex"]`` the call's turn-taking metrics and timeline.

``caller="realtime"`` or ``"gemini-live"`` has a speech-to-speech model session play the
caller with the same brief and persona (``model_caller.py``), built from the environment
as the agent stacks build theirs, or by ``caller_session(task, persona)`` (a local
server's session in the tests); ``info["caller"]`` names who played it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vamos_env.callers.casting import Casting, cast
from vamos_env.channel.audio.dsp import from_pcm16, to_pcm16
from vamos_env.channel.parameters import DEFAULT_LEVEL_DB
from vamos_env.duplex.engine import FRAME, MAX_CALL_S, DuplexCall, _NoSpeechChannel
from vamos_env.duplex.engine import caller_voice_synthesizer as _caller_voice
from vamos_env.duplex.knowing import KnowingEar
from vamos_env.duplex.line import line_condition
from vamos_env.duplex.turntaking import turn_taking
from vamos_env.envs.energy.env import DEFAULT_TRIAL, check_world, choose_call, resolve_tasks
from vamos_env.envs.energy.prompt import system_prompt
from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.envs.energy.session import CallSession
from vamos_env.envs.energy.tasks.schema import Task, TaskSet, describe_errors
from vamos_env.envs.energy.tools import tool_schemas
from vamos_env.episode import Episode
from vamos_env.grading.ledger import read_ledger
from vamos_env.grading.verdict import grade
from vamos_env.spaces import TextSpace

TOOL_CALL_LIMIT = 10**6  # tool calls are not turns here; the call's time limit ends it
# Who plays the caller: the scripted caller, or a speech-to-speech model session with the
# same brief and persona (``model_caller.py``; docs/duplex.md, "A model caller").
CALLERS = ("scripted", "realtime", "gemini-live")
CallerSession = Callable[[Task, str], Any]  # (task, persona) -> a frame-level session


def default_caller_session(name: str, environ: Mapping[str, str] | None = None) -> CallerSession:
    """The default session of a model caller, built from the environment as the agent
    stacks build theirs (``OPENAI_API_KEY``/``OPENAI_BASE_URL``/``OPENAI_REALTIME_MODEL``;
    ``GOOGLE_API_KEY``/``GEMINI_LIVE_MODEL``/``GEMINI_LIVE_BASE_URL``), with ``end_call``,
    asked to speak first (the caller opens the call, as the scripted caller does)."""
    import os

    bridge: Any
    if name == "realtime":
        from vamos_env.bridges.realtime import RealtimeAgent as bridge
    elif name == "gemini-live":
        from vamos_env.bridges.gemini_live import GeminiLiveAgent as bridge
    else:
        raise ValueError(f"caller: expected one of {', '.join(CALLERS[1:])}, got {name!r}")
    missing = bridge.preflight(os.environ if environ is None else environ)
    if missing is not None:
        raise ValueError(f"caller {name!r}: {missing}")
    if name == "realtime":  # it opens the call, as the scripted caller does 1 s in
        return lambda task, persona: bridge(end_call_tool=True, greet=True)
    from vamos_env.callers.llm import ANSWERED

    return lambda task, persona: bridge(end_call_tool=True, opening=ANSWERED)


def caller_ear(task: Task) -> KnowingEar:
    """The caller's ear: Whisper tiny.en that knows the caller's name, account number and
    a digit second factor (``knowing.py``)."""
    factor = task.caller.second_factor
    codes = [task.caller.account_number]
    if factor.kind != "last_bill_amount":
        codes.append(factor.value)
    return KnowingEar(names=(task.caller.full_name,), codes=tuple(codes))


class DuplexResetOptions(BaseModel):
    """What ``reset(options=...)`` accepts; unknown keys are an error."""

    model_config = ConfigDict(extra="forbid")

    task_id: str | None = None
    repeat: int = Field(default=0, ge=0)
    persona: str | None = None
    background: Literal["clean", "street", "cafe", "television"] | None = None
    level_db: float | None = None
    line: str | None = None
    # The line the agent's audio crossed before it reached the call: a bridge's wire
    # (Twilio's media stream is G.711 at 8 kHz). The call's listeners (the caller's ear and
    # the detector whose stretches the grader reads) tune to the narrower of it and ``line``.
    agent_line: str | None = None
    # An outside agent runs its own tools: serve the call's twins to it on loopback
    # (``info["services"]``) and grade the trace rebuilt from their request log.
    serve_twins: bool = False
    # Where to serve them (0: a free port). An agent that reads fixed service variables at
    # its start (rory-agent's WS /voice stacks) names its port; calls on it run one at a time.
    twins_port: int = Field(default=0, ge=0, le=65535)


class VamosEnergyDuplexEnv(gym.Env[dict[str, Any], dict[str, Any]]):
    """A Gymnasium environment over a full-duplex audio call (needs the audio extra)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 5}  # noqa: RUF012  (Gymnasium's shape)

    def __init__(
        self,
        tasks: str | Path | TaskSet | Sequence[Task] = "exam",
        *,
        level_db: float = DEFAULT_LEVEL_DB,
        line: str = "wideband",
        grading_ear: str = "whisper-tiny.en",
        background: Literal["clean", "street", "cafe", "television"] | None = None,
        frames_per_step: int = 10,
        max_call_s: float = MAX_CALL_S,
        trial_id: str = DEFAULT_TRIAL,
        repeats: int = 3,
        caller_options: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        caller: str = "scripted",
        caller_session: CallerSession | None = None,
    ) -> None:
        from vamos_env.channel.audio.engines import missing_reason

        reason = missing_reason()
        if reason is not None:
            raise RuntimeError(f"VamosEnergyDuplex-v0 needs real speech: {reason}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode: expected one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        if caller not in CALLERS:
            raise ValueError(f"caller: expected one of {', '.join(CALLERS)}, got {caller!r}")
        if caller == "scripted" and caller_session is not None:
            raise ValueError(
                "caller_session: expected it only with a model caller (caller='realtime' or "
                "'gemini-live'), got it with caller='scripted'"
            )
        self.caller = caller
        # The model caller's session per call: given (a test's local server), or the bridge.
        self._caller_session: CallerSession | None = (
            None if caller == "scripted" else caller_session or default_caller_session(caller)
        )
        self.model_caller: Any = None
        if frames_per_step < 1:
            raise ValueError(f"frames_per_step: expected at least 1, got {frames_per_step}")
        self.task_set = resolve_tasks(tasks)
        self._tasks = {t.task_id: t for t in self.task_set.tasks}
        self._task_ids = sorted(self._tasks)
        self.level_db = level_db
        self.line = line_condition(line)
        from vamos_env.channel.audio.engines import EARS

        if grading_ear not in EARS:
            raise ValueError(f"grading_ear: expected one of {', '.join(EARS)}, got {grading_ear!r}")
        self.grading_ear = grading_ear
        self.background = background  # every call in this room (None: the casting's)
        self.frames_per_step = frames_per_step
        self.max_call_s = max_call_s
        self.trial_id = trial_id
        self.caller_options = dict(caller_options or {})
        self.render_mode = render_mode
        chunk = frames_per_step * FRAME
        audio = spaces.Box(-32768, 32767, shape=(chunk,), dtype=np.int16)
        self.observation_space = spaces.Dict(
            {"audio": audio, "tool_results": TextSpace(), "events": TextSpace()}
        )
        self.action_space = spaces.Dict({"audio": audio, "tool_calls": TextSpace()})
        self._casting: dict[tuple[str, int], Casting] = {
            (c.task_id, c.repeat): c
            for c in cast(self._task_ids, trial_id=trial_id, repeats=repeats)
        }
        self._snapshot = default_snapshot()
        check_world(self.task_set, self._snapshot.report.accounts)
        self.call: DuplexCall | None = None
        self.served: Any = None  # the current call's ServedTwins, for an outside agent
        self._task: Task | None = None
        self._info: dict[str, Any] = {}

    # -- reset -------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        try:
            opts = DuplexResetOptions.model_validate(dict(options or {}))
        except ValidationError as exc:
            raise ValueError(f"reset options are invalid:\n{describe_errors(exc)}") from None
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
        background = opts.background or self.background or cast_in or "clean"
        level_db = opts.level_db if opts.level_db is not None else self.level_db
        line = line_condition(opts.line) if opts.line is not None else self.line
        agent_line = line_condition(opts.agent_line) if opts.agent_line is not None else None
        # The text env's two child generators: the caller's wording, then the call's audio.
        entropy = int(self.np_random.integers(2**63))
        caller_seq, call_seq = np.random.SeedSequence(entropy).spawn(2)
        self._baseline = self._snapshot.clone()
        self._twins = self._snapshot.clone()
        session = CallSession(self._twins.clients())
        from vamos_env.callers.scripted import ScriptedCaller
        from vamos_env.channel.audio.engines import voice_for
        from vamos_env.duplex.ear import GradingEar

        self._stop_caller()
        caller: Any
        if self._caller_session is not None:
            from vamos_env.duplex.model_caller import ModelCaller

            caller = self.model_caller = ModelCaller(
                self._caller_session(task, persona), task, persona, name=self.caller
            )
        else:
            caller = ScriptedCaller(
                task, persona, rng=np.random.default_rng(caller_seq), **self.caller_options
            )
        episode = Episode(task_id, session, caller, _NoSpeechChannel(), TOOL_CALL_LIMIT)
        voice = voice_for(persona)
        self.call = DuplexCall(
            episode,
            background=background,
            rng=np.random.default_rng(call_seq),
            level_db=level_db,
            line=line,
            agent_line=agent_line,
            taking=turn_taking(persona),
            synthesize=_caller_voice(voice),
            recognise=caller_ear(task),
            grading_ear=GradingEar(self.grading_ear),
            max_call_s=self.max_call_s,
            caller_stream=self.model_caller,
        )
        self._stop_serving()
        services: dict[str, str] = {}
        if opts.serve_twins:
            from vamos_env.bridges.served import ServedTwins
            from vamos_env.bridges.trace import CallerIdentity

            call = self.call
            self.served = ServedTwins(
                self._twins, clock=lambda: call.now_s, port=opts.twins_port
            ).start()
            call.outside = self.served
            call.outside_identity = CallerIdentity.from_twins(
                self._twins, task.caller.account_number
            )
            services = dict(self.served.env)
        self._task = task
        self._info = {
            "system_prompt": system_prompt(),
            "tools": tool_schemas(),
            "task_id": task_id,
            "request_count": len(task.requests),
            "persona": persona,
            "background": background,
            "level_db": level_db,
            "line": line.name,
            **({"agent_line": agent_line.name} if agent_line is not None else {}),
            "grading_ear": self.grading_ear,
            "repeat": opts.repeat,
            "caller": self.caller,
            "channel": "duplex",
            "caller_voice": voice.engine if self.model_caller is None else self.caller,
            "sample_rate": 16_000,
            "frame_s": 0.02,
            "frames_per_step": self.frames_per_step,
            **({"services": services} if services else {}),
        }
        if self.model_caller is not None:
            self.model_caller.start()  # a session that fails to open is the caller's fault
        first = self.call.step(np.zeros(self.frames_per_step * FRAME))
        observation = self._observation(first.audio, [], first.events)
        return observation, dict(self._info)

    # -- step --------------------------------------------------------------------------------
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        call = self.call
        if call is None or self._task is None:
            raise RuntimeError("call reset() before step()")
        if call.ended:
            raise RuntimeError("the call has ended; reset before stepping again")
        if not isinstance(action, Mapping):
            raise ValueError("action: expected a dict with 'audio' (int16 array) and 'tool_calls'")
        pcm = np.asarray(action.get("audio"), dtype=np.int16).ravel()
        chunk = self.frames_per_step * FRAME
        if pcm.shape != (chunk,):
            raise ValueError(f"action['audio']: expected {chunk} int16 samples, got {pcm.shape}")
        actions, errors = _tool_actions(action.get("tool_calls") or "")
        result = call.step(from_pcm16(pcm), actions)
        results = errors + result.tool_results
        observation = self._observation(result.audio, results, result.events)
        info: dict[str, Any] = {
            "task_id": self._task.task_id,
            "time_s": round(call.now_s, 3),
            "tool_results": results,
        }
        reward = 0.0
        if result.ended:
            final = self.final_info()
            reward = float(final["reward"])
            info.update(final)
        return observation, reward, result.ended and not result.truncated, result.truncated, info

    def final_info(self) -> dict[str, Any]:
        """Close the call (idempotent) and grade it: the verdict, the transcript, the metrics."""
        call, task = self.call, self._task
        assert call is not None and task is not None
        if not getattr(call, "_finished", False):
            call.finish()
            call._finished = True  # type: ignore[attr-defined]
            self._stop_serving()
            self._stop_caller()
        episode = call.episode
        verdict = grade(
            task,
            episode.transcript,
            read_ledger(self._baseline, self._twins, task.caller.account_number),
        )
        return {
            "reward": float(verdict.reward),
            "verdict": verdict.model_dump(mode="json"),
            "end_reason": call.end_reason,
            "caller_goal_met": bool(episode.caller.goal_met()),
            "deviations": [d.__dict__ for d in getattr(episode.caller, "deviations", [])],
            "transcript": episode.transcript.model_dump(mode="json"),
            "turn": episode.agent_turns,
            "malformed_actions": episode.malformed_actions,
            "replaced_code_points": episode.replaced_code_points,
            "duplex": call.summary(),
        }

    def _stop_serving(self) -> None:
        """Stop serving the last call's twins (its log stays readable)."""
        if self.served is not None:
            self.served.stop()
            self.served = None

    def _stop_caller(self) -> None:
        """Close the last call's model caller session (a socket and a thread each)."""
        if self.model_caller is not None:
            self.model_caller.close()
            self.model_caller = None

    def close(self) -> None:
        self._stop_serving()
        self._stop_caller()
        super().close()

    def _observation(
        self, audio: Any, results: list[dict[str, Any]], events: Sequence[Any]
    ) -> dict[str, Any]:
        pcm = to_pcm16(audio)
        chunk = self.frames_per_step * FRAME
        if len(pcm) < chunk:
            pcm = np.concatenate([pcm, np.zeros(chunk - len(pcm), dtype=np.int16)])
        return {
            "audio": pcm,
            "tool_results": json.dumps(results),
            "events": json.dumps([e.as_dict() for e in events]),
        }

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.call is None:
            return None
        return "\n".join(f"{e.time_s:7.2f}s {e.kind} {e.detail}" for e in self.call.events)


def _tool_actions(raw: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """The step's tool calls: a JSON list of actions, one action, or none; or why not."""
    if isinstance(raw, str):
        if not raw.strip():
            return [], []
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            return [], [{"error": "tool_calls: expected a JSON list of tool_call actions"}]
    if isinstance(raw, Mapping):
        return [raw], []
    if isinstance(raw, list):
        return list(raw), []
    return [], [{"error": "tool_calls: expected a JSON list of tool_call actions"}]


__all__ = ["DuplexResetOptions", "VamosEnergyDuplexEnv"]
