"""OTLP/JSON requests decoded straight into typed records: the fast path of ``otlp.py``.

A request holds millions of small objects (every attribute is a key-value object around a
value object); decoded into msgspec structs rather than dicts they take half the time to
parse and to read, and memory is freed sooner. Only the shape the specification writes is
typed; a file with anything else (a plain value where an ``AnyValue`` belongs, a number
for a span, a key that is not a string) fails to decode here and is read by ``otlp.py``
as before, with its reasons. Where both read a file, they read the same spans: every
value this module reads is handed to the same helpers ``otlp.py`` uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
from msgspec import UNSET, Struct

from engine.testsets.base import RowError
from engine.testsets.traces import otlp


class _AnyValue(Struct, gc=False):
    """An ``AnyValue``: each field unset when absent (``null`` is read as ``otlp.py`` reads
    it, a present key holding None)."""

    stringValue: Any = UNSET
    intValue: Any = UNSET
    doubleValue: Any = UNSET
    boolValue: Any = UNSET
    arrayValue: Any = UNSET
    kvlistValue: Any = UNSET
    bytesValue: Any = UNSET


class _KeyValue(Struct, gc=False):
    key: str
    value: _AnyValue | None = None


class _Span(Struct, gc=False):
    traceId: Any = None
    spanId: Any = None
    parentSpanId: Any = None
    name: Any = None
    startTimeUnixNano: Any = None
    endTimeUnixNano: Any = None
    attributes: list[_KeyValue] | None = None
    events: Any = None


class _ScopeSpans(Struct, gc=False):
    spans: list[_Span] | None = None


class _ResourceSpans(Struct, gc=False):
    resource: Any = None
    scopeSpans: list[_ScopeSpans] | None = None


class Request(Struct, gc=False):
    """One ``ExportTraceServiceRequest`` in the shape the specification writes."""

    resourceSpans: list[_ResourceSpans]


_DECODER = msgspec.json.Decoder(Request)

_HEAD = 200
"""Characters looked at for the request's opening key (white space of a pretty-printed
file included; a slice, not a strip of the whole text)."""


def request(text: str) -> Request | None:
    """``text`` as one typed request, or None when it is not one in the written shape
    (then ``otlp.py`` reads it). Tried only on a document that opens with the request's
    key, as exporters write it: anything else would be parsed in full only to fail."""
    head = text[:_HEAD].lstrip()
    if not (head.startswith("{") and head[1:].lstrip().startswith('"resourceSpans"')):
        return None
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):  # msgspec's decode and validation errors
        return None


def _value(value: _AnyValue | None) -> Any:
    """What ``otlp.any_value`` reads from the same object, checked in its order."""
    if value is None:
        return None
    if value.stringValue is not UNSET:
        return value.stringValue
    if value.intValue is not UNSET:
        return otlp.int64(value.intValue, "intValue")
    if value.doubleValue is not UNSET:
        return value.doubleValue
    if value.boolValue is not UNSET:
        return bool(value.boolValue)
    if value.arrayValue is not UNSET:
        return otlp.any_value({"arrayValue": value.arrayValue})
    if value.kvlistValue is not UNSET:
        return otlp.any_value({"kvlistValue": value.kvlistValue})
    if value.bytesValue is not UNSET:
        return value.bytesValue
    return None


def _attributes(items: list[_KeyValue] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        value = item.value
        # A string value is most of them: read without a call.
        if value is not None and value.stringValue is not UNSET:
            out[item.key] = value.stringValue
        else:
            out[item.key] = _value(value)
    return out


def _trace_id(raw: _Span) -> str:
    return raw.traceId.strip() if isinstance(raw.traceId, str) else ""


def _span(raw: _Span, service: str) -> otlp.Span:
    trace_id = _trace_id(raw)
    if not trace_id:
        raise RowError("a span without a traceId")
    read_events = otlp.events(raw.events) if raw.events is not None else ()  # as otlp.py
    return otlp.Span(
        trace_id,
        str(raw.spanId or ""),
        str(raw.parentSpanId or ""),
        str(raw.name or ""),
        otlp.nanos(raw.startTimeUnixNano),
        _attributes(raw.attributes),
        read_events,
        service,
        otlp.nanos(raw.endTimeUnixNano, "endTimeUnixNano"),
    )


def spans(doc: Request) -> Iterator[otlp.Span | otlp.BadSpan]:
    """Every span of ``doc`` as ``otlp.spans`` reads it from the same request."""
    for resource_spans in doc.resourceSpans:
        try:
            service = otlp.resource_service(resource_spans.resource)
        except RowError as exc:
            yield otlp.BadSpan("", str(exc))
            continue
        for scope in resource_spans.scopeSpans or ():
            for raw in scope.spans or ():
                try:
                    yield _span(raw, service)
                except RowError as exc:
                    yield otlp.BadSpan(_trace_id(raw), str(exc))
