"""What the episode needs of a channel: two directions, nothing else.

The text channel, the audio channel and a replay's recorded channel all fit.
"""

from __future__ import annotations

from typing import Protocol


class Channel(Protocol):
    def to_agent(self, caller_text: str) -> list[str]:
        """What the agent receives for one caller turn: the turn, then any spurious turns."""
        ...

    def to_caller(self, agent_text: str) -> str:
        """What the caller hears of one agent reply (all of it, or its first part if cut)."""
        ...
