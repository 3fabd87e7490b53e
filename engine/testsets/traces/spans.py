"""One trace's spans read with the GenAI semantic conventions or OpenInference.

OpenTelemetry GenAI (https://opentelemetry.io/docs/specs/semconv/gen-ai/): the older
indexed attributes ``gen_ai.prompt.N.role``/``.content`` and ``gen_ai.completion.N.content``,
the message events of v1.36 and before (``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message`` with a ``content``; ``gen_ai.choice`` with a ``message``),
the newer JSON attributes ``gen_ai.input.messages``/``gen_ai.output.messages`` (messages of
``parts``), ``gen_ai.request.model``/``gen_ai.response.model`` and
``gen_ai.usage.input_tokens``/``output_tokens`` (``prompt_tokens``/``completion_tokens``
before v1.27). OpenInference (https://github.com/Arize-ai/openinference/blob/main/spec/
semantic_conventions.md): ``openinference.span.kind``, ``input.value``/``output.value``,
``llm.input_messages.N.message.role``/``.content``, ``llm.output_messages.N...``,
``llm.model_name``, ``llm.token_count.prompt``/``completion`` and
``retrieval.documents.N.document.content``/``.id``.

The question and answer come from the root span when it is an application span with
``input.value``/``output.value`` (what the user asked and got), else from the last LLM
span's messages; documents come from every retriever span, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.models import ToolCall, TrajectoryStep
from engine.testsets.base import RowError
from engine.testsets.traces.answers import NoAnswerField, answer_of
from engine.testsets.traces.flattened import Layout, layout
from engine.testsets.traces.otlp import Span
from engine.testsets.traces.record import (
    TraceFields,
    as_text,
    iso_from_nanos,
    maybe_json,
    token_count,
)
from engine.testsets.values import prompt_text

OI_KIND = "openinference.span.kind"
_ROLE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_USER = ("user", "human")
_INPUT_TOKENS = (
    "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
)  # fmt: skip
_OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion",
)  # fmt: skip
_MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
GENAI_OPERATION = "gen_ai.operation.name"
TOOL_OPERATION = "execute_tool"
"""``gen_ai.operation.name`` of a tool execution span."""
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})
"""GenAI operations that hold an agent's steps rather than being one."""
NOT_MODEL_OPERATIONS = frozenset({TOOL_OPERATION})
"""GenAI operations whose spans are never a model call (their ``gen_ai.*`` attributes do not
make them one). An agent span stays a source of the question and answer (some frameworks
record the messages only there); the trajectory leaves it out as a step."""


Agent = Callable[[Sequence[Span]], tuple[tuple[ToolCall, ...], tuple[TrajectoryStep, ...]]]
"""What reads an agent's tool calls and steps from a trace's spans (``trajectory.py``)."""


class NotGenAI(RowError):
    """A trace with no GenAI or OpenInference span: another kind of trace the service
    exported (HTTP, database), skipped and counted rather than reported one by one."""


def indexed(attrs: Mapping[str, Any] | Span, prefix: str) -> list[dict[str, Any]]:
    """A list attribute flattened with indices (``prefix.0.x``, ``prefix.1.x``), or given
    as a list (or a JSON list) under ``prefix`` itself; each item a dict."""
    values: Mapping[str, Any]
    found: Layout | None
    if isinstance(attrs, Span):
        values, found = attrs.attributes, attrs.layout  # a span's layout: worked out once
    else:
        values, found = attrs, None
    raw = values.get(prefix)
    if raw is not None:  # most looks find nothing under the prefix itself
        value = maybe_json(raw)
        if isinstance(value, list):
            return [v if isinstance(v, dict) else {"content": v} for v in value]
    return (found or layout(values)).items(values, prefix)


def _message(item: Mapping[str, Any]) -> tuple[str, str]:
    """(role, text) of a message item in the GenAI or OpenInference spelling."""
    role = item.get("role", item.get("message.role", ""))
    content = item.get("content", item.get("message.content", item.get("parts")))
    return str(role or ""), as_text(maybe_json(content) if "parts" in item else content)


def _event_body(attrs: Mapping[str, Any]) -> Any:
    for key in ("content", "message", "body", "gen_ai.event.content"):
        if key in attrs:
            return maybe_json(attrs[key])
    return None


def input_messages(span: Span) -> list[tuple[str, str]]:
    """The messages sent to the model, in order, as (role, text)."""
    for prefix in ("gen_ai.input.messages", "gen_ai.prompt", "llm.input_messages"):
        items = indexed(span, prefix)
        if items:
            return [_message(i) for i in items]
    out = []
    for event in span.events:
        if event.name in _ROLE_EVENTS:
            out.append((_ROLE_EVENTS[event.name], as_text(_event_body(event.attributes))))
        elif event.name == "gen_ai.content.prompt":
            prompt = maybe_json(event.attributes.get("gen_ai.prompt"))
            items = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
            out += [_message(i) for i in items if isinstance(i, dict)]
    return out


def completion(span: Span) -> str:
    """The model's answer on an LLM span ('' when it has none)."""
    for prefix in ("gen_ai.output.messages", "gen_ai.completion", "llm.output_messages"):
        items = indexed(span, prefix)
        if items:
            return _message(items[0])[1]
    for event in span.events:
        if event.name == "gen_ai.choice":
            return as_text(_event_body(event.attributes))
        if event.name == "gen_ai.content.completion":
            return as_text(maybe_json(event.attributes.get("gen_ai.completion")))
    return ""


def is_llm(span: Span) -> bool:
    """An OpenInference LLM span, or a span with GenAI model attributes or events."""
    kind = span.attributes.get(OI_KIND)
    if kind is not None:
        return str(kind).upper() == "LLM"
    if str(span.attributes.get(GENAI_OPERATION, "")) in NOT_MODEL_OPERATIONS:
        return False
    return any(k.startswith("gen_ai.") for k in span.attributes) or any(
        e.name.startswith("gen_ai.") for e in span.events
    )


def _question(span: Span) -> str:
    """``input.value`` of an application span as the question ('' when it has none)."""
    try:
        return prompt_text(maybe_json(span.attributes.get("input.value")), "input.value")
    except RowError:
        return ""


def _answer(span: Span, refused: list[str]) -> str:
    """``output.value`` of an application span as the answer ('' when it has none),
    keeping why an object held none."""
    try:
        return answer_of(maybe_json(span.attributes.get("output.value")), "output.value")
    except NoAnswerField as exc:
        refused.append(str(exc))
        return ""


def _tokens(llm_spans: Sequence[Span], keys: tuple[str, ...]) -> int | None:
    total: int | None = None
    for span in llm_spans:
        attrs = span.attributes
        for key in keys:  # the first key the span has (a loop: no generator per span)
            if key in attrs:
                count = token_count(attrs[key], key)
                if count is not None:
                    total = (total or 0) + count
                break
    return total


def _documents(spans: Sequence[Span]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    texts: list[str] = []
    ids: list[str] = []
    for span in spans:
        for doc in indexed(span, "retrieval.documents"):
            text = as_text(doc.get("document.content", doc.get("content")))
            if text.strip():
                texts.append(text)
                doc_id = doc.get("document.id", doc.get("id"))
                ids.append("" if doc_id is None else str(doc_id))
    return tuple(texts), tuple(ids) if any(ids) else ()


def trace_fields(trace_id: str, spans: Sequence[Span], agent: Agent | None = None) -> TraceFields:
    """What one trace (its spans, any order) yields, with the tool calls and steps
    ``agent`` reads from its spans once it is known to be a GenAI trace; ``RowError`` when
    nothing in it is a GenAI or OpenInference span."""
    ordered = sorted(spans, key=lambda s: s.start_ns)
    ids = {s.span_id for s in ordered}
    root = next((s for s in ordered if not s.parent_id or s.parent_id not in ids), ordered[0])
    llm_spans = [s for s in ordered if is_llm(s)]
    openinference = any(OI_KIND in s.attributes for s in ordered)
    if not llm_spans and not openinference:
        raise NotGenAI(f"trace {trace_id}: no GenAI or OpenInference span; trace skipped")
    app_root = root not in llm_spans
    refused: list[str] = []
    query = _question(root) if app_root else ""
    response = _answer(root, refused) if app_root else ""
    for span in reversed(llm_spans):
        if not query:
            users = [text for role, text in input_messages(span) if role in _USER and text]
            query = users[-1] if users else ""
        if not response:
            response = completion(span)
    query = query or _question(root)
    response = response or _answer(root, refused)
    if not response and refused:  # an object is refused, never stored whole
        raise RowError(refused[0])
    contexts, document_ids = _documents(ordered)
    models = (str(s.attributes.get(k) or "") for s in reversed(llm_spans) for k in _MODEL_KEYS)
    model = next((m for m in models if m), "")
    calls, steps = agent(spans) if agent is not None else ((), ())
    return TraceFields(
        trace_id=trace_id,
        query=query,
        response=response,
        source="openinference" if openinference else "otel-genai",
        contexts=contexts,
        document_ids=document_ids,
        model=model,
        input_tokens=_tokens(llm_spans, _INPUT_TOKENS),
        output_tokens=_tokens(llm_spans, _OUTPUT_TOKENS),
        service=root.service or next((s.service for s in ordered if s.service), ""),
        started_at=iso_from_nanos(root.start_ns),
        tools_called=calls,
        trajectory=steps,
    )
