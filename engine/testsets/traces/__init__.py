"""Exported production traces as test cases with their recorded answers.

Three sources, told apart by the document: OTLP/JSON (``resourceSpans``; one request in
the shape the specification writes decoded into typed records, ``otlp_typed.py``, any
other read as plain JSON, ``otlp.py``; spans read with
the OpenTelemetry GenAI conventions or OpenInference, ``spans.py``, an agent's tool calls
and steps rebuilt by ``trajectory.py``) and Langfuse trace
exports (traces with ``observations``, ``langfuse.py``). A file is one JSON document or
JSON Lines of them (the collector's file exporter writes one request per line). Each trace
becomes one case (``record.to_case``); a trace that cannot (no GenAI span, no answer, too
much text) is a ``Problem`` naming it, and the rest load. The file's series is its most
common service (OTLP ``service.name``, Langfuse trace name).

Bounded: the file is read under the test-set limit, then refused over
``MAX_TRACE_FILE_BYTES`` before it is parsed (parsed JSON takes several times its size in
memory), and every case under the row limit.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from engine.files import (
    MAX_DEPTH,
    MAX_EXPANDED_BYTES,
    TooDeep,
    collector_paused,
    depth_over,
    json_loads,
)
from engine.models import TestCase
from engine.testsets.base import Problem, RowError, TestSetError
from engine.testsets.traces import langfuse, otlp, otlp_typed, spans, trajectory
from engine.testsets.traces.record import TraceFields, to_case

MAX_TRACE_FILE_BYTES = MAX_EXPANDED_BYTES
"""Largest trace file parsed: the most text one document may expand to (a 256 MB OTLP
file takes about 2 GB once parsed into Python objects)."""


@dataclass(frozen=True)
class TraceFile:
    """The cases of a trace file, the traces skipped and why, and its series."""

    format: str
    """``otlp-json``, ``otlp-jsonl``, ``langfuse-traces-json`` or ``langfuse-traces-jsonl``."""
    cases: tuple[TestCase, ...]
    problems: tuple[Problem, ...]
    series: str
    """The most common service of its traces ('' when none is named)."""
    spans: int = 0
    """Spans (OTLP) or observations (Langfuse) read."""


def looks_like_traces(text: str) -> bool:
    """A cheap look before parsing: does the file name an OTLP or Langfuse trace key
    anywhere? (Anywhere: a Langfuse trace's ``observations`` follow its input, which may be
    long, and read as a Phoenix dataset such a file would score the recorded answers as
    references. A substring search costs about a millisecond per megabyte; a file that
    only mentions the key is parsed twice.)"""
    return '"resourceSpans"' in text or '"observations"' in text


MALFORMED = (TypeError, ValueError, OverflowError, AttributeError, KeyError, RecursionError)
"""What reading one trace of valid JSON in an unexpected shape can raise beyond the
``RowError`` the readers raise for the shapes they check: the trace is skipped with its
reason, never the whole file (a monitored folder would fail every pass on it)."""

Located = tuple[int, Any]
"""A JSON value and the line of the file it came from (0: a one-document file)."""


def _documents(name: str, text: str) -> tuple[list[Located], str]:
    """The JSON documents of the file with their lines, and its container (``json`` or
    ``jsonl``)."""
    try:
        # Depth is bounded where values are read (``otlp.any_value``, ``_langfuse_fields``):
        # a walk over the whole parsed file here costs four times the parse.
        return [(0, json_loads(text, max_depth=None))], "json"
    except TooDeep as exc:
        raise TestSetError(f"{name}: invalid JSON: {exc.msg}") from exc
    except json.JSONDecodeError as exc:
        if "Extra data" not in exc.msg:
            raise TestSetError(
                f"{name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from exc
    docs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            docs.append((number, json_loads(line, max_depth=None)))
        except json.JSONDecodeError as exc:
            raise TestSetError(f"{name}:{number}: invalid JSON: {exc.msg}") from exc
    return docs, "jsonl"


def _langfuse_traces(docs: list[Located]) -> Iterator[Located]:
    for line, doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get("data"), list):
            yield from ((line, t) for t in doc["data"])
        elif isinstance(doc, list):
            yield from ((line, t) for t in doc)
        else:
            yield line, doc


def read_traces(name: str, text: str) -> TraceFile | None:
    """The trace file in ``text`` (``name`` names it in messages), or None when it is
    not one (then it is an ordinary test set). ``TestSetError`` for a trace file that is
    too big, not JSON, or has no usable trace."""
    if not looks_like_traces(text):
        return None
    with collector_paused():
        return _read_traces(name, text)


def _read_traces(name: str, text: str) -> TraceFile | None:
    # An ASCII text is as many bytes as characters (known without encoding 76 MB again).
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size > MAX_TRACE_FILE_BYTES:
        raise TestSetError(
            f"{name}: trace file is {size:,} bytes, over the {MAX_TRACE_FILE_BYTES:,}-byte "
            "limit of one load; split it (one file per hour or per service)"
        )
    problems: list[Problem] = []
    cases: list[TestCase] = []
    services: Counter[str] = Counter()
    typed = otlp_typed.request(text)
    if typed is not None:  # one request in the shape the specification writes: fast path
        kind, container = "otlp", "json"
        count, fields = _otlp_fields(name, ((0, s) for s in otlp_typed.spans(typed)), problems)
    else:
        docs, container = _documents(name, text)
        if all(otlp.is_otlp(d) for _, d in docs):
            kind = "otlp"
            located = ((line, s) for line, doc in docs for s in otlp.spans([doc]))
            count, fields = _otlp_fields(name, located, problems)
        else:
            traces = list(_langfuse_traces(docs))
            if not traces or not all(langfuse.is_langfuse_trace(t) for _, t in traces):
                return None  # mentions the keys but is something else: an ordinary test set
            kind = "langfuse-traces"
            count, fields = _langfuse_fields(name, traces, problems)
    seen: set[str] = set()
    # JSON can spell a lone surrogate ("\ud800"), which is no Unicode character: the row
    # could not be written. Only a file that spells one pays for checking its cases.
    may_hold_surrogates = "\\ud" in text or "\\uD" in text
    for line, found in fields:
        try:
            case = to_case(found)
            if may_hold_surrogates:
                json.dumps(case.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")
        except RowError as exc:
            problems.append(Problem(name, line, str(exc)))
            continue
        except UnicodeEncodeError as exc:
            char = f"\\u{ord(exc.object[exc.start]):04x}"
            reason = f"text holds {char}, a lone surrogate and no Unicode character; skipped"
            problems.append(Problem(name, line, f"trace {found.trace_id}: {reason}"))
            continue
        if case.id in seen:
            problems.append(Problem(name, line, f"trace {case.id}: duplicate trace id; skipped"))
            continue
        seen.add(case.id)
        cases.append(case)
        if found.service:
            services[found.service] += 1
    if not cases:
        reasons = "; ".join(str(p.reason) for p in problems[:3]) or "no traces"
        raise TestSetError(f"{name}: no trace yields a test case ({reasons})", problems)
    series = services.most_common(1)[0][0] if services else ""
    fmt = f"{kind}-{container}"
    return TraceFile(fmt, tuple(cases), tuple(problems), series, count)


def _named(trace: Any, reason: str) -> str:
    """``reason`` naming the Langfuse trace it is about (its id, cut short)."""
    if reason.startswith("trace "):
        return reason
    trace_id = str(trace.get("id", "") if isinstance(trace, dict) else "")[:64]
    return f"trace {trace_id or '(no id)'}: {reason.removesuffix('; trace skipped')}; trace skipped"


def _malformed(trace_id: str, exc: BaseException) -> str:
    """The reason a trace of an unexpected shape is skipped (the error's kind only: its
    text could quote the trace's data)."""
    return f"trace {trace_id or '(no id)'}: malformed ({type(exc).__name__}); trace skipped"


def _langfuse_fields(
    name: str, traces: list[Located], problems: list[Problem]
) -> tuple[int, list[tuple[int, TraceFields]]]:
    """Each Langfuse trace read into its fields (with its line); the observations counted."""
    fields = []
    count = 0
    for line, trace in traces:
        try:
            if depth_over(trace):
                raise RowError(f"a trace nested over {MAX_DEPTH} levels; trace skipped")
            count += len(langfuse.observation_list(trace))
            fields.append((line, langfuse.trace_fields(trace)))
        except RowError as exc:
            problems.append(Problem(name, line, _named(trace, str(exc))))
        except MALFORMED as exc:
            problems.append(Problem(name, line, _malformed(str(trace.get("id", ""))[:64], exc)))
    return count, fields


def _otlp_fields(
    name: str, located: Iterable[tuple[int, otlp.Span | otlp.BadSpan]], problems: list[Problem]
) -> tuple[int, list[tuple[int, TraceFields]]]:
    """Spans (each with its line) grouped by trace (first-seen order), each trace read into
    its fields; a trace with a span that cannot be read is skipped whole, with the reason."""
    by_trace: dict[str, list[otlp.Span]] = {}
    lines: dict[str, int] = {}
    bad: dict[str, str] = {}
    count = 0
    for line, span in located:
        if isinstance(span, otlp.BadSpan):
            if not span.trace_id:
                problems.append(Problem(name, line, f"{span.reason}; skipped"))
                continue
            bad.setdefault(span.trace_id, span.reason)
            lines.setdefault(span.trace_id, line)
            continue
        by_trace.setdefault(span.trace_id, []).append(span)
        lines.setdefault(span.trace_id, line)
        count += 1
    fields = []
    skipped = 0
    for trace_id in lines:
        line = lines[trace_id]
        if trace_id in bad:
            reason = f"trace {trace_id[:64]}: {bad[trace_id]}; trace skipped"
            problems.append(Problem(name, line, reason))
            continue
        try:
            found = spans.trace_fields(trace_id, by_trace[trace_id], trajectory.calls_and_steps)
            fields.append((line, found))
        except spans.NotGenAI:
            skipped += 1  # HTTP, database... traces the service also exported
        except RowError as exc:
            problems.append(Problem(name, line, f"trace {trace_id[:64]}: {exc}; trace skipped"))
        except MALFORMED as exc:
            problems.append(Problem(name, line, _malformed(trace_id[:64], exc)))
    if skipped:
        problems.append(
            Problem(name, 0, f"{skipped} trace(s) without a GenAI or OpenInference span skipped")
        )
    return count, fields


__all__ = ["MAX_TRACE_FILE_BYTES", "TraceFile", "looks_like_traces", "read_traces"]
