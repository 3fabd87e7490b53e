"""An agent's trajectory rebuilt from one trace's spans: model turns and tool executions in
the order they ran, with their timings, and the tool calls the tool metrics read.

OpenInference (https://github.com/Arize-ai/openinference/blob/main/spec/): a ``TOOL`` span
(``openinference.span.kind``) is one execution, named by ``tool.name``, its arguments in
``input.value`` (a JSON object; ``tool.parameters`` when there is none) and its result in
``output.value``; an ``LLM`` span is a model turn whose tool calls are
``llm.output_messages.N.message.tool_calls.M.tool_call.function.name`` / ``.arguments`` (a
JSON string) / ``tool_call.id``; ``CHAIN`` and ``AGENT`` spans only hold the others.

OpenTelemetry GenAI (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/): a
span with ``gen_ai.operation.name`` = ``execute_tool`` is one execution (``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``); a
model span's ``gen_ai.output.messages`` carry ``tool_call`` parts (``id``, ``name``,
``arguments``); ``invoke_agent`` / ``create_agent`` spans hold the others.

Order: depth first from the root, children by start time (a child runs inside its parent,
so this is the order of events however the exporter batched the spans). A call a model
asked for with no execution span (tools not instrumented) is still a call, placed after
that turn, with no output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.models import ToolCall, TrajectoryStep
from engine.testsets.base import RowError
from engine.testsets.traces.otlp import Span
from engine.testsets.traces.record import maybe_json
from engine.testsets.traces.spans import (
    AGENT_OPERATIONS,
    GENAI_OPERATION,
    OI_KIND,
    TOOL_OPERATION,
    completion,
    indexed,
    is_llm,
)

CONTAINER_KINDS = frozenset({"CHAIN", "AGENT"})
"""OpenInference span kinds that hold an agent's steps rather than being one."""
_NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class Trajectory:
    """The steps of one trace and the tool calls the metrics score."""

    steps: tuple[TrajectoryStep, ...]
    calls: tuple[ToolCall, ...]


def is_tool(span: Span) -> bool:
    """A tool execution span (OpenInference ``TOOL`` or GenAI ``execute_tool``)."""
    kind = span.attributes.get(OI_KIND)
    if kind is not None:
        return str(kind).upper() == "TOOL"
    return str(span.attributes.get(GENAI_OPERATION, "")) == TOOL_OPERATION


def is_container(span: Span) -> bool:
    """A span that holds an agent's steps (an agent, a chain) rather than being one."""
    kind = span.attributes.get(OI_KIND)
    if kind is not None:
        return str(kind).upper() in CONTAINER_KINDS
    return str(span.attributes.get(GENAI_OPERATION, "")) in AGENT_OPERATIONS


def _role(span: Span) -> str:
    """``tool`` (``is_tool``), ``model`` (``is_llm`` and not ``is_container``) or '' (a
    container or another span), the kind attribute read once."""
    kind = span.attributes.get(OI_KIND)
    if kind is not None:
        upper = str(kind).upper()
        return "tool" if upper == "TOOL" else "model" if upper == "LLM" else ""
    operation = str(span.attributes.get(GENAI_OPERATION, ""))
    if operation == TOOL_OPERATION:
        return "tool"
    return "model" if operation not in AGENT_OPERATIONS and is_llm(span) else ""


def in_tree_order(spans: Sequence[Span]) -> list[Span]:
    """Spans depth first from the roots, siblings by start time (then end time, then id)."""
    ids = {s.span_id for s in spans if s.span_id}
    children: dict[str, list[Span]] = {}
    roots: list[Span] = []
    for span in spans:
        if span.parent_id and span.parent_id in ids and span.parent_id != span.span_id:
            children.setdefault(span.parent_id, []).append(span)
        else:
            roots.append(span)

    def key(span: Span) -> tuple[int, int, str]:
        return span.start_ns, span.end_ns, span.span_id

    ordered: list[Span] = []
    seen: set[int] = set()
    stack = sorted(roots, key=key, reverse=True)
    while stack:  # iterative: a deep chain of spans never reaches the recursion limit
        span = stack.pop()
        if id(span) in seen:
            continue
        seen.add(id(span))
        ordered.append(span)
        kids = children.get(span.span_id)
        if kids:  # most spans are leaves: no sort to run
            stack.extend(sorted(kids, key=key, reverse=True))
    ordered += [s for s in spans if id(s) not in seen]  # a parent cycle: by start time
    return ordered


def _arguments(raw: Any, what: str) -> dict[str, Any]:
    """Tool arguments: a JSON object (or a string holding one); none given: empty."""
    value = maybe_json(raw)
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    raise RowError(f"{what}: tool arguments must be a JSON object, got {_kind(value)}")


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "text that is not JSON"
    return "a list" if isinstance(value, list) else type(value).__name__


def _tool_step(span: Span, start_ns: int) -> TrajectoryStep:
    attrs = span.attributes
    where = f"span {span.span_id[:32] or span.name[:32]!r}"
    name = attrs.get("tool.name") or attrs.get("gen_ai.tool.name")
    if not name:
        name = span.name.removeprefix(TOOL_OPERATION).strip()
    if not isinstance(name, str) or not name.strip():
        raise RowError(f"{where}: a tool span without a tool name")
    if "gen_ai.tool.call.arguments" in attrs:
        arguments = _arguments(attrs["gen_ai.tool.call.arguments"], where)
    elif "input.value" in attrs:
        arguments = _arguments(attrs["input.value"], where)
    else:
        arguments = _parameters(attrs.get("tool.parameters"))
    output = attrs.get("gen_ai.tool.call.result", attrs.get("output.value"))
    call_id = attrs.get("gen_ai.tool.call.id", attrs.get("tool_call.id", attrs.get("tool.id")))
    return TrajectoryStep(
        kind="tool",
        name=name.strip(),
        arguments=arguments,
        output=maybe_json(output),
        call_id="" if call_id is None else str(call_id),
        **_timing(span, start_ns),
    )


def _parameters(raw: Any) -> dict[str, Any]:
    """``tool.parameters`` as arguments, unless it is the tool's parameter schema (which
    some instrumentations put there instead of the values)."""
    value = maybe_json(raw)
    if not isinstance(value, Mapping):
        return {}
    if value.get("type") == "object" and "properties" in value:
        return {}
    return dict(value)


def _timing(span: Span, start_ns: int) -> dict[str, float | None]:
    start = (span.start_ns - start_ns) / _NS_PER_MS if span.start_ns and start_ns else None
    duration = None
    if span.start_ns and span.end_ns >= span.start_ns:
        duration = (span.end_ns - span.start_ns) / _NS_PER_MS
    return {"start_ms": start if start is None else max(0.0, start), "duration_ms": duration}


Requested = tuple[ToolCall, str]
"""A tool call a model turn asked for, and its call id ('' when none)."""


def _requested(span: Span) -> list[Requested]:
    """The tool calls a model turn asked for, in both conventions' spellings."""
    where = f"span {span.span_id[:32] or span.name[:32]!r}"
    calls: list[Requested] = []
    for message in indexed(span, "gen_ai.output.messages"):
        parts = maybe_json(message.get("parts"))
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, Mapping) and part.get("type") == "tool_call":
                calls.append(_call(part.get("name"), part.get("arguments"), part.get("id"), where))
    for message in indexed(span, "llm.output_messages"):
        for call in indexed(message, "message.tool_calls"):
            calls.append(
                _call(
                    call.get("tool_call.function.name"),
                    call.get("tool_call.function.arguments"),
                    call.get("tool_call.id"),
                    where,
                )
            )
    return calls


def _call(name: Any, arguments: Any, call_id: Any, where: str) -> Requested:
    if not isinstance(name, str) or not name.strip():
        raise RowError(f"{where}: a tool call without a function name")
    call = ToolCall(name=name.strip(), arguments=_arguments(arguments, where))
    return call, "" if call_id is None else str(call_id)


def _model_step(span: Span, start_ns: int, requested: list[Requested]) -> TrajectoryStep:
    model = next(
        (str(span.attributes[k]) for k in _MODEL_KEYS if span.attributes.get(k)), span.name
    )
    return TrajectoryStep(
        kind="model", name=model, text=completion(span),
        requested=tuple(call for call, _ in requested), **_timing(span, start_ns),
    )  # fmt: skip


_MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")


def trajectory(spans: Sequence[Span]) -> Trajectory:
    """The trajectory of one trace's spans; ``RowError`` for a tool span or tool call
    without a name, or with arguments that are not a JSON object."""
    ordered = in_tree_order(spans)
    start_ns = min((s.start_ns for s in ordered if s.start_ns), default=0)
    steps: list[TrajectoryStep] = []
    pending: list[tuple[int, ToolCall, str]] = []  # (after step n, call, id) not yet run
    # Calls in trajectory order, each a step or a request: a call is built once, with its
    # order, at the end (a copy per call was a tenth of rebuilding a trajectory).
    slots: list[tuple[int, TrajectoryStep | ToolCall]] = []
    for span in ordered:
        role = _role(span)
        if role == "tool":
            step = _tool_step(span, start_ns)
            steps.append(step)
            _take(pending, step)
            slots.append((len(steps) - 1, step))
        elif role == "model":
            requested = _requested(span)
            steps.append(_model_step(span, start_ns, requested))
            pending += [(len(steps) - 1, call, call_id) for call, call_id in requested]
    # Asked for but never run (or the tools were not traced): a call without an output.
    slots += [(after, call) for after, call, _ in pending]
    slots.sort(key=lambda slot: slot[0])
    calls = tuple(
        ToolCall(name=call.name, arguments=call.arguments, output=call.output, order=n)
        for n, (_, call) in enumerate(slots)
    )
    return Trajectory(tuple(steps), calls)


def calls_and_steps(
    spans: Sequence[Span],
) -> tuple[tuple[ToolCall, ...], tuple[TrajectoryStep, ...]]:
    """The trajectory of ``spans`` as the tool calls and steps of a trace's fields."""
    found = trajectory(spans)
    return found.calls, found.steps


def _take(pending: list[tuple[int, ToolCall, str]], step: TrajectoryStep) -> None:
    """Remove the request ``step`` executes: the one with its call id, else the first
    request of its tool."""
    for i, (_, _call, call_id) in enumerate(pending):
        if step.call_id and call_id and call_id == step.call_id:
            del pending[i]
            return
    for i, (_, call, call_id) in enumerate(pending):
        if call.name == step.name and not (step.call_id and call_id):
            del pending[i]
            return


__all__ = [
    "Trajectory",
    "calls_and_steps",
    "in_tree_order",
    "is_container",
    "is_tool",
    "trajectory",
]
