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

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.files import MAX_DEPTH
from engine.testsets.base import RowError
from engine.testsets.traces.flattened import Layout, layout

SERVICE_NAME = "service.name"
"""The resource attribute naming the service that produced the spans."""

INT64_MAX = 2**63 - 1
"""OTLP integers (``intValue``, the nanosecond times) are int64: anything beyond is not
one, however many digits a file spends on it."""


@dataclass(frozen=True)
class SpanEvent:
    """A span event: its name and decoded attributes."""

    name: str
    attributes: dict[str, Any]


@dataclass
class Span:
    """One span, attributes decoded to Python values, with its resource's service.

    Read-only by convention rather than ``frozen``: a frozen dataclass sets each field
    through ``object.__setattr__``, which was a tenth of reading 100,000 spans, and
    nothing writes to a span once it is read."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEvent, ...] = ()
    service: str = ""
    """The ``service.name`` of the span's resource ('' when it has none)."""
    end_ns: int = 0
    """When the span ended, Unix nanoseconds (0: not recorded)."""

    _layout: Layout | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def layout(self) -> Layout:
        """Where its attributes' keys sit in flattened lists (worked out on the first look:
        the readers ask each span for several lists; by hand, as ``cached_property`` takes
        a lock on every first look)."""
        found = self._layout
        if found is None:
            found = self._layout = layout(self.attributes)
        return found


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
        return int64(value["intValue"], "intValue")
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v, depth + 1) for v in _values(value["arrayValue"], "arrayValue")]
    if "kvlistValue" in value:
        return attributes(_values(value["kvlistValue"], "kvlistValue"), depth + 1)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def int64(raw: Any, what: str) -> int:
    """An OTLP int64 given as a decimal string or a JSON number; ``RowError`` for anything
    else, a fraction, an infinity or a value beyond int64 (checked before ``int()`` reads
    a string of thousands of digits)."""
    if isinstance(raw, bool):
        raise RowError(f"{what} must be an integer, got a boolean")
    if type(raw) is str and 0 < len(raw) <= 19 and raw.isascii() and raw.isdigit():
        number = int(raw)  # the common case, spelled as OTLP writes it: checked below
    elif isinstance(raw, str):
        text = raw.strip()
        if not (0 < len(text) <= 20 and text.lstrip("-").isascii() and text.lstrip("-").isdigit()):
            raise RowError(f"{what} must be an int64 as a decimal string, got {text[:24]!r}")
        number = int(text)
    elif isinstance(raw, int):
        number = raw
    elif isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
        number = int(raw)
    else:
        raise RowError(f"{what} must be an int64, got {str(raw)[:24]}")
    if not -INT64_MAX - 1 <= number <= INT64_MAX:
        raise RowError(f"{what} is beyond int64")
    return number


def _values(holder: Any, what: str) -> list[Any]:
    """The ``values`` list of an ``arrayValue`` or ``kvlistValue`` (absent: empty)."""
    if holder is None:
        return []
    if not isinstance(holder, Mapping):
        raise RowError(f"{what} must be an object with a 'values' list")
    return _list(holder.get("values"), f"{what}.values")


def attributes(items: Any, depth: int = 0) -> dict[str, Any]:
    """A ``KeyValue`` list as a dict (entries without a string key are ignored)."""
    if not isinstance(items, list):
        return {}
    out: dict[str, Any] = {}
    plain = depth <= MAX_DEPTH  # else any_value refuses the nesting
    for item in items:
        if type(item) is dict:  # what a JSON parser gives: skips the ABC check
            key = item.get("key")
            if isinstance(key, str):
                value = item.get("value")
                # A string value is most of them: read as any_value reads it, one call less.
                if plain and type(value) is dict and "stringValue" in value:
                    out[key] = value["stringValue"]
                else:
                    out[key] = any_value(value, depth)
        elif isinstance(item, Mapping) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"), depth)
    return out


def is_otlp(doc: Any) -> bool:
    """Whether a parsed JSON document is an OTLP trace export."""
    return isinstance(doc, Mapping) and isinstance(doc.get("resourceSpans"), list)


def nanos(value: Any, what: str = "startTimeUnixNano") -> int:
    """A span's start (or end) in Unix nanoseconds (unset: 0); ``RowError`` beyond int64
    (about the year 2262), which no clock has written."""
    if type(value) is str and 0 < len(value) <= 19 and value.isascii() and value.isdigit():
        number = int(value)  # as OTLP writes it (19 digits: until 2286), one call less
        if number <= INT64_MAX:
            return number
    if value is None or value == "":
        return 0
    return max(0, int64(value, what))


def _list(value: Any, what: str) -> list[Any]:
    """A list field (absent or null: empty); ``RowError`` for a number or an object."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RowError(f"{what} must be a list, got {type(value).__name__}")
    return value


def trace_id_of(raw: Any) -> str:
    """The trace id a raw span names ('' when it names none)."""
    trace_id = raw.get("traceId") if isinstance(raw, Mapping) else None
    return trace_id.strip() if isinstance(trace_id, str) else ""


def events(raw: Any) -> tuple[SpanEvent, ...]:
    """A span's ``events`` list read (entries that are not objects are left out)."""
    return tuple(
        SpanEvent(str(e.get("name", "")), attributes(e.get("attributes")))
        for e in _list(raw, "events")
        if isinstance(e, Mapping)
    )


def resource_service(resource: Any) -> str:
    """The ``service.name`` of a request's ``resource`` ('' when it names none);
    ``RowError`` when the resource is not an object."""
    resource = resource or {}
    if not isinstance(resource, Mapping):
        raise RowError("a resource must be an object")
    service = attributes(resource.get("attributes")).get(SERVICE_NAME)
    return service if isinstance(service, str) else ""


def _span(raw: Any, service: str) -> Span:
    if not isinstance(raw, Mapping):
        raise RowError(f"a span must be an object, got {type(raw).__name__}")
    trace_id = trace_id_of(raw)
    if not trace_id:
        raise RowError("a span without a traceId")
    raw_events = raw.get("events")
    read_events = events(raw_events) if raw_events is not None else ()  # most have none
    return Span(
        trace_id,
        str(raw.get("spanId") or ""),
        str(raw.get("parentSpanId") or ""),
        str(raw.get("name") or ""),
        nanos(raw.get("startTimeUnixNano")),
        attributes(raw.get("attributes")),
        read_events,
        service,
        nanos(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
    )


@dataclass(frozen=True)
class BadSpan:
    """A span (or a part of a request holding spans) that cannot be read, and why."""

    trace_id: str
    """The trace it belongs to ('' when it names none: then only it is lost)."""
    reason: str


def spans(docs: Iterable[Any]) -> Iterator[Span | BadSpan]:
    """Every span of the requests ``docs``, with the service of its resource; a span, scope
    or resource that cannot be read is a ``BadSpan`` in its place (the rest still read)."""
    for doc in docs:
        for resource_spans in _list(doc.get("resourceSpans"), "resourceSpans"):
            try:
                if not isinstance(resource_spans, Mapping):
                    raise RowError("resourceSpans must hold objects")
                service_name = resource_service(resource_spans.get("resource"))
                scopes = _list(resource_spans.get("scopeSpans"), "scopeSpans")
            except RowError as exc:
                yield BadSpan("", str(exc))
                continue
            for scope in scopes:
                try:
                    if not isinstance(scope, Mapping):
                        raise RowError("scopeSpans must hold objects")
                    raws = _list(scope.get("spans"), "spans")
                except RowError as exc:
                    yield BadSpan("", str(exc))
                    continue
                for raw in raws:
                    try:
                        yield _span(raw, service_name)
                    except RowError as exc:
                        yield BadSpan(trace_id_of(raw), str(exc))
