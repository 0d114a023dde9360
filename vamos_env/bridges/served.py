"""One call's own twins, served on loopback to an outside agent, with the call's request log.

``ServedTwins`` puts the very twin objects of a call (``Twins``: the ones the call's
ledger is read from) behind a ``TwinServer`` on a free loopback port, together with a
Twilio call-control twin for transfer and hang-up (``vamos_env.twins.telephony``). Every
request the agent sends is answered by those twins, so its writes land in the ledgers the
grader reads, and is logged as a ``LoggedRequest``: when it was answered on the call's
clock (``clock()``, e.g. ``lambda: call.now_s`` in a duplex call, the transcript's turn
count in a text call), the method, path, parsed query and body, the status and the parsed
answer, and which service answered. Admin routes (``/__vamos/``) are never logged.

``env`` is what an outside launcher exports for the agent: the published benchmark's six
service variables and ``RORY_REFERENCE_TIME`` (``ServiceEndpoints.as_env``), plus
``TWILIO_API_BASE``, ``TWILIO_ACCOUNT_SID``, ``TWILIO_AUTH_TOKEN`` and ``TWILIO_CALL_SID``.

The log is safe to read from any thread while the server answers (a copy under a lock);
the server answers one request at a time, so the log's order is the order the twins saw.
``vamos_env.bridges.trace.rebuild_trace`` turns the log into the grader's tool events.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qsl

from vamos_env.clients.config import ServiceEndpoints
from vamos_env.twins.http import Request, Response, Routes
from vamos_env.twins.serve import TwinServer
from vamos_env.twins.stripe.errors import StripeError
from vamos_env.twins.stripe.forms import decode_form
from vamos_env.twins.telephony import TWILIO_PREFIX, CallControlTwin

Service = Literal["stripe", "fineract", "twilio", "other"]


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One request an outside agent sent to the served twins, and the answer it got."""

    time_s: float  # on the call's clock, when the twins answered
    method: str  # upper case
    path: str  # without the query
    query: dict[str, Any]  # parsed (Stripe's bracket notation nested)
    body: Any  # a form as a dict (Stripe nested), JSON as parsed, None when empty
    status: int
    response: Any  # the answer's JSON, parsed (None when not JSON)
    service: Service

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def as_dict(self) -> dict[str, Any]:
        return {
            "time_s": self.time_s,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "body": self.body,
            "status": self.status,
            "response": self.response,
            "service": self.service,
        }


def service_of(path: str) -> Service:
    if path == "/v1" or path.startswith("/v1/"):
        return "stripe"
    if path.startswith("/fineract-provider/"):
        return "fineract"
    if path.startswith(TWILIO_PREFIX):
        return "twilio"
    return "other"


def _form(raw: str, *, nested: bool) -> dict[str, Any]:
    if nested:
        try:
            return decode_form(raw)
        except StripeError:  # conflicting brackets: the twin refused it; keep the pairs
            pass
    return dict(parse_qsl(raw, keep_blank_values=True))


def _json(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def logged(request: Request, response: Response, time_s: float) -> LoggedRequest:
    """The log entry of one answered request (query, body and answer parsed)."""
    service = service_of(request.path)
    stripe_like = service == "stripe"
    body: Any = None
    if request.body:
        content_type = (request.header("content-type") or "").lower()
        if "json" in content_type or service == "fineract":
            body = _json(request.body)
        else:
            body = _form(request.body.decode("utf-8", "replace"), nested=stripe_like)
    return LoggedRequest(
        time_s=float(time_s),
        method=request.method.upper(),
        path=request.path,
        query=_form(request.query, nested=stripe_like) if request.query else {},
        body=body,
        status=response.status,
        response=_json(response.body),
        service=service,
    )


class ServedTwins:
    """Serve one call's twins (and its Twilio call control) on loopback, logging requests.

    ``twins`` is the call's ``Twins`` (anything with ``billing`` and ``loans`` routes) or
    a ``(billing, loans)`` pair; ``clock`` gives seconds on the call's clock. Use it as a
    context manager (or ``start``/``stop``); ``base_url``, ``env`` and ``log`` are read
    while it runs and after.
    """

    def __init__(
        self,
        twins: Any,
        *,
        clock: Callable[[], float],
        host: str = "127.0.0.1",
        port: int = 0,
        calls: CallControlTwin | None = None,
    ) -> None:
        billing, loans = _routes(twins)
        self.twins = twins
        self.clock = clock
        self.calls = calls or CallControlTwin()
        self._lock = threading.Lock()
        self._log: list[LoggedRequest] = []
        self.server = TwinServer(billing, loans, host=host, port=port, calls=self.calls,
                                 on_request=self._record)  # fmt: skip
        self._started = False

    @classmethod
    def from_env(cls, env: Any, *, clock: Callable[[], float], **options: Any) -> ServedTwins:
        """The twins of the call a ``VamosEnergyEnv`` (or the duplex env) was last reset to."""
        twins = getattr(env, "_twins", None)
        if twins is None:
            raise ValueError("expected an environment that has been reset (no call's twins yet)")
        return cls(twins, clock=clock, **options)

    # -- the log --------------------------------------------------------------------------
    def _record(self, request: Request, response: Response) -> None:
        entry = logged(request, response, self.clock())
        with self._lock:
            self._log.append(entry)

    @property
    def log(self) -> list[LoggedRequest]:
        """A copy of the log so far, in the order the twins answered."""
        with self._lock:
            return list(self._log)

    def __len__(self) -> int:
        with self._lock:
            return len(self._log)

    # -- where the agent finds it ---------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def endpoints(self) -> ServiceEndpoints:
        return ServiceEndpoints(stripe_api_base=self.base_url, fineract_api_base=self.base_url)

    @property
    def env(self) -> dict[str, str]:
        """The variables an outside launcher passes to the agent under test."""
        return {
            **self.endpoints.as_env(),
            "TWILIO_API_BASE": self.base_url,
            "TWILIO_ACCOUNT_SID": self.calls.account_sid,
            "TWILIO_AUTH_TOKEN": self.calls.auth_token,
            "TWILIO_CALL_SID": self.calls.call_sid,
        }

    # -- running --------------------------------------------------------------------------
    def start(self) -> ServedTwins:
        if not self._started:
            self.server.start()
            self._started = True
        return self

    def stop(self) -> None:
        if self._started:
            self.server.stop()
            self._started = False

    def __enter__(self) -> ServedTwins:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def _routes(twins: Any) -> tuple[Routes, Routes]:
    if isinstance(twins, tuple) and len(twins) == 2:
        return twins[0], twins[1]
    billing, loans = getattr(twins, "billing", None), getattr(twins, "loans", None)
    if billing is None or loans is None:
        raise TypeError(
            "expected the call's Twins (with .billing and .loans) or a (billing, loans) pair, "
            f"got {type(twins).__name__}"
        )
    return billing, loans
