"""The twins' routes on a loopback port, for agents and clients outside this process.

``TwinServer`` answers Stripe requests under ``/v1/`` and Fineract requests
under ``/fineract-provider/`` on one port, exactly as the in-process transports
do (both call the same ``handle``). With a snapshot it can return to the seeded
state on ``POST /__vamos/reset``, so an outside agent can run call after call.
It binds to loopback only; it is a test double, not a production server, but one that a
browser on the same machine can reach, so:

- **Host check.** A request whose ``Host`` header is not a loopback name (or one named in
  ``allowed_hosts``) is refused with 421: a page on another site that re-points its own
  name at 127.0.0.1 (DNS rebinding) cannot read or write the twins.
- **Admin credentials.** Every ``/__vamos/`` route needs ``Authorization: Bearer TOKEN``
  (``admin_token``, random unless given): a cross-site form POST cannot reset the world,
  and neither can an agent under test that was handed only the services' variables.
- **Bodies.** A ``Content-Length`` that is not a whole number, is negative, or is above
  ``MAX_BODY`` gets 400 (413 when too large) and the connection is closed; a client that
  promises more than it sends is dropped after ``REQUEST_TIMEOUT_S``.
- **Backlog.** The listen queue holds ``BACKLOG`` connections (the standard library's
  default is 5, which stalls a burst of new connections for a second or more on the
  kernel's SYN retry).

Two optional extras serve one call to an outside agent (``vamos_env.bridges.served``):
``calls`` answers the Twilio call-control route under ``/2010-04-01/`` (transfer and
hang-up, ``vamos_env.twins.telephony``), and ``on_request(request, response)`` sees every
request the services answered (never an admin route), in the order they were answered,
while the server's lock is held.
"""

from __future__ import annotations

import hmac
import secrets
import socket
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from vamos_env.twins.http import Request, Response, Routes, json_response
from vamos_env.twins.telephony import TWILIO_PREFIX

ADMIN_PREFIX = "/__vamos/"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
BACKLOG = 1024
MAX_BODY = 16 * 1024 * 1024  # bytes; the twins' largest real request is a few KiB
REQUEST_TIMEOUT_S = 30.0


class _ListeningServer(ThreadingHTTPServer):
    request_queue_size = BACKLOG
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)


def host_name(header: str) -> str:
    """The name of a ``Host`` header, without its port (``[::1]:8111`` -> ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class TwinServer:
    """Serve a billing twin and a loan twin on ``http://host:port``.

    ``reset`` is called on ``POST /__vamos/reset`` and must return a fresh
    ``(billing, loans)`` pair (typically a new clone of the seeded snapshot).
    ``admin_token`` guards the ``/__vamos/`` routes (random when not given; read it back
    from ``.admin_token``); ``allowed_hosts`` adds names the ``Host`` header may carry
    besides the loopback ones.
    """

    def __init__(
        self,
        billing: Routes,
        loans: Routes,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        reset: Callable[[], tuple[Routes, Routes]] | None = None,
        admin_token: str | None = None,
        allowed_hosts: Iterable[str] = (),
        calls: Routes | None = None,
        on_request: Callable[[Request, Response], None] | None = None,
    ) -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"expected a loopback host (127.0.0.1, localhost, ::1); got {host!r}")
        if admin_token is not None and len(admin_token) < 8:
            raise ValueError(
                f"expected an admin token of 8 characters or more, got {len(admin_token)}"
            )
        self.billing = billing
        self.loans = loans
        self.calls = calls
        self._on_request = on_request
        self._reset = reset
        self.admin_token = admin_token or secrets.token_urlsafe(18)
        self.allowed_hosts = frozenset(
            [*LOOPBACK_HOSTS, *(host_name(h) for h in allowed_hosts if h.strip())]
        )
        # The twins are plain objects, not thread-safe: one request at a time.
        self._lock = threading.Lock()
        self.resets = 0
        self._httpd = _ListeningServer((host, port), _handler_for(self))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        host = self._httpd.server_address[0]
        if isinstance(host, bytes):
            host = host.decode()
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def host_allowed(self, header: str | None) -> bool:
        """Whether a ``Host`` header names this server (an absent one is an old client)."""
        return header is None or host_name(header) in self.allowed_hosts

    def handle(self, request: Request) -> Response:
        with self._lock:
            if request.path.startswith(ADMIN_PREFIX):
                return self._admin(request)
            response = self._route(request)
            if self._on_request is not None:
                self._on_request(request, response)
            return response

    def _route(self, request: Request) -> Response:
        if request.path == "/v1" or request.path.startswith("/v1/"):
            return self.billing.handle(request)
        if request.path.startswith("/fineract-provider/"):
            return self.loans.handle(request)
        if self.calls is not None and request.path.startswith(TWILIO_PREFIX):
            return self.calls.handle(request)
        return json_response(
            404,
            {
                "error": {
                    "type": "invalid_request_error",
                    "message": f"Unrecognized request URL ({request.method}: {request.path}). "
                    "This server answers /v1/... (Stripe) and /fineract-provider/... (Fineract).",
                }
            },
        )

    def _admin(self, request: Request) -> Response:
        scheme, _, given = (request.header("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode(), self.admin_token.encode()
        ):
            return json_response(
                401,
                {
                    "error": "the /__vamos/ routes need 'Authorization: Bearer TOKEN' (the admin "
                    "token vamos twins serve printed)"
                },
                {"www-authenticate": 'Bearer realm="vamos-twins"'},
            )
        action = request.path[len(ADMIN_PREFIX) :]
        if action == "health" and request.method == "GET":
            return json_response(200, {"status": "ok", "resets": self.resets})
        if action == "reset" and request.method == "POST":
            if self._reset is None:
                return json_response(409, {"error": "this server was started without a snapshot"})
            self.billing, self.loans = self._reset()
            self.resets += 1
            return json_response(200, {"status": "reset", "resets": self.resets})
        return json_response(404, {"error": f"no admin route {request.method} {request.path}"})

    def start(self) -> TwinServer:
        # A short poll interval keeps stop() (and test teardown) quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="vamos-twins", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> TwinServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _handler_for(server: TwinServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "vamos-twins"
        # Headers and body go out in separate writes; with Nagle's algorithm on, the body
        # waits for the client's delayed ACK (about 40 ms a request on Linux).
        disable_nagle_algorithm = True
        # A client that promises a body and never sends it must not hold a thread forever.
        timeout = REQUEST_TIMEOUT_S

        def _refuse(self, status: int, message: str) -> None:
            self.close_connection = True
            self._send(json_response(status, {"error": message}), close=True)

        def _dispatch(self) -> None:
            if not server.host_allowed(self.headers.get("host")):
                self._refuse(
                    421,
                    f"Host {self.headers.get('host')!r} is not served here; expected a loopback "
                    "name (127.0.0.1, localhost, [::1]) or one given with --allow-host",
                )
                return
            if self.headers.get("transfer-encoding"):
                self._refuse(411, "expected a Content-Length body, got Transfer-Encoding")
                return
            raw = (self.headers.get("content-length") or "0").strip()
            if not raw.isdigit() or not raw.isascii():
                self._refuse(400, f"expected Content-Length to be a whole number, got {raw[:40]!r}")
                return
            # A 20-digit length is as much "too large" as a 9-digit one (and int() of
            # thousands of digits would itself refuse).
            length = int(raw) if len(raw) <= 12 else MAX_BODY + 1
            if length > MAX_BODY:
                shown = raw if len(raw) <= 20 else raw[:17] + "..."
                self._refuse(
                    413, f"expected a Content-Length of at most {MAX_BODY} bytes, got {shown}"
                )
                return
            body = self.rfile.read(length) if length else b""
            if len(body) < length:
                self.close_connection = True  # the client went away mid-body
                return
            parts = urlsplit(self.path)
            request = Request(
                self.command.upper(),
                parts.path or "/",
                parts.query,
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
            self._send(server.handle(request))

        def _send(self, response: Response, *, close: bool = False) -> None:
            self.send_response(response.status)
            for key, value in response.headers.items():
                if key.lower() not in ("content-length", "connection"):
                    self.send_header(key, value)
            self.send_header("content-length", str(len(response.body)))
            if close:
                self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(response.body)

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _dispatch

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler
