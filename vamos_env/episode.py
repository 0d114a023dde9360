"""One call: the turn loop shared by the Gymnasium environment and the runner.

The caller opens; every agent action is a ``say``, a ``tool_call`` or an
``end_call``. Tool calls run in the call's session against its own clone of the
services and their results go back to the agent only. Speech goes through the
channel to the caller (who may hear it cut short) and the caller's reply comes
back through the channel (possibly misheard, possibly with background speech
arriving as extra turns). The call ends when the caller hangs up, the agent ends
it, the agent has said its closing words after a transfer, or the turn limit is
reached (truncated). Then the grader turns (task, transcript, trace, ledgers)
into a verdict.

Everything here is deterministic given the caller's and the channel's generators
and a deterministic agent.

Text enters a call here (the agent's actions, the caller's and the channel's words), so
here it is made storable: code points UTF-8 cannot encode are replaced and counted
(``replaced_code_points``), and tool arguments beyond ``ArgumentLimits`` (too deep, too
large, not JSON values) are refused with a tool error naming the limit, without reaching
the tools. Every transcript an episode builds can be written to the results store.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from vamos_env.actions import (
    ActionError,
    EndCall,
    ParsedActions,
    Say,
    ToolCallAction,
    parse_action,
    shown,
)
from vamos_env.callers.base import CUT_OFF, Caller, HangUp, Utterance
from vamos_env.channel.base import Channel
from vamos_env.storable import (
    DEFAULT_LIMITS,
    ArgumentLimits,
    LimitExceeded,
    storable_json,
    storable_text,
)
from vamos_env.types import ToolCall, ToolResult, Transcript, Turn

EndReason = Literal["hang_up", "end_call", "transfer", "turn_limit"]


@dataclass
class StepOutcome:
    """What one agent step produced."""

    observation: str
    ended: bool = False
    truncated: bool = False
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


@dataclass
class Episode:
    """The state of one call in progress."""

    task_id: str
    session: Any  # a CallSession: .call(name, arguments) -> dict, .trace, .transferred
    caller: Caller
    channel: Channel
    max_agent_turns: int = 60
    argument_limits: ArgumentLimits = DEFAULT_LIMITS
    transcript: Transcript = field(init=False)
    agent_turns: int = 0
    malformed_actions: int = 0
    replaced_code_points: int = 0  # in the agent's, the caller's and the channel's text
    end_reason: EndReason | None = None
    _closing_due: bool = False
    _traced: int = 0

    def __post_init__(self) -> None:
        self.transcript = Transcript(task_id=self.task_id)

    # -- the caller's side -------------------------------------------------------------
    def start(self) -> str:
        """The caller's opening words as the agent receives them."""
        return self._caller_speaks(self.caller.open())

    def _add(self, **turn: Any) -> Turn:
        added = Turn(index=len(self.transcript.turns), **turn)
        self.transcript.turns.append(added)
        return added

    def _clean(self, text: str) -> str:
        clean, replaced = storable_text(text)
        self.replaced_code_points += replaced
        return clean

    def _caller_speaks(self, utterance: Utterance) -> str:
        said = self._clean(utterance.text)
        received = [self._clean(text) for text in self.channel.to_agent(said)]
        first = received[0] if received else ""
        self._add(speaker="caller", text=said, heard=None if first == said else first)
        for extra in received[1:]:
            self._add(speaker="caller", text=extra, spurious=True)
        return "\n".join(text for text in received if text)

    # -- the agent's side --------------------------------------------------------------
    @property
    def ended(self) -> bool:
        return self.end_reason is not None

    def step(self, raw_action: Any) -> StepOutcome:
        """Apply one agent action (any accepted shape). Never raises for a bad action."""
        if self.ended:
            raise RuntimeError("the call has ended; reset before stepping again")
        self.agent_turns += 1
        parsed = parse_action(raw_action)
        if isinstance(parsed, ActionError):
            self.malformed_actions += 1
            outcome = StepOutcome(
                json.dumps(
                    {
                        "error": f"action not understood: {parsed.message}",
                        "received": parsed.received,
                    }
                ),
                error=parsed.message,
            )
        else:
            self.replaced_code_points += parsed.replaced
            outcome = self._apply(parsed)
        if not outcome.ended and self.agent_turns >= self.max_agent_turns:
            self.end_reason = "turn_limit"
            outcome.ended = True
            outcome.truncated = True
        return outcome

    def _apply(self, parsed: ParsedActions) -> StepOutcome:
        caller_reply: str | None = None
        results: list[dict[str, Any]] = []
        for action in parsed.actions:
            if isinstance(action, EndCall):
                self.end_reason = "end_call"
                return StepOutcome("", ended=True, tool_results=results)
            if isinstance(action, Say):
                caller_reply = self._say(action.text)
                if self.ended:
                    return StepOutcome(caller_reply or "", ended=True, tool_results=results)
            elif isinstance(action, ToolCallAction):
                results.append(self._tool(action))
        if not results:
            return StepOutcome(caller_reply or "")
        if caller_reply is None and len(results) == 1:
            return StepOutcome(json.dumps(results[0]["result"]), tool_results=results)
        payload: dict[str, Any] = {"tool_results": results}
        if caller_reply is not None:
            payload = {"caller": caller_reply, **payload}
        return StepOutcome(json.dumps(payload), tool_results=results)

    def _say(self, text: str) -> str:
        heard = self._clean(self.channel.to_caller(text))
        turn = self._add(
            speaker="agent", text=text, heard=None if heard == text else heard, cut=heard != text
        )
        if self._closing_due:
            # The agent's closing words after a transfer: the caller hears them, the call ends.
            self.end_reason = "transfer"
            return ""
        cut_off = heard != text and heard.strip() != ""
        reply = self.caller.hear(f"{heard} {CUT_OFF}" if cut_off else heard)
        if isinstance(reply, HangUp):
            words = self._clean(reply.text) if reply.text else ""
            if words:
                self._add(speaker="caller", text=words)
            self.end_reason = "hang_up"
            return words
        if reply.cut_in_after_words is not None:
            # The caller spoke over the agent: it heard only the first words.
            kept = " ".join(heard.split()[: reply.cut_in_after_words])
            turn.heard, turn.cut = kept, True
        return self._caller_speaks(reply)

    def _checked_arguments(self, arguments: Any) -> Any:
        """The arguments made storable for the session, or why they are refused."""
        if arguments is None:
            return None
        if isinstance(arguments, str):
            limits = self.argument_limits
            if len(arguments) > limits.max_bytes:
                return LimitExceeded(
                    f"tool arguments may be at most {limits.max_bytes} bytes of JSON "
                    f"(max_bytes); got {len(arguments)} characters"
                )
            if not arguments.strip():
                return arguments
            try:
                decoded = json.loads(arguments)
            except RecursionError:
                return LimitExceeded(
                    f"tool arguments may nest at most {limits.max_depth} levels deep (max_depth)"
                )
            except ValueError:
                return self._clean(arguments)  # not JSON: the session says so
            arguments = decoded
        checked = storable_json(arguments, self.argument_limits)
        if isinstance(checked, LimitExceeded):
            return checked
        value, replaced = checked
        self.replaced_code_points += replaced
        return value

    def _refuse_tool(self, action: ToolCallAction, refusal: LimitExceeded) -> dict[str, Any]:
        """A tool call whose arguments are beyond the limits: an error result, no tool run."""
        call_id = action.call_id or f"call_refused_{self.agent_turns}"
        result = {"error": f"Arguments refused: {refusal.message}. Nothing was run."}
        self._add(
            speaker="tool",
            tool_call=ToolCall(
                call_id=call_id, name=action.name, arguments={"refused": shown(action.arguments)}
            ),
            tool_result=ToolResult(
                call_id=call_id,
                name=action.name,
                ok=False,
                result=result,
                verified=bool(getattr(self.session, "verified", False)),
            ),
        )
        return {"tool_call_id": call_id, "name": action.name, "result": result}

    def _tool(self, action: ToolCallAction) -> dict[str, Any]:
        arguments = self._checked_arguments(action.arguments)
        if isinstance(arguments, LimitExceeded):
            return self._refuse_tool(action, arguments)
        action = ToolCallAction(action.name, arguments, action.call_id)
        result = self.session.call(action.name, action.arguments)
        entry = self.session.trace[-1] if len(self.session.trace) > self._traced else None
        self._traced = len(self.session.trace)
        call_id = action.call_id or (
            entry.call_id if entry is not None else f"call_{self.agent_turns}"
        )
        # Record the arguments as the session parsed them: an OpenAI-style JSON string becomes
        # the dict the grader reads; only unparseable text stays raw.
        if entry is not None and isinstance(entry.arguments, dict):
            arguments = entry.arguments
        elif isinstance(action.arguments, dict):
            arguments = action.arguments
        else:
            arguments = {"raw": action.arguments}
        writes = [w.as_dict() for w in entry.writes] if entry is not None else []
        self._add(
            speaker="tool",
            tool_call=ToolCall(call_id=call_id, name=action.name, arguments=arguments),
            tool_result=ToolResult(
                call_id=call_id,
                name=action.name,
                ok=bool(entry.ok) if entry is not None else "error" not in result,
                result=result,
                writes=writes,
                verified=bool(entry.verified) if entry is not None else False,
            ),
        )
        if action.name == "transfer_to_human" and getattr(self.session, "transferred", False):
            self._closing_due = True
        return {"tool_call_id": call_id, "name": action.name, "result": result}


Grader = Callable[[Episode], Any]
