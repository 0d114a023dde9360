"""``LoanTwin``: the Apache Fineract twin as one ``Routes`` object, cheap to clone.

It holds one ``FineractState`` per tenant, the accepted Basic-auth users, and nothing
else; ``handle`` answers a ``Request`` through ``routes.handle``. ``clone()`` copies
only the states' top-level dicts, so every call of an episode can start from a fresh
copy of one seeded snapshot.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import date
from types import MappingProxyType

from vamos_env import clock
from vamos_env.twins.fineract import routes
from vamos_env.twins.fineract.state import FineractState
from vamos_env.twins.http import Request, Response

DEFAULT_USERS: Mapping[str, str] = MappingProxyType({"mifos": "password"})


class LoanTwin:
    """An in-memory Fineract (``/fineract-provider/api/v1``) answering as the real server."""

    __slots__ = ("_states", "_tenants", "_users")

    def __init__(
        self,
        users: Mapping[str, str] = DEFAULT_USERS,
        tenants: Collection[str] = ("default",),
        business_date: date = clock.TODAY,
    ) -> None:
        names = tuple(dict.fromkeys(tenants))
        if not names:
            raise ValueError("LoanTwin needs at least one tenant")
        self._users: Mapping[str, str] = MappingProxyType(dict(users))
        self._tenants: tuple[str, ...] = names
        self._states: dict[str, FineractState] = {t: FineractState(business_date) for t in names}

    @property
    def state(self) -> FineractState:
        """The first tenant's state (read it; write through the API)."""
        return self._states[self._tenants[0]]

    @property
    def tenants(self) -> tuple[str, ...]:
        return self._tenants

    def state_of(self, tenant: str) -> FineractState:
        return self._states[tenant]

    def handle(self, request: Request) -> Response:
        return routes.handle(self._states, self._users, request)

    def clone(self) -> LoanTwin:
        twin = object.__new__(LoanTwin)
        twin._users = self._users
        twin._tenants = self._tenants
        twin._states = {name: state.clone() for name, state in self._states.items()}
        return twin
