"""Benchmark of pairwise judging: judgments per second at concurrency 32 against a loopback
LLM judge that answers every call after 200 ms.

Each judgment is two calls (both orders, each one job among the calls kept in flight), so
the ideal rate at concurrency C and latency L is C / (2 L) judgments per second (80/s for
32 and 0.2 s). Prints the measured rate and its ratio to the ideal (goal >= 0.8).

Run: ``.venv/bin/python -m tests.bench.pairwise [--pairs N] [--concurrency C] [--delay S]``
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from typing import Any

from engine.clock import utcnow
from engine.judges.http.client import HttpJudgeClient
from engine.judges.http.judge import HttpJudge
from engine.judges.http.openai_compat import OpenAIWire
from engine.pairwise import Pair, compare_pairs
from tests.loopback_llm import LoopbackLLM, Reply


def _serve(delay: float, urls: Any, stop: Any) -> None:
    # The server runs in its own process: in the benchmark's process its threads would
    # compete with the client for the GIL, and the figure would measure the server.
    reply = Reply.json({"reason": "clearer", "better": "1"})
    with LoopbackLLM(delay=delay, responder=lambda provider, body: reply) as llm:
        urls.put(llm.url)
        stop.wait()
        urls.put(llm.max_in_flight)


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    pairs = [
        Pair(1, f"q{i}", "", "acme.com", f"Question {i}?", f"Answer A {i}.", f"Answer B {i}.",
             {}, {})
        for i in range(args.pairs)
    ]  # fmt: skip
    urls: Any = multiprocessing.Queue()
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=_serve, args=(args.delay, urls, stop), daemon=True)
    server.start()
    client = HttpJudgeClient(
        OpenAIWire(), model="bench", base_url=urls.get(timeout=30), api_key=None,
        concurrency=args.concurrency, timeout=30.0, max_retries=0,
    )  # fmt: skip
    judge = HttpJudge(client)

    async def run() -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        await compare_pairs(
            pairs,
            judge,
            run_a="A",
            run_b="B",
            comparison_id="cmp-bench",
            now=utcnow(),
            concurrency=args.concurrency,
        )
        elapsed, used = time.perf_counter() - started, time.process_time() - cpu
        await judge.aclose()
        return elapsed, used

    elapsed, used = asyncio.run(run())
    stop.set()
    in_flight = urls.get(timeout=30)
    server.join(timeout=10)
    rate = args.pairs / elapsed
    print(f"pairs: {args.pairs}, concurrency {args.concurrency}, judge latency {args.delay}s")
    print(f"most calls in flight: {in_flight}")
    # CPU of this process (the judging side, not the server): what a busy machine inflates
    # least, and what bounds the rate once the machine is free.
    print(f"client CPU: {used:.2f} s, {1000 * used / args.pairs:.1f} ms per judgment")
    if args.delay <= 0:  # the cost of the client and the loopback server alone
        print(f"judgments/s: {rate:.1f} ({2 * args.pairs / elapsed:.0f} calls/s, no latency)")
        return
    ideal = args.concurrency / (2 * args.delay)
    print(f"judgments/s: {rate:.1f} (ideal {ideal:.1f})")
    print(f"ratio to ideal: {rate / ideal:.2f} (goal >= 0.8)")


if __name__ == "__main__":
    main()
