"""What one production trace yields, whatever tool exported it, and the case it becomes.

A trace's recorded answer is the case's ``response`` (so a run scores it without calling a
target), its retrieved documents are the ``context``, and the model, token usage and
where the trace came from stay in ``metadata`` for SQL and the Sample page.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import TypeAdapter

from engine.files import MAX_DEPTH, TooDeep, json_loads
from engine.models import TestCase, ToolCall, TrajectoryStep
from engine.testsets.base import MAX_ROW_BYTES, RowError, validated

MAX_TOKENS = 10**12
"""Most tokens one trace's usage field may count: a trillion is beyond any call, and a
bound keeps ``1e400`` (infinity once parsed) or a 5,000-digit number out of the metadata."""


_STEPS_JSON = json.JSONEncoder(ensure_ascii=False, default=str, check_circular=False)
"""How a trace's steps are measured against the row limit (one encoder, not one per case;
dumped models hold no cycles)."""

_STEPS = TypeAdapter(tuple[TrajectoryStep, ...])
"""Steps as pydantic's compact JSON: a bound on their size, found in Rust."""

_COMPACT_GROWTH = 3
"""A bound on how many times its compact JSON the Python encoding of the same dump takes:
a separator (``,``, ``:``) gains a space (twice its size), a float's exponent a sign or a
zero (``1e-7`` is ``1e-07``), and strings, integers and ``null`` are written the same (the
JSON dump has already made infinities ``null``); three leaves room to spare."""


@dataclass(frozen=True)
class TraceFields:
    """The parts of one trace a test case needs."""

    trace_id: str
    query: str
    response: str
    source: str
    """The convention the trace was read with (``otel-genai``, ``openinference``,
    ``langfuse``)."""
    contexts: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    service: str = ""
    """The service (OTLP ``service.name``) or the trace's name (Langfuse)."""
    started_at: str = ""
    """When the trace started (ISO 8601, UTC), '' when unknown."""
    tags: tuple[str, ...] = ()
    tools_called: tuple[ToolCall, ...] = ()
    """The agent's tool calls, in the order they ran (what the tool metrics score)."""
    trajectory: tuple[TrajectoryStep, ...] = ()
    """Its model turns and tool executions, in order, with timings."""


def iso_from_nanos(nanos: int) -> str:
    """Unix nanoseconds as ISO 8601 UTC ('' for 0, which OTLP uses for unset); ``RowError``
    past the year 9999, which a date cannot hold."""
    if nanos <= 0:
        return ""
    try:
        return datetime.fromtimestamp(nanos / 1e9, tz=UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        raise RowError(f"a start time of {nanos} ns is beyond any date") from None


def token_count(value: Any, what: str) -> int | None:
    """A usage field as a count of tokens (not a number: None); ``RowError`` for a
    negative, fractional, infinite or over-``MAX_TOKENS`` number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise RowError(f"{what} is {str(value)[:24]}, not a count of tokens")
    if not 0 <= value <= MAX_TOKENS:
        raise RowError(f"{what} is outside 0..{MAX_TOKENS:,} tokens")
    return int(value)


def as_text(value: Any) -> str:
    """A message content in any of the shapes the conventions use: text, an object with
    ``content`` or ``text``, a list of parts (the text parts joined), else ''."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("content", "text", "parts", "message"):
            if key in value:
                found = as_text(value[key])
                if found:
                    return found
        return ""
    if isinstance(value, list):
        parts = [as_text(v) for v in value]
        return "\n".join(p for p in parts if p)
    return ""


def maybe_json(value: Any) -> Any:
    """A string holding a JSON object or array, parsed; anything else as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json_loads(value, max_depth=MAX_DEPTH)
        except TooDeep:
            # Nesting inside a string is bounded like nesting in the file itself: every
            # reader after this one walks the value recursively.
            raise RowError(f"a JSON string attribute nested over {MAX_DEPTH} levels") from None
        except (json.JSONDecodeError, ValueError):
            return value
    return value


def _steps_bytes(steps: tuple[TrajectoryStep, ...], room: int) -> int:
    """The bytes of ``steps`` as JSON (``_STEPS_JSON``), exact whenever they could exceed
    ``room``; when they cannot, any figure up to ``room``.

    The exact figure dumps every step to dicts and encodes them in Python, which was half
    of turning a trace into a case. pydantic's own compact JSON of the same dump is a
    third of that, and the Python encoding is at most ``_COMPACT_GROWTH`` times its size,
    so a trajectory whose compact JSON times that fits in ``room`` fits, unmeasured."""
    try:
        compact = len(_STEPS.dump_json(steps, exclude_defaults=True))
    except ValueError:  # what it cannot encode (a lone surrogate) is measured as before
        compact = room + 1
    if compact * _COMPACT_GROWTH <= room:
        return compact
    dumped = [s.model_dump(mode="json", exclude_defaults=True) for s in steps]
    return len(_STEPS_JSON.encode(dumped).encode("utf-8"))


def to_case(fields: TraceFields) -> TestCase:
    """The native case of one trace; ``RowError`` when it has no question, no answer, or
    more text than one test-set row may hold."""
    if not fields.query.strip():
        raise RowError(f"trace {fields.trace_id}: no user input found")
    if not fields.response.strip():
        raise RowError(f"trace {fields.trace_id}: no recorded answer found")
    size = sum(len(t.encode("utf-8")) for t in (fields.query, fields.response, *fields.contexts))
    if fields.trajectory:  # tool outputs can be long: they count against the row too
        size += _steps_bytes(fields.trajectory, MAX_ROW_BYTES - size)
    if size > MAX_ROW_BYTES:
        raise RowError(
            f"trace {fields.trace_id}: {size:,} bytes of text, over the {MAX_ROW_BYTES:,}-byte "
            "limit of one case; trace skipped"
        )
    meta: dict[str, Any] = {"trace_id": fields.trace_id, "trace_source": fields.source}
    optional = {
        "service": fields.service,
        "model": fields.model,
        "input_tokens": fields.input_tokens,
        "output_tokens": fields.output_tokens,
        "document_ids": list(fields.document_ids),
        "started_at": fields.started_at,
    }
    meta.update({k: v for k, v in optional.items() if v not in ("", None, [])})
    return validated(
        {
            "id": fields.trace_id,
            "query": fields.query,
            "response": fields.response,
            "ai_provider": fields.model,
            "context": fields.contexts or None,
            "tags": fields.tags,
            "metadata": meta,
            "tools_called": fields.tools_called,
            "trajectory": fields.trajectory,
        }
    )
