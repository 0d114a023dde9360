"""The messages of one call, shared by the episode loop, the callers, the grader and the runner.

A ``Transcript`` is the ordered list of ``Turn``s of a call: what the caller said
(and what the agent heard of it after the channel), what the agent said (and what
the caller heard of it), and the agent's tool calls with their results. Tool
results carry the service writes they caused, so the grader can compare the
trace with the services' ledgers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Speaker = Literal["caller", "agent", "tool"]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCall(_Message):
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(_Message):
    call_id: str
    name: str
    ok: bool
    result: dict[str, Any]
    # Each write: {"service": "stripe"|"fineract", "operation", "resource", "outcome", ...}.
    writes: list[dict[str, Any]] = Field(default_factory=list)
    verified: bool = False  # whether the caller was verified when the call was made


class Turn(_Message):
    """One step of the call.

    For speech, ``text`` is what the speaker said and ``heard`` what reached the
    other side after the channel (``None`` when identical). A ``spurious`` caller
    turn is background speech the agent received as if the caller said it; a
    ``cut`` agent turn was interrupted by a (false) barge-in.
    """

    index: int = Field(ge=0)
    speaker: Speaker
    text: str = ""
    heard: str | None = None
    spurious: bool = False
    cut: bool = False
    tool_call: ToolCall | None = None
    tool_result: ToolResult | None = None


class Transcript(_Message):
    task_id: str
    turns: list[Turn] = Field(default_factory=list)

    def said_by(self, speaker: Speaker) -> list[Turn]:
        return [t for t in self.turns if t.speaker == speaker and t.tool_call is None]

    def tool_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.tool_call is not None]
