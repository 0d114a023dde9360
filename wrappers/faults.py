"""``FaultInjection``: seeded service timeouts and 5xx errors, to test an agent's robustness.

The faults are injected at the transport seam, below the official clients: after each
reset the call's tool session is rebuilt on clients whose routes are wrapped by
``FaultyRoutes``. Each request the tools send draws from the call's generator; with
probability ``rate`` it does not reach the twin and instead

- ``server_error``: gets the vendor's own 500 answer (Stripe's ``api_error`` object,
  Fineract's ``error.msg.platform.server.side.error`` body), which the clients raise as
  they would against the real service (``stripe.APIError``, ``FineractError``); or
- ``timeout``: raises what a client sees when the connection times out
  (``stripe.APIConnectionError`` from the Stripe SDK's HTTP layer, ``httpx.ReadTimeout``
  under the Fineract client).

Either way the tool answers the agent with an ``{"error": ...}`` result. A faulted
request never reaches the twin, but earlier requests of the same tool call did: a tool
that writes in several requests (an arrangement is applied, approved, disbursed) can be
left half done, as in a real outage, and the ledger shows it. The grader is untouched,
so a faulted call may fail its expected changes through no fault of the agent: every
fault is listed in ``info["faults_injected"]`` (service, method, path, kind, status,
agent turn), on every step, so that such calls are tagged, never silently counted as
the agent's miss. The runner or the user decides whether to exclude them.

Reproducibility: a call's draws come from ``(seed, reset seed)``; with no reset seed,
from a generator seeded once with ``seed`` and advanced per call. Same seeds, same
agent: same faults.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, SupportsFloat

import gymnasium as gym
import httpx
import numpy as np
import stripe

from vamos_env.clients.services import ServiceClients
from vamos_env.envs.energy.env import VamosEnergyEnv
from vamos_env.envs.energy.session import CallSession
from vamos_env.twins.http import Request, Response, Routes, json_response
from vamos_env.twins.stripe.errors import api_error

FaultKind = Literal["timeout", "server_error"]
Service = Literal["billing", "loans"]
FAULT_KINDS: tuple[FaultKind, ...] = ("timeout", "server_error")
SERVICES: tuple[Service, ...] = ("billing", "loans")

_FINERACT_500 = "An unexpected error occured on the platform server."  # sic: Fineract's words


@dataclass(frozen=True, slots=True)
class InjectedFault:
    """One request that did not reach its service."""

    service: Service
    method: str
    path: str
    kind: FaultKind
    status: int | None  # the HTTP status sent back; None for a timeout
    turn: int  # the agent turn (step) during which it happened; 0 at reset


@dataclass
class FaultPlan:
    """One call's fault draws and the faults injected so far."""

    rng: np.random.Generator
    rate: float
    kinds: tuple[FaultKind, ...] = FAULT_KINDS
    services: tuple[Service, ...] = SERVICES
    turn: int = 0
    injected: list[InjectedFault] = field(default_factory=list)

    def draw(self, service: Service, request: Request) -> FaultKind | None:
        # Two draws per request whatever the outcome, so one fault does not shift the rest.
        hit = self.rng.random() < self.rate
        kind = self.kinds[int(self.rng.integers(len(self.kinds)))]
        if not hit or service not in self.services:
            return None
        status = None if kind == "timeout" else 500
        self.injected.append(
            InjectedFault(service, request.method, request.path, kind, status, self.turn)
        )
        return kind


class FaultyRoutes:
    """A twin's routes, except for the requests the plan picks for a fault."""

    def __init__(self, routes: Routes, service: Service, plan: FaultPlan) -> None:
        self.routes = routes
        self.service = service
        self.plan = plan

    def handle(self, request: Request) -> Response:
        kind = self.plan.draw(self.service, request)
        if kind is None:
            return self.routes.handle(request)
        count = len(self.plan.injected)
        if kind == "timeout":
            if self.service == "billing":
                raise stripe.APIConnectionError(
                    "Request to the billing service timed out (no response was received).",
                    should_retry=True,
                )
            raise httpx.ReadTimeout("The read operation timed out")
        if self.service == "billing":
            request_id = f"req_fault{count:06d}"
            return json_response(500, api_error().body(request_id), {"request-id": request_id})
        return json_response(
            500,
            {
                "developerMessage": _FINERACT_500,
                "httpStatusCode": "500",
                "defaultUserMessage": _FINERACT_500,
                "userMessageGlobalisationCode": "error.msg.platform.server.side.error",
                "errors": [],
            },
        )


class FaultInjection(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Seeded service timeouts and 5xx errors under the tools; faulted calls are tagged."""

    def __init__(
        self,
        env: gym.Env[Any, Any],
        rate: float = 0.1,
        *,
        seed: int = 0,
        kinds: Collection[FaultKind] = FAULT_KINDS,
        services: Collection[Service] = SERVICES,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, rate=rate, seed=seed, kinds=kinds, services=services
        )
        gym.Wrapper.__init__(self, env)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate: expected a probability in [0, 1], got {rate!r}")
        chosen_kinds = tuple(dict.fromkeys(kinds))
        if not chosen_kinds or any(k not in FAULT_KINDS for k in chosen_kinds):
            raise ValueError(f"kinds: expected a non-empty subset of {FAULT_KINDS}, got {kinds!r}")
        chosen_services = tuple(dict.fromkeys(services))
        if not chosen_services or any(s not in SERVICES for s in chosen_services):
            raise ValueError(
                f"services: expected a non-empty subset of {SERVICES}, got {services!r}"
            )
        if not isinstance(env.unwrapped, VamosEnergyEnv):
            raise TypeError(
                f"FaultInjection wraps VamosEnergyEnv, got {type(env.unwrapped).__name__}"
            )
        self.rate = rate
        self.seed = seed
        self.kinds: tuple[FaultKind, ...] = chosen_kinds
        self.services: tuple[Service, ...] = chosen_services
        self._unseeded = np.random.default_rng(seed)
        self._plan: FaultPlan | None = None

    @property
    def faults(self) -> list[InjectedFault]:
        """The faults injected in the current call so far."""
        return list(self._plan.injected) if self._plan else []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        if seed is None:
            rng = np.random.default_rng(self._unseeded.integers(2**63))
        else:
            rng = np.random.default_rng([self.seed, seed])
        self._plan = FaultPlan(rng, self.rate, self.kinds, self.services)
        self._install(self._plan)
        return observation, {**info, "faults_injected": []}

    def _install(self, plan: FaultPlan) -> None:
        base = self.env.unwrapped
        assert isinstance(base, VamosEnergyEnv)
        episode, twins = base._episode, base._twins
        if episode is None:
            raise RuntimeError("the environment has no call in progress after reset")
        # The call has only just started (no tool has run), so a fresh session on faulty
        # clients replaces the environment's one with nothing lost.
        old = episode.session
        clients = ServiceClients.in_process(
            FaultyRoutes(twins.billing, "billing", plan), FaultyRoutes(twins.loans, "loans", plan)
        )
        episode.session = CallSession(clients)
        if isinstance(old, CallSession):
            old.clients.close()

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._plan is None:
            raise RuntimeError("call reset() before step()")
        self._plan.turn += 1
        observation, reward, terminated, truncated, info = self.env.step(action)
        info = {**info, "faults_injected": [asdict(f) for f in self._plan.injected]}
        return observation, reward, terminated, truncated, info
