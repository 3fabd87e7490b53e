"""``evalhouse traces import PATH``: exported production traces as a test set.

Import writes a test set rather than starting a run: the file is what a person reviews,
trims, adds references to and keeps in git, and it outlives the trace backend's
retention. ``evalhouse run --test-set TRACES`` scores a trace file directly too (same
reader, series from the service), for a one-off look.
"""

from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from evalhouse.console import EXIT_OK, UsageError, err, out

if TYPE_CHECKING:
    from engine.models import TestCase


_ROW_JSON = json.JSONEncoder(ensure_ascii=False, check_circular=False)
"""The encoder of every written row (``json.dumps`` builds one per call; a dumped model
holds no cycles)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``traces`` subcommand and its ``import`` action."""
    t = sub.add_parser("traces", help="turn exported production traces into a test set")
    actions = t.add_subparsers(dest="action", required=True)
    p = actions.add_parser(
        "import",
        help="OTLP/JSON (GenAI or OpenInference spans) or Langfuse traces -> native JSONL",
    )
    p.add_argument("path", type=Path, help="trace export (.json or .jsonl)")
    p.add_argument("--output", type=Path, help="test set to write ('-' or none: standard output)")
    p.add_argument("--series", help="series of the runs that score it (default: the service)")
    p.add_argument(
        "--expected",
        type=Path,
        metavar="TESTSET",
        help="test set whose cases give the expected tool calls (and reference) of traces "
        "with the same trace id or question",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the traces, write one native case per trace, and say how to score them."""
    from engine.files import collector_paused
    from engine.outputs import is_stdout, write_output
    from engine.testsets.base import TestSetError
    from engine.testsets.reading import decode, read_bytes
    from engine.testsets.traces import read_traces

    name = str(args.path)
    text = decode(name, read_bytes(args.path, name))
    if not text.strip():
        raise TestSetError(f"{name}: empty file (no traces)")
    # One pause from parsing to the last row (none of it is cyclic): the collector walks
    # everything allocated while it was off once when it is back on, so once, not twice.
    with collector_paused():
        traces = read_traces(name, text)
        if traces is None:
            raise TestSetError(
                f"{name}: not a trace export (no OTLP 'resourceSpans' and no Langfuse traces "
                "with 'observations'); for a test set, use evalhouse inspect"
            )
        series = args.series or traces.series or args.path.stem
        cases = list(traces.cases)
        if args.expected is not None:
            cases = expect(args.expected, cases)
        text = "".join(_line(case, series) for case in cases)
        imported = len(traces.cases)
        # The cases freed while the collector is still off: alive when it resumed, its first
        # pass walked every object of them (a twentieth of an import), only for them to be
        # freed a moment later.
        del cases
        traces = replace(traces, cases=())
    output = None if is_stdout(args.output) else args.output
    if output is None:
        out(text)
    else:
        if output.resolve() == args.path.resolve():
            raise UsageError(f"--output {output}: would overwrite the trace file")
        write_output(output, text)  # never half a test set under the final name
    err(
        f"imported {imported} traces ({traces.spans} spans) from {name} as "
        f"{traces.format}; series {series!r}"
    )
    for problem in traces.problems:
        err(f"skipped: {problem}")
    if output is not None:
        # Quoted for a shell: the series comes from the traces (a service name), and a
        # person pastes this line.
        err(
            f"score them: evalhouse run --test-set {shlex.quote(str(output))} "
            f"--name {shlex.quote(f'{series}-{date.today().isoformat()}')} "
            f"--series {shlex.quote(series)}"
        )
    return EXIT_OK


def _line(case: TestCase, series: str) -> str:
    """The native JSONL line of one imported case."""
    from engine.testsets import derive_domain

    row = case.model_dump(mode="json", exclude_defaults=True)
    row["domain"] = derive_domain(case, str(case.metadata.get("service") or series))
    row["metadata"] = {**case.metadata, "series": series}
    return _ROW_JSON.encode(row) + "\n"


def expect(path: Path, cases: list[TestCase]) -> list[TestCase]:
    """``cases`` with the expectations of the test set at ``path``; says how many matched."""
    from engine.testsets import load_test_set
    from engine.testsets.traces.expected import Expectations, with_expectations

    expected = Expectations.of(load_test_set(path).cases)
    cases, matched = with_expectations(cases, expected)
    if cases:
        err(f"expectations from {path}: {matched} of {len(cases)} traces matched")
    return cases
