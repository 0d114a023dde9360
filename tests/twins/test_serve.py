"""The loopback twin server against hostile and bursty clients: bad bodies get 400 and a
closed connection, foreign Host headers 421, admin routes want the token, and a burst of
new connections never waits on the listen queue."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from vamos_env.twins.fineract import LoanTwin
from vamos_env.twins.serve import BACKLOG, TwinServer
from vamos_env.twins.stripe import BillingTwin

KEY = {"authorization": "Bearer sk_test_vamos"}
REQUEST = (
    b"GET /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Authorization: Bearer sk_test_vamos\r\nConnection: close\r\n\r\n"
)


@pytest.fixture
def server() -> Iterator[TwinServer]:
    resets = {"n": 0}

    def reset() -> tuple[BillingTwin, LoanTwin]:
        resets["n"] += 1
        return BillingTwin(), LoanTwin()

    with TwinServer(
        BillingTwin(), LoanTwin(), reset=reset, allowed_hosts=["twins.internal"]
    ) as running:
        yield running


def raw(server: TwinServer, request: bytes, timeout: float = 5.0) -> bytes:
    """Send bytes, read until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    ("length", "status"),
    [("ten", b"400"), ("-5", b"400"), ("1e3", b"400"), ("9" * 40, b"413"), ("99999999", b"413")],
)
def test_a_bad_content_length_is_answered_and_the_connection_closed(
    server: TwinServer, length: str, status: bytes
) -> None:
    request = (
        f"POST /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n\r\nname=x"
    ).encode()
    started = time.perf_counter()
    answer = raw(server, request)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]
    assert b"Content-Length" in answer and b"expected" in answer
    assert time.perf_counter() - started < 2  # answered, not left hanging


def test_a_foreign_host_header_is_refused_and_loopback_names_are_served(
    server: TwinServer,
) -> None:
    url = f"{server.base_url}/v1/customers"
    rebound = httpx.get(url, headers={**KEY, "host": "attacker.example:80"})
    assert rebound.status_code == 421 and "attacker.example" in rebound.json()["error"]
    for host in (f"localhost:{server.port}", "127.0.0.1", f"[::1]:{server.port}", "twins.internal"):
        assert httpx.get(url, headers={**KEY, "host": host}).status_code == 200, host


def test_the_admin_routes_want_the_token(server: TwinServer) -> None:
    reset = f"{server.base_url}/__vamos/reset"
    # A cross-site form POST carries no Authorization header (a browser sends none unasked).
    form = httpx.post(
        reset,
        content=b"x=1",
        headers={
            "content-type": "application/x-www-form-urlencoded",
            "origin": "https://evil.example",
        },
    )
    assert form.status_code == 401 and "Bearer" in form.headers["www-authenticate"]
    wrong = httpx.post(reset, headers={"authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401
    assert httpx.get(f"{server.base_url}/__vamos/health").status_code == 401
    admin = {"authorization": f"Bearer {server.admin_token}"}
    assert httpx.post(reset, headers=admin).json() == {"status": "reset", "resets": 1}
    assert httpx.get(f"{server.base_url}/__vamos/health", headers=admin).json()["resets"] == 1


def test_a_burst_of_new_connections_never_waits_on_the_listen_queue(server: TwinServer) -> None:
    assert BACKLOG >= 512
    connects: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(48)

    def client() -> None:
        gate.wait()
        mine = []
        for _ in range(4):
            began = time.perf_counter()
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
                mine.append(time.perf_counter() - began)
                conn.sendall(REQUEST)
                while conn.recv(65536):
                    pass
        with lock:
            connects.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(48)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(connects) == 192
    # A dropped SYN is retried after one second: no connect may come near that.
    assert max(connects) < 0.5, sorted(connects)[-5:]


def test_only_loopback_hosts_and_real_tokens_are_accepted() -> None:
    with pytest.raises(ValueError, match="expected a loopback host"):
        TwinServer(BillingTwin(), LoanTwin(), host="0.0.0.0")
    with pytest.raises(ValueError, match="admin token of 8 characters"):
        TwinServer(BillingTwin(), LoanTwin(), admin_token="short")
