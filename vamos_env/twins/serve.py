"""The twins' routes on a loopback port, for agents and clients outside this process.

``TwinServer`` answers Stripe requests under ``/v1/`` and Fineract requests
under ``/fineract-provider/`` on one port, exactly as the in-process transports
do (both call the same ``handle``). With a snapshot it can return to the seeded
state on ``POST /__vamos/reset``, so an outside agent can run call after call.
It binds to loopback only; it is a test double, not a production server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from vamos_env.twins.http import Request, Response, Routes, json_response

ADMIN_PREFIX = "/__vamos/"


class TwinServer:
    """Serve a billing twin and a loan twin on ``http://host:port``.

    ``reset`` is called on ``POST /__vamos/reset`` and must return a fresh
    ``(billing, loans)`` pair (typically a new clone of the seeded snapshot).
    """

    def __init__(
        self,
        billing: Routes,
        loans: Routes,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        reset: Callable[[], tuple[Routes, Routes]] | None = None,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"expected a loopback host (127.0.0.1, localhost, ::1); got {host!r}")
        self.billing = billing
        self.loans = loans
        self._reset = reset
        # The twins are plain objects, not thread-safe: one request at a time.
        self._lock = threading.Lock()
        self.resets = 0
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        host = self._httpd.server_address[0]
        if isinstance(host, bytes):
            host = host.decode()
        return f"http://{host}:{self.port}"

    def handle(self, request: Request) -> Response:
        with self._lock:
            if request.path.startswith(ADMIN_PREFIX):
                return self._admin(request)
            if request.path == "/v1" or request.path.startswith("/v1/"):
                return self.billing.handle(request)
            if request.path.startswith("/fineract-provider/"):
                return self.loans.handle(request)
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

        def _dispatch(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            request = Request(
                self.command.upper(),
                parts.path or "/",
                parts.query,
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
            response = server.handle(request)
            self.send_response(response.status)
            for key, value in response.headers.items():
                if key.lower() not in ("content-length", "connection"):
                    self.send_header(key, value)
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _dispatch

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler
