"""Benchmark: client CPU per HTTP call through the one send-with-retries.

A loopback HTTP/1.1 keep-alive server in a separate process answers every POST after a
fixed delay; this process sends N calls with C in flight, either through
``engine.http.send_with_retries`` on an ``HttpSession`` sized to C (aiohttp, every
connection kept alive) or, as the baseline, through one ``httpx.AsyncClient`` whose pool
is sized to C (the transport every provider used before), sending the same request and
parsing the same JSON. Printed for each: wall time, client CPU-seconds (this process
only: the event loop and the HTTP client), CPU-ms per call, and the connections the
server accepted. The ratio session / httpx is the figure to keep.

Run: ``.venv/bin/python -m tests.bench.http_path [--calls N] [--delay S] [--concurrency C ...]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from engine.http import HttpSession, RetryPolicy, parse_json, send_with_retries

POLICY = RetryPolicy(retries=2, timeout_s=30.0, backoff_s=0.05)
BODY = json.dumps({"answer": "Acme Pro costs $49 per month.", "contexts": ["p1", "p2"]}).encode()


def serve(delay: float) -> None:
    """The server process: prints its port, then answers until killed."""
    accepted = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # As every production server does: without it the body, written after the
        # headers, waits for the client's delayed ACK (~40 ms) on a kept-alive connection.
        disable_nagle_algorithm = True

        def setup(self) -> None:
            accepted[0] += 1
            super().setup()

        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:  # the connection count, for the report
            body = str(accepted[0]).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(delay)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 1024  # listen() backlog: 128 clients connect at once

    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the parent closes our stdin


async def _session_calls(url: str, calls: int, concurrency: int) -> None:
    session = HttpSession(max_connections=concurrency)
    queue = iter(range(calls))

    async def worker() -> None:
        for _ in queue:
            await send_with_retries(
                session, url, policy=POLICY, parse=parse_json, content=b'{"query": "q"}'
            )

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    await session.aclose()


async def _httpx_calls(url: str, calls: int, concurrency: int) -> None:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    queue = iter(range(calls))
    async with httpx.AsyncClient(limits=limits) as client:

        async def worker() -> None:
            for _ in queue:
                response = await client.post(url, content=b'{"query": "q"}', timeout=30.0)
                response.json()

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def measure(port: int, mode: str, calls: int, concurrency: int) -> dict[str, float]:
    """Wall, CPU-seconds and connections of one batch of calls."""
    url = f"http://127.0.0.1:{port}/ask"
    before = int(httpx.get(f"http://127.0.0.1:{port}/count").text)
    run = _httpx_calls if mode == "httpx" else _session_calls
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(run(url, calls, concurrency))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = int(httpx.get(f"http://127.0.0.1:{port}/count").text)
    return {"wall": wall, "cpu": cpu, "connections": after - before - 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[32, 128])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.delay)
        return
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.http_path", "--serve", "--delay", str(args.delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(f"{args.calls} calls, server delay {args.delay * 1000:.0f} ms (shared machine)")
        for concurrency in args.concurrency:
            measure(port, "session", min(args.calls, 200), concurrency)  # warm up
            got = {
                mode: measure(port, mode, args.calls, concurrency) for mode in ("httpx", "session")
            }
            for mode, m in got.items():
                print(
                    f"  C={concurrency:<4} {mode:<8} wall {m['wall']:6.2f} s  "
                    f"cpu {m['cpu']:6.2f} s  {1000 * m['cpu'] / args.calls:5.2f} cpu-ms/call  "
                    f"{m['connections']:.0f} connections"
                )
            ratio = got["session"]["cpu"] / got["httpx"]["cpu"]
            wall_ratio = got["session"]["wall"] / got["httpx"]["wall"]
            print(f"  C={concurrency:<4} session/httpx: cpu {ratio:.2f}, wall {wall_ratio:.2f}")
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
