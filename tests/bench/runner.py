"""Runner benchmark: how close to ideal the runner keeps a slow judge busy, and local speed.

1. LLM judge at concurrency 32 and 128: a loopback server in the OpenAI wire format
   answers every judge call after 200 ms; 1,000 samples with recorded responses (one
   claim, one context chunk, a reference). ``judge_sample`` makes, batched (the default):
   extract claims, one verification of all claims (naming the chunks, so precision needs
   no call), rubric, relevance, correctness = 5 calls; with ``--judge-calls per_prompt``
   one verification per claim and one chunk-use call per chunk = 6. The judge's HTTP
   client lets ``concurrency`` calls be in flight, so the ideal time is
   ceil(calls / concurrency) x 0.2 s. The figures are ideal / measured (goal >= 0.9 at 32,
   >= 0.8 at 128) and the CPU-seconds of this process per sample (goal <= 0.04). The
   number of calls is counted on the server, not assumed.
2. Local default (local judge, local embedder, real analyzer): samples per second on
   1,000 samples of the demo test sets, cold (empty embedding cache) and warm; side by side
   with another tree: ``python -m tests.bench.local_speed --baseline DIR``.

Run: ``.venv/bin/python -m tests.bench.runner [--samples N] [--skip-local] [--skip-llm]
[--concurrency 32 128] [--judge-calls batched|per_prompt]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.models import RunConfig, TestCase
from engine.runner import Components, run_evaluation
from engine.settings import resolve_paths
from engine.testsets import load_test_set

# One reply that satisfies every judge prompt's JSON shape (each parser reads its own keys).
UNIVERSAL = {
    "claims": ["The answer states one fact."],
    "verdict": "SUPPORTED",
    # a batched verification (the default) of the one claim above
    "verdicts": [{"claim": 1, "verdict": "SUPPORTED", "evidence": "", "passages": [1]}],
    "evidence": "the context says so",
    "faithfulness": {"score": 5, "reasoning": "grounded"},
    "completeness": {"score": 4, "reasoning": "explains why"},
    "score": 5,
    "reasoning": "fine",
    "used": True,
}


def _cpu_with_workers() -> float:
    """CPU seconds of this process and of its ended children (the run's scoring workers
    are joined when it ends)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _has_real_analyzer() -> bool:
    try:
        import engine.embedders.factory
        import engine.scoring.analyzer  # noqa: F401
    except ImportError:
        return False
    return True


def _write_synthetic(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            case = TestCase(
                id=f"b{i:05d}",
                domain="acme.example",
                query=f"What does plan {i} cost per month?",
                response=f"Plan {i} costs {i % 90 + 10} dollars per month.",
                expected_answer={  # type: ignore[arg-type]
                    "text": f"Plan {i} costs {i % 90 + 10} dollars a month.",
                    "claims": [{"id": "c1", "text": f"Plan {i} costs {i % 90 + 10} dollars."}],
                },
                context=(f"Plan {i} is priced at {i % 90 + 10} dollars per month.",),
            )
            handle.write(json.dumps(case.model_dump(mode="json")) + "\n")
    return path


def _fake_analysis_components(config: RunConfig, cache: Path) -> Components:
    """Real LLM judge, fake analyzer (used only while the real analyzer is missing)."""
    from engine.judges.factory import build_judge
    from engine.scoring.judging import judge_sample
    from engine.targets import build_target
    from tests.engine.test_runner import FakeAnalyzer

    class NoEmbedder:
        name = "none"
        default_threshold = 0.6

        def embed(self, texts: Any) -> Any:  # pragma: no cover - the LLM judge never embeds
            raise RuntimeError("not used")

    judge = build_judge(
        config.judge,
        embedder=NoEmbedder(),
        cache_dir=cache,
        concurrency=config.concurrency,
        batch_claims=config.judge_calls == "batched",
    )

    async def judged(case: TestCase, response: str, j: Any, weights: Any) -> Any:
        return await judge_sample(case, response, j, weights=weights)

    return Components(
        target=build_target("recorded"),
        analyzer=FakeAnalyzer(),
        judge=judge,
        judge_sample=judged,
        embedder_name="none",
        judge_name=judge.name,
    )


# The judge server runs in its own process, as a real provider would: sharing the
# benchmark's interpreter (and its GIL) with 32 server threads would measure the server.
SERVER = """
import json, resource, signal, sys, threading
from http.server import ThreadingHTTPServer
from tests.loopback_llm import LoopbackLLM, Reply
from tests.bench.runner import UNIVERSAL
ThreadingHTTPServer.request_queue_size = 256
llm = LoopbackLLM(delay=float(sys.argv[1])).start()
llm.responder = lambda provider, body: Reply.json(UNIVERSAL)
print(llm.url, flush=True)
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: done.set())
done.wait()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"count": llm.count, "max_in_flight": llm.max_in_flight,
                  "cpu_s": usage.ru_utime + usage.ru_stime}), flush=True)
"""


def llm_judge_bench(
    samples: int, concurrency: int = 32, delay: float = 0.2, judge_calls: str = "batched"
) -> None:
    """Print ideal/measured for ``samples`` samples against a 200 ms loopback judge."""
    import subprocess
    import sys

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(delay)], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["OPENAI_BASE_URL"] = url
            os.environ["OPENAI_API_KEY"] = "sk-bench"
            path = _write_synthetic(Path(tmp) / "bench.jsonl", samples)
            test_set = load_test_set(path)
            paths = resolve_paths(Path(tmp) / "home")
            config = RunConfig(
                name="bench-llm",
                test_set=str(path),
                judge="openai:gpt-4o-mini",
                concurrency=concurrency,
                max_failed_fraction=1.0,
                judge_calls=judge_calls,
            )
            real = _has_real_analyzer()
            # The real path builds its own parts (and its scoring workers); a tree without
            # the analyzer gets the fake one.
            components = None if real else _fake_analysis_components(config, paths.cache)
            started, cpu = time.perf_counter(), _cpu_with_workers()
            out = run_evaluation(config, paths, test_set=test_set, components=components)
            measured, cpu = time.perf_counter() - started, _cpu_with_workers() - cpu
    finally:
        server.terminate()
        stats = json.loads(server.communicate(timeout=30)[0].strip().splitlines()[-1])
    calls = int(stats["count"])
    per_sample = calls / samples
    ideal = math.ceil(calls / concurrency) * delay
    analyzer = "real analyzer" if real else "fake analyzer (real one not in the tree yet)"
    print(
        f"llm-judge ({judge_calls}): {samples} samples, concurrency {concurrency}, "
        f"{delay * 1000:.0f} ms per "
        f"call, {calls} judge calls ({per_sample:.2f} per sample), {out.errors} errors, "
        f"max in flight {stats['max_in_flight']}, {analyzer}, judge server in its own process"
    )
    print(f"llm-judge ideal time: {ideal:.1f} s = ceil({calls} / {concurrency}) x {delay} s")
    print(f"llm-judge measured time: {measured:.1f} s")
    goal = 0.9 if concurrency <= 32 else 0.8
    print(
        f"llm-judge efficiency at concurrency {concurrency} (ideal / measured): "
        f"{ideal / measured:.2f} (goal >= {goal})"
    )
    print(
        f"llm-judge CPU: {cpu:.1f} s in this process and its scoring workers (runner, "
        "analyzer, judge client) = "
        f"{cpu / samples:.3f} CPU-s per sample (goal <= 0.04); the judge server used "
        f"{stats['cpu_s']:.1f} CPU-s of the same 2 cores"
    )


def runner_only_bench(samples: int, concurrency: int = 32, delay: float = 0.2) -> None:
    """The runner's own scheduling: a simulated judge with judge_sample's call structure.

    Same three dependent stages as the LLM judge (1 call; 2 calls; 3 calls), each call an
    ``asyncio.sleep(delay)`` holding one of ``concurrency`` slots, so the HTTP stack's CPU
    cost is out of the figure and what remains is the runner (scheduling, analyzer thread,
    flushes, progress files).
    """
    import asyncio

    from engine.targets import build_target
    from tests.engine.test_runner import FakeAnalyzer, FakeJudge, FakeOutcome

    slots: dict[str, asyncio.Semaphore] = {}
    calls = 0

    async def call() -> None:
        nonlocal calls
        sem = slots.setdefault("s", asyncio.Semaphore(concurrency))
        async with sem:
            calls += 1
            await asyncio.sleep(delay)

    async def simulated(case: TestCase, response: str, judge: Any, weights: Any) -> Any:
        await call()
        await asyncio.gather(call(), call())
        await asyncio.gather(call(), call(), call())
        return FakeOutcome(faithfulness=5.0)

    with tempfile.TemporaryDirectory() as tmp:
        path = _write_synthetic(Path(tmp) / "bench.jsonl", samples)
        test_set = load_test_set(path)
        paths = resolve_paths(Path(tmp) / "home")
        config = RunConfig(name="bench-sim", test_set=str(path), concurrency=concurrency)
        components = Components(
            target=build_target("recorded"),
            analyzer=FakeAnalyzer(),
            judge=FakeJudge(),
            judge_sample=simulated,
            embedder_name="none",
            judge_name="simulated",
        )
        started = time.perf_counter()
        run_evaluation(config, paths, test_set=test_set, components=components)
        measured = time.perf_counter() - started
    ideal = math.ceil(calls / concurrency) * delay
    print(
        f"runner-only (simulated 200 ms judge, same call graph): {calls} calls, ideal "
        f"{ideal:.1f} s, measured {measured:.1f} s, efficiency {ideal / measured:.2f}"
    )


def local_bench(samples: int) -> None:
    """Print samples/second of the local default on demo samples, cold and warm cache."""
    if not _has_real_analyzer():
        print("local-default: skipped (engine.scoring.analyzer / engine.embedders.factory missing)")
        return
    from tests.bench.local_speed import measure

    got = measure(samples)
    for phase, what in (("cold", "empty embedding cache"), ("warm", "every vector cached")):
        m = got[phase]
        print(
            f"local-default, {phase} ({what}): {samples} demo samples in {m['wall_s']:.1f} s = "
            f"{m['samples_per_s']:.1f} samples/s, {m['cpu_s'] / samples * 1000:.0f} CPU-ms per "
            f"sample ({m['errors']} errors, local judge + local embedder, concurrency 5)"
        )


def main() -> None:
    """Run both benchmarks and print one line per figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[32, 128])
    parser.add_argument(
        "--judge-calls", choices=("batched", "per_prompt"), default="batched", dest="judge_calls"
    )
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not args.skip_llm:
        runner_only_bench(args.samples)
        for concurrency in args.concurrency:
            llm_judge_bench(args.samples, concurrency, judge_calls=args.judge_calls)
    if not args.skip_local:
        local_bench(args.samples)


if __name__ == "__main__":
    main()
