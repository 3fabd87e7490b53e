"""Langfuse trace exports: traces with their observations.

Shape of the public API's ``TraceWithFullDetails`` (``GET /api/public/traces/{id}``; the
list endpoint pages them under ``data``; OpenAPI spec at
https://cloud.langfuse.com/generated/api/openapi.yml): ``id``, ``name``, ``timestamp``,
``input``, ``output`` (any JSON), ``tags``, ``metadata`` and ``observations[]``, each with
``id``, ``type`` (``SPAN``, ``GENERATION``, ``EVENT``; newer SDKs add ``RETRIEVER`` and
others), ``name``, ``startTime``, ``model``, ``input``, ``output``, ``usage`` (``input``,
``output``, ``total``, ``unit``) and ``usageDetails`` (``input``, ``output``...). The
question and answer are the trace's input and output, else the last generation's; the
documents are the output of retriever observations (or of spans named for retrieval).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.testsets.base import RowError
from engine.testsets.traces.answers import NoAnswerField, answer_of
from engine.testsets.traces.record import TraceFields, token_count
from engine.testsets.values import context_items, prompt_text

LANGFUSE_TRACE_KEYS = frozenset({"observations", "htmlPath", "sessionId", "latency", "totalCost"})
"""Keys only a Langfuse trace has (a dataset item has ``expectedOutput`` instead)."""

_USAGE_IN = ("input", "promptTokens", "prompt_tokens", "input_tokens")
_USAGE_OUT = ("output", "completionTokens", "completion_tokens", "output_tokens")


def is_langfuse_trace(item: Any) -> bool:
    """Whether a JSON object is a Langfuse trace (not a dataset item)."""
    return (
        isinstance(item, Mapping)
        and "id" in item
        and "input" in item
        and bool(LANGFUSE_TRACE_KEYS & set(item))
        and "expectedOutput" not in item
    )


def observation_list(trace: Mapping[str, Any]) -> list[Any]:
    """The trace's ``observations`` (absent or null: none); ``RowError`` for a number or an
    object in their place."""
    found = trace.get("observations")
    if found is None:
        return []
    if not isinstance(found, list):
        raise RowError(f"observations must be a list, got {type(found).__name__}")
    return found


def _observations(trace: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = [o for o in observation_list(trace) if isinstance(o, Mapping)]
    return sorted(found, key=lambda o: str(o.get("startTime") or ""))


def _usage(generations: Sequence[Mapping[str, Any]], keys: tuple[str, ...]) -> int | None:
    total: int | None = None
    for gen in generations:
        for field in ("usageDetails", "usage"):
            usage = gen.get(field)
            if not isinstance(usage, Mapping):
                continue
            key = next((k for k in keys if k in usage), None)
            count = token_count(usage[key], f"{field}.{key}") if key is not None else None
            if count is not None:
                total = (total or 0) + count
                break
    return total


def _question(value: Any) -> str:
    try:
        return prompt_text(value, "input") if value is not None else ""
    except RowError:
        return ""


def _answer(value: Any, field: str, refused: list[str]) -> str:
    """The answer in an output ('' when none), keeping why an object held none."""
    try:
        return answer_of(value, field)
    except NoAnswerField as exc:
        refused.append(str(exc))
        return ""


def _documents(observations: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    out: list[str] = []
    for obs in observations:
        retriever = str(obs.get("type", "")).upper() == "RETRIEVER"
        if not retriever and "retriev" not in str(obs.get("name", "")).lower():
            continue
        output = obs.get("output")
        if isinstance(output, Mapping):
            output = next((output[k] for k in ("documents", "docs") if k in output), output)
        try:
            out += list(context_items(output, "output") or ())
        except RowError:
            continue
    return tuple(out)


def trace_fields(trace: Mapping[str, Any]) -> TraceFields:
    """What one Langfuse trace yields."""
    trace_id = str(trace.get("id") or "").strip()
    if not trace_id:
        raise RowError("a Langfuse trace without an id")
    observations = _observations(trace)
    generations = [o for o in observations if str(o.get("type", "")).upper() == "GENERATION"]
    query = _question(trace.get("input"))
    refused: list[str] = []
    response = _answer(trace.get("output"), "output", refused)
    for gen in reversed(generations):
        query = query or _question(gen.get("input"))
        response = response or _answer(gen.get("output"), "observations[].output", refused)
    if not response and refused:  # an object is refused, never stored whole
        raise RowError(f"trace {trace_id}: {refused[0]}; trace skipped")
    model = next((str(g["model"]) for g in reversed(generations) if g.get("model")), "")
    started = trace.get("timestamp") or ""
    if not isinstance(started, str) or len(started) > 64:
        raise RowError(f"trace {trace_id}: timestamp must be an ISO 8601 date; trace skipped")
    tags = trace.get("tags")
    return TraceFields(
        trace_id=trace_id,
        query=query,
        response=response,
        source="langfuse",
        contexts=_documents(observations),
        model=model,
        input_tokens=_usage(generations, _USAGE_IN),
        output_tokens=_usage(generations, _USAGE_OUT),
        service=str(trace.get("name") or ""),
        started_at=started,
        # Tags are labels: an object among them is not one, and is not kept whole either.
        tags=tuple(str(t) for t in tags if isinstance(t, str | int | float))
        if isinstance(tags, list)
        else (),
    )
