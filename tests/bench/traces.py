"""``evalhouse traces import`` on 100,000 OTLP spans against reading the same JSON.

The file: 25,000 OpenInference traces of 4 spans each (a CHAIN root with the question and
answer, a RETRIEVER with three documents, an LLM span with messages and token counts, a
TOOL span), one OTLP/JSON request. Measured, best of ``--repeat``:

- baseline: ``json.loads`` of the file's text plus writing the import's output (the
  native JSONL, the same bytes the import writes) - the floor of any importer in Python;
- import: the whole command in-process (read, bounded decode, parse, group spans by
  trace, read the conventions, validate every case, write the JSONL).

The ratio import / baseline is printed (goal: at most 1.3), in wall time and in this
process's CPU seconds (steadier on a shared machine). The import parses with msgspec
and pauses the garbage collector while it parses and builds the cases (most of a plain
``json.loads`` of a large file is the collector walking what it has parsed so far), so
``json.loads`` with the collector paused is printed too: the floor that pause leaves.

Run: ``.venv/bin/python -m tests.bench.traces [--spans N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.files import collector_paused
from evalhouse.cli import main as cli


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _trace(i: int) -> list[dict[str, Any]]:
    tid = f"{i:032x}"
    start = 1_764_115_200_000_000_000 + i * 1_000_000_000
    question = f"What does plan {i} cost per month, and is support included?"
    answer = f"Plan {i} costs {10 + i % 40} dollars per month and includes email support."
    docs = [
        _kv(f"retrieval.documents.{d}.document.{k}", v)
        for d in range(3)
        for k, v in (("id", f"https://acme.example/p{i}#{d}"),
                     ("content", f"Plan {i} passage {d}: {10 + i % 40} dollars a month."))
    ]  # fmt: skip

    def span(n: int, name: str, kind: str, attrs: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "traceId": tid, "spanId": f"{i:012x}{n:04x}", "name": name, "kind": 1,
            "parentSpanId": "" if n == 0 else f"{i:012x}0000",
            "startTimeUnixNano": str(start + n), "endTimeUnixNano": str(start + 10 + n),
            "attributes": [_kv("openinference.span.kind", kind), *attrs], "status": {},
        }  # fmt: skip

    return [
        span(0, "query", "CHAIN", [_kv("input.value", question), _kv("output.value", answer)]),
        span(1, "retrieve", "RETRIEVER", [_kv("input.value", question), *docs]),
        span(
            2,
            "llm",
            "LLM",
            [
                _kv("llm.model_name", "gpt-4o-mini"),
                _kv("llm.input_messages.0.message.role", "user"),
                _kv("llm.input_messages.0.message.content", question),
                _kv("llm.output_messages.0.message.role", "assistant"),
                _kv("llm.output_messages.0.message.content", answer),
                _kv("llm.token_count.prompt", 120 + i % 50),
                _kv("llm.token_count.completion", 20),
            ],
        ),
        span(3, "lookup_price", "TOOL", [_kv("tool.name", "lookup_price")]),
    ]


def write_export(path: Path, spans: int) -> None:
    """One OTLP/JSON request holding ``spans`` spans (4 per trace)."""
    all_spans = [s for i in range(spans // 4) for s in _trace(i)]
    resource = {"attributes": [_kv("service.name", "bench-rag")]}
    doc = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": all_spans}]}]}
    path.write_text(json.dumps(doc), encoding="utf-8")


CPU: dict[Any, float] = {}
"""Best CPU seconds of each timed function (the machine is shared: wall time moves with
the load, the CPU seconds of this process much less)."""


def _best(fn: Any, repeat: int) -> float:
    times, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    CPU[fn] = min(cpu)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "traces.json", Path(tmp) / "cases.jsonl"
        write_export(source, args.spans)
        with contextlib.redirect_stderr(io.StringIO()):
            assert cli(["traces", "import", str(source), "--output", str(out)]) == 0
        output = out.read_text(encoding="utf-8")
        copy = Path(tmp) / "copy.jsonl"

        def baseline() -> None:
            json.loads(source.read_text(encoding="utf-8"))
            copy.write_text(output, encoding="utf-8")

        def parse_only() -> None:
            json.loads(source.read_text(encoding="utf-8"))

        def run_import() -> None:
            with contextlib.redirect_stderr(io.StringIO()):
                assert cli(["traces", "import", str(source), "--output", str(out)]) == 0

        def parse_paused() -> None:
            with collector_paused():
                json.loads(source.read_text(encoding="utf-8"))

        t_paused = _best(parse_paused, args.repeat)
        t_parse = _best(parse_only, args.repeat)
        t_base = _best(baseline, args.repeat)
        t_import = _best(run_import, args.repeat)
        size = source.stat().st_size
        cases = output.count("\n")
    print(f"file: {args.spans:,} spans, {cases:,} traces, {size / 1e6:.1f} MB")
    print(f"json.loads alone:              {t_parse:6.2f} s")
    print(f"json.loads, collector paused:  {t_paused:6.2f} s")
    print(f"json.loads + write the output: {t_base:6.2f} s  (baseline)")
    print(
        f"traces import:                 {t_import:6.2f} s  ({args.spans / t_import:,.0f} spans/s)"
    )
    print(f"ratio import / baseline:       {t_import / t_base:6.2f}  (goal <= 1.3)")
    cpu_base, cpu_import = CPU[baseline], CPU[run_import]
    print(
        f"CPU seconds, same process:     {cpu_import:6.2f} / {cpu_base:.2f} = "
        f"{cpu_import / cpu_base:.2f}  (import / baseline)"
    )
    print(f"ratio import / json.loads:     {t_import / t_parse:6.2f}")
    print(f"ratio import / paused loads:   {t_import / t_paused:6.2f}")


if __name__ == "__main__":
    main()
