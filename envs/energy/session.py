"""One phone call's tool session: the single entry point for the 16 tools, the gate, the trace.

``CallSession.call(name, arguments)`` is how every agent reaches the tools. It:

1. parses the arguments (a dict, or a JSON string of one; ``None`` or an empty string
   mean "no arguments"),
2. validates them with the tool's strict model; a bad argument is an ``{"error": ...}``
   result naming the argument and what was expected, and nothing runs,
3. applies the gate: before a successful ``verify_caller`` only ``verify_caller`` and
   ``transfer_to_human`` run; every other tool is refused with no account data. After a
   transfer no tool but ``transfer_to_human`` runs,
4. runs the tool on the verified account only,
5. adds a ``*_display`` money string beside every ``*_cents`` integer of the result,
6. appends a ``TraceEntry``: call id (``call_1``, ...), tool, arguments, result, ok, whether
   the caller was verified when the call was made, and the service writes the call sent.

No exception escapes ``call``: service errors and even bugs come back as ``{"error": ...}``
results (before verification without the services' messages, which could carry data).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx
import stripe
from pydantic import ValidationError

from vamos_env.clients.fineract import FineractError
from vamos_env.clients.services import ServiceClients
from vamos_env.clock import TODAY
from vamos_env.envs.energy.policy import format_cents
from vamos_env.envs.energy.tools.arguments import describe_invalid_arguments, kind_of
from vamos_env.envs.energy.tools.catalog import TOOL_NAMES, TOOLS, ToolSpec
from vamos_env.envs.energy.tools.context import ServiceWrite, ToolContext
from vamos_env.envs.energy.tools.records import VerifiedAccount
from vamos_env.envs.energy.tools.refusal import ToolRefusal

NOT_VERIFIED = (
    "The caller is not verified. Ask for the account number, the full name on the account "
    "and one second factor, then call verify_caller. Before verification only verify_caller "
    "and transfer_to_human can be used."
)
LOCKED_OUT = (
    "Verification is locked for this call after three failed attempts, so account tools "
    "cannot be used. Offer to transfer the caller to a colleague."
)
TRANSFERRED = "The call has been transferred to a colleague; no further tools can be used."


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One tool call as it happened."""

    call_id: str
    tool: str
    arguments: Any
    result: dict[str, Any]
    ok: bool
    verified: bool
    writes: tuple[ServiceWrite, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "ok": self.ok,
            "verified": self.verified,
            "writes": [w.as_dict() for w in self.writes],
        }


class CallSession:
    """The tools of one call, bound to that call's service clients."""

    def __init__(self, clients: ServiceClients, *, today: date = TODAY) -> None:
        self._ctx = ToolContext(clients=clients, today=today)
        self._trace: list[TraceEntry] = []

    # --- state ------------------------------------------------------------------------

    @property
    def clients(self) -> ServiceClients:
        return self._ctx.clients

    @property
    def trace(self) -> tuple[TraceEntry, ...]:
        return tuple(self._trace)

    @property
    def verified(self) -> bool:
        return self._ctx.verification.account is not None

    @property
    def verified_account(self) -> VerifiedAccount | None:
        return self._ctx.verification.account

    @property
    def failed_attempts(self) -> int:
        return self._ctx.verification.failures

    @property
    def locked(self) -> bool:
        return self._ctx.verification.locked

    @property
    def transferred(self) -> bool:
        return self._ctx.transferred

    @property
    def transfer_reason(self) -> str | None:
        return self._ctx.transfer_reason

    def writes(self) -> list[dict[str, Any]]:
        """Every service write of the call so far, in order, each tagged with its call id."""
        return [
            {"call_id": entry.call_id, **write.as_dict()}
            for entry in self._trace
            for write in entry.writes
        ]

    def refresh(self) -> None:
        """Forget cached reads (only needed when something outside the session wrote)."""
        self._ctx.forget_reads()

    # --- the entry point --------------------------------------------------------------

    def call(self, name: Any, arguments: Mapping[str, Any] | str | None = None) -> dict[str, Any]:
        """Run one tool call and record it; never raises."""
        verified = self.verified
        self._ctx.writes = []
        recorded_args: Any = arguments
        try:
            parsed = _parse_arguments(arguments)
            if isinstance(parsed, dict):
                recorded_args = parsed
            result = self._dispatch(name, parsed)
        except Exception as exc:  # the last line of defence: a bug is still a result
            result = {
                "error": f"The tool failed unexpectedly ({type(exc).__name__}). Any change it "
                "made is listed in the call trace; do not retry without telling the caller."
            }
        result = with_displays(result) or {"error": "The tool returned nothing."}
        entry = TraceEntry(
            call_id=f"call_{len(self._trace) + 1}",
            tool=name if isinstance(name, str) else repr(name),
            arguments=recorded_args,
            result=result,
            ok="error" not in result,
            verified=verified,
            writes=tuple(self._ctx.writes),
        )
        self._trace.append(entry)
        self._ctx.writes = []
        return result

    def _dispatch(self, name: Any, parsed: dict[str, Any] | str) -> dict[str, Any]:
        spec = TOOLS.get(name) if isinstance(name, str) else None
        if spec is None:
            return {"error": "Unknown tool. The tools are: " + ", ".join(TOOL_NAMES) + "."}
        if isinstance(parsed, str):
            return {"error": parsed}
        if self._ctx.transferred and spec.name != "transfer_to_human":
            return {"error": TRANSFERRED}
        try:
            args = spec.arguments.model_validate(parsed)
        except ValidationError as exc:
            return {"error": describe_invalid_arguments(exc, spec.arguments)}
        if not spec.before_verification and not self.verified:
            return {"error": LOCKED_OUT if self.locked else NOT_VERIFIED}
        return self._run(spec, args)

    def _run(self, spec: ToolSpec, args: Any) -> dict[str, Any]:
        try:
            return spec.run(self._ctx, args)
        except ToolRefusal as refusal:
            return refusal.result()
        except stripe.StripeError as exc:
            return {"error": self._service_error("billing", exc.user_message or str(exc))}
        except FineractError as exc:
            return {"error": self._service_error("loan", f"{exc.code or exc.status}")}
        except (httpx.HTTPError, OSError):
            return {"error": self._service_error("loan", None)}

    def _service_error(self, service: str, detail: str | None) -> str:
        if self.verified and detail:
            return f"The {service} service refused the request: {detail}"
        # Before verification a service's own words could name account data: keep them out.
        return f"The {service} service could not complete the request; try again shortly."


def _parse_arguments(arguments: Any) -> dict[str, Any] | str:
    """The arguments as a dict, or a sentence saying why they are not an object."""
    if arguments is None:
        return {}
    if isinstance(arguments, str | bytes):
        text = arguments.decode("utf-8", "replace") if isinstance(arguments, bytes) else arguments
        if not text.strip():
            return {}
        try:
            arguments = json.loads(text)
        except (ValueError, RecursionError):  # bad JSON, a 5,000-digit number, deep nesting
            return (
                'Arguments must be a JSON object such as {"bill_id": "in_..."}; got text that '
                "is not valid JSON."
            )
    if isinstance(arguments, Mapping):
        return {str(k): v for k, v in arguments.items()}
    return f"Arguments must be a JSON object of named arguments; got {kind_of(arguments)}."


def with_displays(value: Any) -> Any:
    """A copy with ``X_display`` (e.g. "$214.07") beside every integer ``X_cents`` lacking one."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key] = with_displays(item)
            if (
                isinstance(key, str)
                and key.endswith("_cents")
                and isinstance(item, int)
                and not isinstance(item, bool)
            ):
                display = key[: -len("_cents")] + "_display"
                if display not in value:
                    out[display] = format_cents(item)
        return out
    if isinstance(value, list | tuple):
        return [with_displays(item) for item in value]
    return value
