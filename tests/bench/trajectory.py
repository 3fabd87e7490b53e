"""Benchmark of the agent metrics: on the same N agent samples, the time of the trajectory
and tool-call metrics (what scorer ``tools`` computes per sample, plus rebuilding each
production trace's trajectory from its spans) as a ratio to the response analyzer's time
with the local embedder, the default offline path (goal <= 0.05).

The samples cycle through the ten written agent cases of
``tests/data/testsets/agent_tools.jsonl`` and the two exports of one production agent run
(``tests/data/traces/agent_*.json``, with their expectations), each copy under its own id.
The analyzer reads each sample's answer against its reference, cold (no embedding cache),
in batches of 100 as a run does; the model load is timed apart and left out.

Run: ``.venv/bin/python -m tests.bench.trajectory [--samples N]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from engine.embedders.local import LocalEmbedder
from engine.models import AnalyzerConfig, SampleKey, TestCase
from engine.scorers.base import SampleInput
from engine.scorers.tools import tool_rows
from engine.scoring.analyzer import ResponseAnalyzer
from engine.testsets import load_test_set
from engine.testsets.traces import read_traces
from engine.testsets.traces.expected import Expectations, with_expectations

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE_FILES = ("agent_openinference.json", "agent_genai.json")
BATCH = 100


def agent_cases() -> tuple[list[TestCase], list[tuple[str, str]]]:
    """The distinct agent cases, and the trace files (name, text) they partly came from."""
    cases = list(load_test_set(DATA / "testsets" / "agent_tools.jsonl").cases)
    expected = Expectations.of(load_test_set(DATA / "traces" / "agent_expected.jsonl").cases)
    files = [(n, (DATA / "traces" / n).read_text(encoding="utf-8")) for n in TRACE_FILES]
    for name, text in files:
        traces = read_traces(name, text)
        assert traces is not None
        cases += with_expectations(traces.cases, expected)[0]
    return cases, files


def samples(n: int) -> tuple[list[TestCase], list[tuple[str, str]]]:
    """``n`` agent cases (copies under their own ids) and the trace file of each case that
    came from a trace ('' for a written one)."""
    base, files = agent_cases()
    cases = [base[i % len(base)].model_copy(update={"id": f"s{i}"}) for i in range(n)]
    sources = {c.id: files[k] for k, c in enumerate(base[-len(files) :])}
    per_case = [sources.get(base[i % len(base)].id, ("", "")) for i in range(n)]
    return cases, per_case


def time_agent_metrics(cases: list[TestCase], traces: list[tuple[str, str]]) -> float:
    """Seconds to rebuild the traced samples' trajectories and score every sample's tools."""
    start = time.perf_counter()
    for case, (name, text) in zip(cases, traces, strict=True):
        if name:
            read_traces(name, text)  # spans -> steps and calls, as import and monitor do
        sample = SampleInput(SampleKey(run_id="bench", iteration=1, sample_id=case.id), case,
                             case.response or "", {"accuracy_tier": "good"})  # fmt: skip
        if not tool_rows(sample):
            raise SystemExit(f"{case.id}: no tool rows")
    return time.perf_counter() - start


def time_analyzer(cases: list[TestCase]) -> tuple[float, float]:
    """(model load, analysis) seconds of the analyzer over the cases' answers."""
    start = time.perf_counter()
    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    loaded = time.perf_counter() - start
    analyzer = ResponseAnalyzer(embedder, AnalyzerConfig())
    items = [(c, c.response or "") for c in cases]
    start = time.perf_counter()
    for at in range(0, len(items), BATCH):
        for result in analyzer.analyze_batch(items[at : at + BATCH]):
            if not hasattr(result, "result_fields"):
                raise SystemExit(f"analysis failed: {result}")
    return loaded, time.perf_counter() - start


def main() -> None:
    """Run the benchmark and print one figure per line, the ratio last."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    cases, traces = samples(args.samples)
    agent = time_agent_metrics(cases, traces)
    loaded, analyzed = time_analyzer(cases)
    traced = sum(bool(name) for name, _ in traces)
    print(f"samples: {len(cases)} agent cases ({traced} rebuilt from trace spans)")
    print(f"trajectory + tool metrics: {agent * 1000:.1f} ms")
    print(f"analyzer (local embedder, cold): {analyzed * 1000:.1f} ms (model load {loaded:.2f} s)")
    print(f"ratio trajectory+tool metrics / analyzer: {agent / analyzed:.4f} (goal <= 0.05)")


if __name__ == "__main__":
    main()
