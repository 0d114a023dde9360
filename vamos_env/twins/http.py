"""The one network seam: a twin's routes turn a Request into a Response.

Routes never see sockets. The in-process transports (transport.py) and the
loopback server (serve.py) both build a Request, call ``handle`` and send the
Response back, so client code cannot tell which one it is talking to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Request:
    method: str  # upper case: GET, POST, DELETE, PUT
    path: str  # path only, no query, e.g. "/v1/customers/cus_123"
    query: str = ""  # raw query string, without the leading "?"
    headers: Mapping[str, str] = field(default_factory=dict)  # keys lower case
    body: bytes = b""

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)


@dataclass(slots=True)
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> Response:
    out = {"content-type": "application/json"}
    if headers:
        out.update(headers)
    return Response(status, json.dumps(payload, separators=(",", ":")).encode(), out)


class Routes(Protocol):
    """Anything that answers vendor HTTP requests (a twin's route table)."""

    def handle(self, request: Request) -> Response: ...


def lower_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    return {k.lower(): v for k, v in (headers or {}).items()}
