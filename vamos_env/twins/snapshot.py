"""Seed both twins through their APIs, verify, freeze, and clone cheaply.

A snapshot is built once per process: a domain's seeder lays its world into
empty twins using only the public clients (the same code would seed real
services), a verifier reads everything back through the same clients and
raises on any disagreement, and the seeded pair is frozen. Every call then gets
``snapshot.clone()``: an independent pair of twins whose writes never reach
the snapshot or another clone. Clones share the snapshot's immutable records
(the twins replace records on write, never mutate them), so cloning copies a
few dictionaries and costs microseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from vamos_env.clients.services import ServiceClients
from vamos_env.twins.fineract import LoanTwin
from vamos_env.twins.stripe import BillingTwin

R = TypeVar("R")


@dataclass(slots=True)
class Twins:
    """One call's pair of services."""

    billing: BillingTwin
    loans: LoanTwin

    def clone(self) -> Twins:
        return Twins(self.billing.clone(), self.loans.clone())

    def clients(self) -> ServiceClients:
        """In-process clients (official Stripe SDK, our Fineract client) bound to these twins."""
        return ServiceClients.in_process(self.billing, self.loans)


@dataclass(slots=True)
class Snapshot(Generic[R]):
    """A frozen, seeded pair of twins. Only clones are ever handed out."""

    _twins: Twins
    report: R
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        seed: Callable[[ServiceClients], R],
        verify: Callable[[ServiceClients, R], None],
        *,
        info: dict[str, Any] | None = None,
    ) -> Snapshot[R]:
        twins = Twins(BillingTwin(), LoanTwin())
        clients = twins.clients()
        try:
            report = seed(clients)
            verify(clients, report)
        finally:
            clients.close()
        # The SDK puts an idempotency key on every POST. Stripe forgets keys after 24 hours
        # and the seeded history is older than that, so clones start without them.
        twins.billing.state.forget_idempotency_keys()
        return cls(twins, report, dict(info or {}))

    def clone(self) -> Twins:
        return self._twins.clone()
