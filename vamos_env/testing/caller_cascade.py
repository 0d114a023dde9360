"""A local caller stack to put behind the fake Realtime and Gemini Live servers.

A model caller (``vamos_env.duplex.model_caller``) is a speech-to-speech session playing
the caller. Offline, the session's model is this stack: the frame-level cascade of
``vamos_env.duplex.cascade`` (detector, Whisper ears, decisions, Piper voice) whose text
agent is the scripted caller of the task (``BriefAsAgent``): each agent turn it
recognises goes to ``ScriptedCaller.hear``, and the caller's words come back as a ``say``
(its hang-up as ``end_call``, after its last words). It hears with the caller's ear
(``duplex.env.caller_ear``: Whisper that knows the caller's name and numbers) and speaks
with the persona's voice at the reference level (``engine.caller_voice_synthesizer``).

``caller_cascade(task, persona)`` is an ``agent_factory`` for either fake server:
``FakeRealtimeServer`` passes the detector settings of its session, ``FakeGeminiLiveServer``
the session's setup message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from vamos_env.actions import EndCall, Say
from vamos_env.callers.base import HangUp, Utterance
from vamos_env.callers.scripted import ScriptedCaller
from vamos_env.channel.audio.vad import DetectorSettings
from vamos_env.duplex.cascade import CascadeAgent
from vamos_env.envs.energy.tasks.schema import Task
from vamos_env.testing.fake_realtime import ServedCascade


class BriefAsAgent:
    """The scripted caller as a cascade's text agent: heard words in, its words out."""

    def __init__(self, caller: ScriptedCaller) -> None:
        self.caller = caller
        self.opened = False
        self.hanging_up = False  # its last words are queued; end the call after them

    def reset(self, info: Mapping[str, Any]) -> None:
        return None

    def act(self, observation: str, info: Any = None) -> Any:
        if self.caller.ended is not None:
            return EndCall()
        reply: Utterance | HangUp
        if not self.opened:  # the first turn (a greeting, or asked to speak): it opens
            self.opened = True
            reply = self.caller.open()
        else:
            reply = self.caller.hear(observation)
        if isinstance(reply, HangUp):
            if not reply.text.strip():
                return EndCall()
            self.hanging_up = True
            return Say(reply.text)
        return Say(reply.text if reply.text.strip() else "Okay.")


class _HangsUpAfterWords:
    """A cascade that ends the call once the caller's last words have been spoken."""

    _agent: Any
    _ending: bool

    def _decide(self, observation: str, actions: list[Any]) -> None:
        super()._decide(observation, actions)  # type: ignore[misc]
        if getattr(self._agent, "hanging_up", False):
            self._agent.hanging_up = False
            self._ending = True


class RealtimeCallerCascade(_HangsUpAfterWords, ServedCascade):
    """The caller stack as ``FakeRealtimeServer`` runs a session's cascade."""


class LiveCallerCascade(_HangsUpAfterWords, CascadeAgent):
    """The caller stack as ``FakeGeminiLiveServer`` runs a session's frame agent."""


def caller_cascade(task: Task, persona: str = "calm", *, seed: int = 0) -> Callable[[Any], Any]:
    """An ``agent_factory`` for the fake servers: a fresh caller stack for ``task`` per
    session (the scripted caller's wording drawn from ``seed``)."""
    from vamos_env.channel.audio.engines import voice_for
    from vamos_env.duplex.engine import caller_voice_synthesizer
    from vamos_env.duplex.env import caller_ear

    def make(setup: Any) -> Any:
        agent = BriefAsAgent(ScriptedCaller(task, persona, rng=np.random.default_rng(seed)))
        voice = caller_voice_synthesizer(voice_for(persona))
        ear = caller_ear(task)
        if isinstance(setup, DetectorSettings):  # FakeRealtimeServer
            return RealtimeCallerCascade(
                settings=setup, agent=agent, synthesize=voice, recognise=ear
            )
        from vamos_env.testing.fake_gemini_live import default_agent

        settings = default_agent(setup).settings  # its setup's end-of-turn silence
        return LiveCallerCascade(settings=settings, agent=agent, synthesize=voice, recognise=ear)

    return make


__all__ = ["BriefAsAgent", "LiveCallerCascade", "RealtimeCallerCascade", "caller_cascade"]
