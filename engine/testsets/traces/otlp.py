"""OTLP/JSON trace documents as plain spans.

The shape is the OTLP/HTTP JSON encoding of ``ExportTraceServiceRequest``
(https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): ``resourceSpans[]``
each with a ``resource.attributes`` list and ``scopeSpans[].spans[]``; a span has hex
``traceId``/``spanId``/``parentSpanId``, ``name``, ``startTimeUnixNano`` (a decimal string),
``attributes`` and ``events[]`` (``name``, ``timeUnixNano``, ``attributes``). An attribute
is ``{"key": K, "value": AnyValue}`` where the AnyValue holds exactly one of
``stringValue``, ``boolValue``, ``intValue`` (int64 as a decimal string), ``doubleValue``,
``arrayValue.values[]``, ``kvlistValue.values[]`` or ``bytesValue`` (base64). The
collector's file exporter writes one such request per line, so a file may hold many.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engine.files import MAX_DEPTH
from engine.testsets.base import RowError

SERVICE_NAME = "service.name"
"""The resource attribute naming the service that produced the spans."""


@dataclass(frozen=True)
class SpanEvent:
    """A span event: its name and decoded attributes."""

    name: str
    attributes: dict[str, Any]


@dataclass(frozen=True)
class Span:
    """One span, attributes decoded to Python values, with its resource's service."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEvent, ...] = ()
    service: str = ""
    """The ``service.name`` of the span's resource ('' when it has none)."""


def any_value(value: Any, depth: int = 0) -> Any:
    """The Python value of an OTLP ``AnyValue`` (unknown or empty: None). Nesting is
    bounded here rather than by walking the whole parsed file first (which took four times
    as long as parsing it): only arrays and key-value lists nest."""
    if depth > MAX_DEPTH:
        raise RowError(f"an attribute value nested over {MAX_DEPTH} levels")
    if not isinstance(value, Mapping):
        return value  # a non-conforming exporter wrote the plain value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        items = (value["arrayValue"] or {}).get("values") or []
        return [any_value(v, depth + 1) for v in items]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values") or [], depth + 1)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any, depth: int = 0) -> dict[str, Any]:
    """A ``KeyValue`` list as a dict (entries without a string key are ignored)."""
    if not isinstance(items, list):
        return {}
    out: dict[str, Any] = {}
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"), depth)
    return out


def is_otlp(doc: Any) -> bool:
    """Whether a parsed JSON document is an OTLP trace export."""
    return isinstance(doc, Mapping) and isinstance(doc.get("resourceSpans"), list)


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _span(raw: Any, service: str) -> Span:
    if not isinstance(raw, Mapping):
        raise RowError(f"a span must be an object, got {type(raw).__name__}")
    trace_id = raw.get("traceId")
    if not isinstance(trace_id, str) or not trace_id.strip():
        raise RowError("a span without a traceId")
    events = tuple(
        SpanEvent(str(e.get("name", "")), attributes(e.get("attributes")))
        for e in raw.get("events") or []
        if isinstance(e, Mapping)
    )
    return Span(
        trace_id=trace_id.strip(),
        span_id=str(raw.get("spanId") or ""),
        parent_id=str(raw.get("parentSpanId") or ""),
        name=str(raw.get("name") or ""),
        start_ns=_nanos(raw.get("startTimeUnixNano")),
        attributes=attributes(raw.get("attributes")),
        events=events,
        service=service,
    )


def spans(docs: Iterable[Any]) -> Iterator[Span]:
    """Every span of the requests ``docs``, with the service of its resource; a span
    that is not an object or has no trace id raises ``RowError``."""
    for doc in docs:
        for resource_spans in doc.get("resourceSpans") or []:
            if not isinstance(resource_spans, Mapping):
                raise RowError("resourceSpans must hold objects")
            resource = resource_spans.get("resource") or {}
            service = attributes(resource.get("attributes")).get(SERVICE_NAME)
            service_name = service if isinstance(service, str) else ""
            for scope in resource_spans.get("scopeSpans") or []:
                if not isinstance(scope, Mapping):
                    raise RowError("scopeSpans must hold objects")
                for raw in scope.get("spans") or []:
                    yield _span(raw, service_name)
