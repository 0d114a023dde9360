"""Small agents for the runner's tests, loaded by path (the tests folder is not a package).

They are not good agents: they are cheap, deterministic, and exercise each path of the
runner (a verified call that the grader judges, a crash, a hang, an async model wait).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any

from vamos_env.envs.energy.env import resolve_tasks


def _brief(task_id: str) -> Any:
    for tasks in ("exam", "singles"):
        for task in resolve_tasks(tasks).tasks:
            if task.task_id == task_id:
                return task.caller
    raise KeyError(task_id)


class VerifyThenLeave:
    """Greets, verifies with the caller's details (read from the task: a test oracle), reads
    the account, says goodbye and ends the call."""

    def reset(self, info: Mapping[str, Any]) -> None:
        brief = _brief(str(info["task_id"]))
        self.plan: list[dict[str, Any]] = [
            {
                "type": "say",
                "text": "Acme Energy, this is Rory. Your account number, name and "
                "one second factor, please?",
            },
            {
                "type": "tool_call",
                "name": "verify_caller",
                "arguments": {
                    "account_number": brief.account_number,
                    "name_on_account": brief.full_name,
                    "second_factor": brief.second_factor.value,
                },
            },
            {"type": "tool_call", "name": "get_account", "arguments": {}},
            {"type": "say", "text": "Thank you, you are verified. Goodbye."},
            {"type": "end_call"},
        ]

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.plan.pop(0) if self.plan else {"type": "end_call"}


class Crashes(VerifyThenLeave):
    """Raises on its third action."""

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
        if len(self.plan) == 2:
            raise RuntimeError("the model server went away")
        return super().act(observation, info)


class Slow(VerifyThenLeave):
    """Takes 0.2 s per action (for the timeout)."""

    delay_s = 0.2

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
        time.sleep(self.delay_s)
        return super().act(observation, info)


class Sluggish(Slow):
    """0.03 s per action: a run of a few dozen calls lasts long enough to be killed midway."""

    delay_s = 0.03


class AsyncWaiter(VerifyThenLeave):
    """An LLM-bound stand-in: every action waits ``delay_s`` on the event loop."""

    offline = False
    delay_s = 0.05

    async def areset(self, info: Mapping[str, Any]) -> None:
        self.reset(info)

    async def aact(self, observation: str, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
        await asyncio.sleep(self.delay_s)
        return self.act(observation, info)


class PlatformDown(VerifyThenLeave):
    """Its model fails on the second action (the agent's miss), and the exception claims to
    be a platform fault, which the runner must not believe."""

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
        if len(self.plan) == 4:
            from vamos_env.agents.openai_agent import ModelCallError

            error = ModelCallError("openai", "the model vendor answered 503", status=503)
            error.platform_fault = True  # type: ignore[attr-defined]
            raise error
        return super().act(observation, info)


class Counted(VerifyThenLeave):
    """Counts how many of it were built in this process (agents are reused across calls)."""

    built = 0

    def __init__(self) -> None:
        type(self).built += 1


class PeeksFirst(VerifyThenLeave):
    """Reads the account before verifying the caller: the gate fails, with evidence."""

    def reset(self, info: Mapping[str, Any]) -> None:
        super().reset(info)
        self.plan.insert(1, {"type": "tool_call", "name": "list_bills", "arguments": {}})


class Waiver(VerifyThenLeave):
    """Promises what no tool can do: the red-team judge fails it on scope discipline."""

    def reset(self, info: Mapping[str, Any]) -> None:
        super().reset(info)
        self.plan.insert(
            3,
            {"type": "say", "text": "I can waive the late fee and give you a discount, I promise."},
        )


class Mangler:
    """Emits what broke runs before: lone surrogates in its words (a model that split an
    emoji) and tool arguments nested 300 levels deep, as objects and as JSON text."""

    def reset(self, info: Mapping[str, Any]) -> None:
        deep: dict[str, Any] = {}
        cursor = deep
        for _ in range(300):
            cursor["a"] = {}
            cursor = cursor["a"]
        self.plan: list[Any] = [
            {"type": "say", "text": "Hello \ud83d, Acme Energy here \ud83d\ude00"},
            {"type": "tool_call", "name": "verify_caller", "arguments": deep},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": None}, {"type": "text", "text": "One \udc00"}],
                "tool_calls": [
                    {
                        "id": "call_\ud800",
                        "type": "function",
                        "function": {"name": "get_account", "arguments": json.dumps(deep)},
                    }
                ],
            },
            {"type": "end_call"},
        ]

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> Any:
        return self.plan.pop(0) if self.plan else {"type": "end_call"}
