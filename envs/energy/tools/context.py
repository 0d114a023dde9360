"""What every tool works with during one call: the clients, the gate's state and the writes.

``ToolContext`` is the state a call session hands to each tool: the service clients,
the verification state (attempts, lockout, the verified account), the transfer flag,
the cached reads of the verified account and the log of service writes the current
tool call caused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypeVar

from vamos_env.clients.services import ServiceClients
from vamos_env.clock import TODAY
from vamos_env.envs.energy.tools.billing import Billing
from vamos_env.envs.energy.tools.records import AccountRecords, VerifiedAccount
from vamos_env.envs.energy.tools.refusal import ToolRefusal

MAX_VERIFICATION_FAILURES = 3

Service = Literal["stripe", "fineract"]
T = TypeVar("T")


@dataclass(slots=True)
class Verification:
    """The gate: failed attempts, lockout, and the verified account (if any)."""

    failures: int = 0
    account: VerifiedAccount | None = None

    @property
    def locked(self) -> bool:
        return self.failures >= MAX_VERIFICATION_FAILURES

    @property
    def attempts_remaining(self) -> int:
        return max(0, MAX_VERIFICATION_FAILURES - self.failures)


@dataclass(frozen=True, slots=True)
class ServiceWrite:
    """One write request a tool sent to a service, and whether the service accepted it.

    ``values`` holds what was written (amounts in cents, dates ISO), so a grader can match
    the trace against the services' own ledgers.
    """

    service: Service
    operation: str
    resource: str
    outcome: Literal["succeeded", "failed"]
    values: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "operation": self.operation,
            "resource": self.resource,
            "outcome": self.outcome,
            **self.values,
        }


@dataclass(slots=True)
class ToolContext:
    """Everything a tool may touch. One per call session; ``writes`` is per tool call."""

    clients: ServiceClients
    today: date = TODAY
    verification: Verification = field(default_factory=Verification)
    transferred: bool = False
    transfer_reason: str | None = None
    writes: list[ServiceWrite] = field(default_factory=list)
    billing: Billing = field(init=False)
    _records: AccountRecords | None = None

    def __post_init__(self) -> None:
        self.billing = Billing(self.clients.stripe)

    @property
    def account(self) -> VerifiedAccount:
        """The verified account; tools behind the gate only run when it is set."""
        account = self.verification.account
        if account is None:  # the session's gate makes this unreachable for agents
            raise ToolRefusal("The caller is not verified.")
        return account

    @property
    def records(self) -> AccountRecords:
        """Reads of the verified account, cached until this session writes."""
        account = self.account
        if self._records is None or self._records.account != account:
            self._records = AccountRecords(self.billing, self.clients.fineract, account, self.today)
        return self._records

    def write(
        self,
        service: Service,
        operation: str,
        resource: str | int | Callable[[T], str | int],
        send: Callable[[], T],
        **values: Any,
    ) -> T:
        """Send one write request through ``send`` and log it, accepted or not.

        ``resource`` names what was written; a callable gets it from the answer (a new
        loan's id), and a failed create is then logged with an empty resource. A failed
        write is logged with ``outcome="failed"`` and the service's error code, then the
        error propagates to the tool. Cached reads are dropped either way: a refused
        payment still leaves a failed charge in the billing ledger.
        """
        try:
            answer = send()
        except Exception as exc:
            failure = {**values, "error_code": getattr(exc, "code", None)}
            decline = getattr(getattr(exc, "error", None), "decline_code", None)
            if decline:
                failure["decline_code"] = decline
            self._log(service, operation, "" if callable(resource) else resource, "failed", failure)
            raise
        name = resource(answer) if callable(resource) else resource
        self._log(service, operation, name, "succeeded", values)
        return answer

    def _log(
        self,
        service: Service,
        operation: str,
        resource: str | int,
        outcome: Literal["succeeded", "failed"],
        values: dict[str, Any],
    ) -> None:
        self.writes.append(ServiceWrite(service, operation, str(resource), outcome, values))
        self.forget_reads()

    def forget_reads(self) -> None:
        self._records = None
