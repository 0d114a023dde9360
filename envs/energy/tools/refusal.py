"""How a tool says no: raise ``ToolRefusal``; the call session returns ``{"error": ...}``."""

from __future__ import annotations

from typing import Any


class ToolRefusal(Exception):
    """A tool declines: ``message`` is the plain sentence; ``say`` and ``details`` are extra.

    The session turns it into the result ``{"error": message, "say"?: ..., **details}``.
    """

    def __init__(self, message: str, *, say: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.say = say
        self.details = details

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.message}
        if self.say is not None:
            out["say"] = self.say
        out.update(self.details)
        return out
