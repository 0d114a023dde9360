"""A burst of new connections against the twin server: does the listen backlog hold?

64 threads each open 10 new connections, one request per connection (``GET /v1/customers``
with the Stripe key), all at once, against a seeded server in its own process. Printed
for the shipped backlog and, for comparison, the standard library's default of 5: how
long the TCP connect took (what the backlog decides: a full queue drops the SYN and the
client retries after 1 s, then 3 s) and the whole request from connect to the last byte
(which adds the server's queue of work: one Python process answering 64 clients), as
p50, p99 and max, and how many took over 200 ms.

Run: .venv/bin/python benchmarks/serve_burst.py [--threads 64] [--connections 10]
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import subprocess
import sys
import threading
import time

SERVER = """
import sys
from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.twins import serve
serve._ListeningServer.request_queue_size = int(sys.argv[1])
twins = default_snapshot().clone()
server = serve.TwinServer(twins.billing, twins.loans, port=0)
print(server.port, flush=True)
server.serve_forever()
"""


def burst(port: int, threads: int, connections: int) -> tuple[list[float], list[float], int]:
    """Connect times, whole-request times, and how many requests failed."""
    connects: list[float] = []
    totals: list[float] = []
    failed = [0]
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def client() -> None:
        start.wait()
        mine: list[tuple[float, float]] = []
        errors = 0
        for _ in range(connections):
            began = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.connect()
                connected = time.perf_counter()
                conn.request(
                    "GET",
                    "/v1/customers?limit=1",
                    headers={"Authorization": "Bearer sk_test_vamos"},
                )
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
            except OSError:
                ok = False
            finally:
                conn.close()
            if ok:
                mine.append((connected - began, time.perf_counter() - began))
            else:
                errors += 1
        with lock:
            connects.extend(c for c, _ in mine)
            totals.extend(t for _, t in mine)
            failed[0] += errors

    workers = [threading.Thread(target=client) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return connects, totals, failed[0]


def _figures(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    slow = sum(x > 0.2 for x in ordered)
    return (
        f"{name} p50 {statistics.median(ordered) * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, "
        f"max {ordered[-1] * 1e3:.1f} ms, {slow} over 200 ms"
    )


def measure(backlog: int, threads: int, connections: int) -> str:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(backlog)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        burst(port, 4, 2)  # warm the server's imports and first responses
        connects, totals, failed = burst(port, threads, connections)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return (
        f"backlog {backlog:>4}: {len(totals)} answered, {failed} failed\n"
        f"  {_figures('connect:', connects)}\n  {_figures('request:', totals)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=64)
    parser.add_argument("--connections", type=int, default=10)
    args = parser.parse_args()
    from vamos_env.twins.serve import BACKLOG

    print(f"{args.threads} threads x {args.connections} new connections, one request each")
    for backlog in (BACKLOG, 5):
        print(measure(backlog, args.threads, args.connections))


if __name__ == "__main__":
    main()
