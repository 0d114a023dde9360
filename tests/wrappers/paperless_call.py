"""A single-request task (enable paperless) and a deterministic call that passes it.

Loaded by path from conftest.py (the tests folder is not a package) and handed to the
tests as the ``call`` fixture.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import vamos_env  # noqa: F401  (registers the environment)

TASK = "s-enable_paperless-a06"
ACCOUNT = {
    "account_number": "8550-48787",
    "name_on_account": "Yolanda Brubaker",
    "second_factor": "15701",
}
EMAIL = "yolanda.brubaker@example.com"
ASK = (
    "Thanks for calling Acme Energy. May I have your account number, the full name on the "
    "account, and one second factor such as your postal code?"
)
READ_BACK = f"Thank you. I can email your bills to {EMAIL}. Is that right, and shall I go ahead?"
CLOSE = "Done, paperless billing is on. Anything else?"

# A deterministic call that passes the task in the clean channel (all six checks).
PASSING: list[dict[str, Any]] = [
    {"type": "say", "text": ASK},
    {"type": "tool_call", "name": "verify_caller", "arguments": ACCOUNT},
    {"type": "tool_call", "name": "get_account", "arguments": {}},
    {"type": "say", "text": READ_BACK},
    {"type": "tool_call", "name": "set_paperless_billing", "arguments": {"enabled": True}},
    {"type": "say", "text": CLOSE},
]
CALM_CLEAN = {"task_id": TASK, "persona": "calm", "background": "clean"}


def make_env(**kwargs: Any) -> gym.Env[str, Any]:
    # Exact words in both directions: the ideal recogniser (the clean room has Whisper's).
    kwargs.setdefault("recogniser", "ideal")
    return gym.make("VamosEnergy-v0", tasks="singles", **kwargs)


def run(env: gym.Env[Any, Any], actions: list[Any], **reset: Any) -> list[tuple[Any, ...]]:
    """Reset, then step the actions until the call ends; every step's 5-tuple."""
    env.reset(**reset)
    steps = []
    for action in actions:
        step = env.step(action)
        steps.append(step)
        if step[2] or step[3]:
            break
    return steps
