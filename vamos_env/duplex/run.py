"""Driving one duplex call with a frame-level agent, as the runner and the CLI do.

A frame-level agent has ``reset(info)`` and ``step(line_audio, tool_results) ->
(audio, actions)`` (``CascadeAgent`` is one). ``play`` runs a call to its end on the
simulated clock, as fast as the agent allows; ``pace=True`` holds the clock to the
wall clock (a frame is never handed over before its instant; when the agent is slower
than real time the call runs late, and ``late_s`` says by how much), which is what a
remote agent needs. An agent that says ``wall_clock = True`` (the bridges to outside
stacks: their servers hear the call in wall time) is always paced; one that says
``outside_tools = True`` runs its own tools, so the call's twins are served to it
(``info["services"]``) and its trace is rebuilt from their request log. An agent with
``close()`` is closed when the call is over (one connection is one call).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vamos_env.channel.audio.dsp import from_pcm16
from vamos_env.duplex.env import VamosEnergyDuplexEnv


@dataclass
class Played:
    """A finished duplex call: the env's final info, and what it cost in wall time."""

    final: dict[str, Any]
    info: dict[str, Any]
    wall_s: float
    late_s: float = 0.0
    agent_fault: str | None = None
    compute: dict[str, float] = field(default_factory=dict)
    # The agent's own account of the call, when it keeps one (the cascade's ``log``:
    # what it heard and meant to say): for diagnosis, never graded.
    agent_log: list[dict[str, Any]] = field(default_factory=list)


def play(
    env: VamosEnergyDuplexEnv,
    agent: Any,
    *,
    seed: int,
    options: Mapping[str, Any] | None = None,
    pace: bool = False,
    timeout_s: float | None = None,
) -> Played:
    """One call from reset to verdict. An agent that raises or runs past ``timeout_s``
    (wall) ends the call as if it hung up; the call is still graded. The environment's
    own errors propagate (the runner records a lost session)."""
    began = time.perf_counter()
    pace = pace or bool(getattr(agent, "wall_clock", False))
    options = dict(options or {})
    if getattr(agent, "outside_tools", False):
        options.setdefault("serve_twins", True)
        if getattr(agent, "twins_port", 0):
            options.setdefault("twins_port", int(agent.twins_port))
    if getattr(agent, "wire_line", None):  # its audio crossed that line (Twilio: G.711 8 kHz)
        options.setdefault("agent_line", str(agent.wire_line))
    observation, info = env.reset(seed=seed, options=options)
    call = env.call
    assert call is not None
    audio = from_pcm16(observation["audio"])
    results: list[dict[str, Any]] = []
    fault: str | None = None
    late = 0.0
    try:
        agent.reset(info)
    except Exception as exc:
        fault = f"agent failed to start: {type(exc).__name__}: {exc}"
    while fault is None and not call.ended:
        if timeout_s is not None and time.perf_counter() - began > timeout_s:
            fault = f"timeout: the call ran past {timeout_s:g} s"
            break
        try:
            out, actions = agent.step(audio, results)
        except Exception as exc:  # the agent's fault; the environment's errors propagate
            fault = f"agent raised {type(exc).__name__}: {exc}"
            break
        step = call.step(out, actions)
        audio, results = step.audio, step.tool_results
        if pace:
            ahead = call.now_s - (time.perf_counter() - began)
            if ahead > 0:
                time.sleep(ahead)
            else:
                late = max(late, -ahead)
    if not call.ended:  # a fault: end the call where it stands so that it is still graded
        call.step(np.zeros(0), [{"type": "end_call"}])
    close = getattr(agent, "close", None)
    if callable(close):
        try:
            close()
        except Exception as exc:  # closing is the agent's business; the call is over
            fault = fault or f"agent failed to close: {type(exc).__name__}: {exc}"
    final = env.final_info()
    compute = getattr(agent, "compute", None)
    return Played(
        final,
        info,
        time.perf_counter() - began,
        late,
        fault,
        compute.as_dict() if compute is not None else {},
        list(getattr(agent, "log", None) or []),
    )
