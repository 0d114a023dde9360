"""A scriptable HTTP server on loopback: the half that the fake vendor servers share.

A fake vendor server plays a model's part over the vendor's real wire protocol,
so the official SDKs talk to it unpatched. What the "model" answers comes from a
script: a queue of replies taken in arrival order, a function of the request, or
(``per_conversation``) one script that every concurrent conversation follows.
Replies are vendor-neutral (``Reply`` with text and ``Call``s, ``Failure`` for an
HTTP error in the vendor's error shape, ``Raw`` for bytes sent as they are), so one
script can drive both vendors. Every request is recorded with what was answered.

Concurrency is real: each connection has its own thread and the optional delay
sleeps outside every lock, so two hundred requests with a one-second delay finish
in about a second. The listen backlog is raised for that reason (the standard
library's default of five drops bursts of connections).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")  # IPv4: the server binds AF_INET


@dataclass(frozen=True)
class Call:
    """A function call the model makes: arguments as a dict, or as raw (maybe malformed) text."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None  # the vendor assigns one when None (OpenAI always; Gemini never)


@dataclass(frozen=True)
class Reply:
    """One model turn: words, function calls, both, or neither (an empty turn)."""

    text: str | None = None
    calls: tuple[Call, ...] = ()
    finish_reason: str | None = None  # the vendor's own value; derived from the content if None
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; estimated if None
    delay_s: float | None = None  # overrides the server's delay for this reply


@dataclass(frozen=True)
class Failure:
    """An HTTP error in the vendor's error shape (the status picks the vendor's error type)."""

    status: int
    message: str = "The server had an error while processing your request."
    code: str | None = None  # OpenAI's ``code`` or Gemini's ``status``; a default by status if None


@dataclass(frozen=True)
class Raw:
    """A response sent exactly as given, for replies no real vendor should send."""

    status: int
    body: str | bytes
    content_type: str = "application/json"


Scripted = Reply | Failure | Raw | str  # a plain string is a text-only Reply
Script = Callable[["RecordedRequest"], Scripted]


@dataclass
class RecordedRequest:
    """One request as the server received it, and what it answered."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case
    raw: bytes
    body: Any = None  # the parsed JSON body; None when there was none or it was not JSON
    status: int = 0
    response: Any = None  # the JSON sent back (None for a Raw reply that is not JSON)


def estimated_tokens(text: str | bytes) -> int:
    """About four characters a token: deterministic, and enough to tell turns apart."""
    return max(1, math.ceil(len(text) / 4))


class FakeVendorServer:
    """The shared machinery; subclasses speak one vendor's protocol.

    A subclass implements ``answer(request) -> (status, json)`` for its routes and
    calls ``next_reply(request)`` when the model should speak, then ``pause`` with
    the reply before rendering it.
    """

    vendor = "fake"

    def __init__(
        self,
        replies: Iterable[Scripted] | Script | None = None,
        *,
        delay_s: float = 0.0,
        api_key: str | None = None,
        strict: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"expected a loopback host {LOOPBACK_HOSTS}, got {host!r}")
        if delay_s < 0:
            raise ValueError(f"expected delay_s >= 0, got {delay_s}")
        self.delay_s = delay_s
        self.api_key = api_key  # when set, requests without it are refused as the vendor does
        self.strict = strict  # validate requests as the vendor does (e.g. tool results paired)
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Scripted] = deque()
        self._script: Script | None = None
        if callable(replies):
            self._script = replies
        elif replies is not None:
            self._queue.extend(replies)
        self._lock = threading.Lock()
        # Replies being thought about right now, and the most there were at once: how many
        # requests the client had waiting together (a load-proof measure of concurrency).
        self._thinking = 0
        self.most_at_once = 0
        self._httpd = _LoopbackHTTPServer((host, port), _handler_for(self))
        self._thread: threading.Thread | None = None

    # -- the script ----------------------------------------------------------------------
    def push(self, *replies: Scripted) -> None:
        """Queue more replies (they are answered after those already queued)."""
        with self._lock:
            if self._script is not None:
                raise RuntimeError("this server answers with a function; it has no queue")
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Queued replies not yet sent."""
        with self._lock:
            return len(self._queue)

    def next_reply(self, request: RecordedRequest) -> Scripted | None:
        """The model's next reply, or None when the queue has run dry."""
        with self._lock:
            if self._script is not None:
                return self._script(request)
            return self._queue.popleft() if self._queue else None

    def pause(self, reply: Scripted) -> None:
        """The model's thinking time; sleeps outside every lock so requests overlap."""
        delay = reply.delay_s if isinstance(reply, Reply) and reply.delay_s is not None else None
        seconds = self.delay_s if delay is None else delay
        with self._lock:
            self._thinking += 1
            self.most_at_once = max(self.most_at_once, self._thinking)
        try:
            if seconds > 0:
                time.sleep(seconds)
        finally:
            with self._lock:
                self._thinking -= 1

    def model_requests(self) -> list[RecordedRequest]:
        """The requests that reached the model route (subclasses say which those are)."""
        return [r for r in self.requests if self.is_model_route(r)]

    @classmethod
    def per_conversation(cls, replies: Sequence[Scripted], **options: Any) -> Self:
        """A server on which every conversation follows the same script, however they interleave.

        The reply is chosen by the number of model turns already in the request, so
        many concurrent calls can share one server (a queue would hand one call's
        reply to another). An empty reply adds no turn, so its retry gets the same
        reply again. A conversation longer than the script gets a 400.
        """
        script = tuple(replies)

        def by_turn(request: RecordedRequest) -> Scripted:
            turn = cls.model_turns(request.body)
            if turn < len(script):
                return script[turn]
            return Failure(400, f"fake server: the script has no reply for model turn {turn}")

        return cls(by_turn, **options)

    # -- for subclasses ------------------------------------------------------------------
    @staticmethod
    def model_turns(body: Any) -> int:
        """How many of the model's own turns a request body carries."""
        raise NotImplementedError

    def is_model_route(self, request: RecordedRequest) -> bool:
        raise NotImplementedError

    def answer(self, request: RecordedRequest) -> tuple[int, Any] | Raw:
        raise NotImplementedError

    # -- the server's life ---------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        """``http://host:port``, without any API path."""
        host = self._httpd.server_address[0]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{self.port}"

    def start(self) -> Self:
        if self._thread is None:
            # A short poll interval: shutdown() waits for it, and tests start many servers.
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.01},
                name=f"{type(self).__name__}:{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request -------------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


class _LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many clients connect at once (the runner's 200-in-flight test)


def _handler_for(server: FakeVendorServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
        timeout = 60  # an idle keep-alive connection frees its thread after this

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                self._send(411, b'{"error": "send a Content-Length"}', "application/json")
                self.close_connection = True
                return
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            parts = urlsplit(self.path)
            request = RecordedRequest(
                method=method,
                path=parts.path,
                query=dict(parse_qsl(parts.query)),
                headers={k.lower(): v for k, v in self.headers.items()},
                raw=raw,
            )
            if raw:
                try:
                    request.body = json.loads(raw)
                except (ValueError, RecursionError):
                    request.body = None
            server._record(request)
            try:
                answered = server.answer(request)
            except Exception as exc:  # a broken script must not look like a hung server
                answered = (500, {"error": {"message": f"fake server error: {exc!r}"}})
            if isinstance(answered, Raw):
                body = answered.body.encode() if isinstance(answered.body, str) else answered.body
                request.status = answered.status
                try:
                    request.response = json.loads(body)
                except (ValueError, RecursionError):
                    request.response = None
                self._send(answered.status, body, answered.content_type)
                return
            status, payload = answered
            request.status, request.response = status, payload
            self._send(status, json.dumps(payload).encode(), "application/json")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return Handler


def call_arguments_text(call: Call) -> str:
    """The call's arguments as the JSON text OpenAI sends (raw text passes through)."""
    return call.arguments if isinstance(call.arguments, str) else json.dumps(dict(call.arguments))


def as_reply(scripted: Scripted) -> Reply | Failure | Raw:
    return Reply(text=scripted) if isinstance(scripted, str) else scripted


def completion_tokens(reply: Reply) -> int:
    spoken = reply.text or ""
    called = "".join(c.name + call_arguments_text(c) for c in reply.calls)
    return estimated_tokens(spoken + called)
