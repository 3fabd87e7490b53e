"""Agent trajectories rebuilt from production traces: the same run exported with
OpenInference and with the OTLP GenAI conventions gives the same steps and tool calls, and
a malformed tool span skips its trace with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.models import TestCase, ToolCall
from engine.scoring.tools import tool_metrics
from engine.testsets import load_test_set
from engine.testsets.base import TestSetError
from engine.testsets.traces import read_traces
from engine.testsets.traces.expected import Expectations, with_expectations

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
EXPORTS = ("agent_openinference.json", "agent_genai.json")


def agent_case(name: str) -> TestCase:
    loaded = load_test_set(DATA / name)
    assert loaded.problems == () and len(loaded.cases) == 1
    return loaded.cases[0]


def shape(case: TestCase) -> list[dict[str, Any]]:
    """The steps without what only names a trace (span ids)."""
    return [s.model_dump(exclude={"call_id"}) for s in case.trajectory]


def test_both_conventions_give_the_same_trajectory() -> None:
    oi, genai = (agent_case(n) for n in EXPORTS)
    assert (oi.metadata["trace_source"], genai.metadata["trace_source"]) == (
        "openinference", "otel-genai",
    )  # fmt: skip
    assert (
        oi.tools_called
        == genai.tools_called
        == (
            ToolCall(
                name="lookup_order",
                arguments={"order_id": "12345"},
                output={"status": "delivered", "delivered_on": "2025-11-20"},
                order=0,
            ),
            ToolCall(
                name="check_return_eligibility",
                arguments={"order_id": "12345", "reason": "return"},
                output={"eligible": True, "until": "2025-12-20"},
                order=1,
            ),
        )
    )
    assert shape(oi) == shape(genai)
    steps = oi.trajectory
    # parent then start time, although the files list the spans out of order
    assert [(s.kind, s.name) for s in steps] == [
        ("model", "gpt-4o-2024-08-06"), ("tool", "lookup_order"),
        ("model", "gpt-4o-2024-08-06"), ("tool", "check_return_eligibility"),
        ("model", "gpt-4o-2024-08-06"),
    ]  # fmt: skip
    assert [(s.start_ms, s.duration_ms) for s in steps] == [
        (10.0, 800.0), (820.0, 200.0), (1030.0, 500.0), (1540.0, 100.0), (1650.0, 740.0),
    ]  # fmt: skip
    assert [c.name for c in steps[0].requested] == ["lookup_order"]
    assert steps[-1].text == oi.response == genai.response
    assert oi.query == genai.query == "Where is my order 12345, and can I still return it?"
    # A tool or agent span is not a model call: only the three chat turns count tokens.
    assert oi.metadata["input_tokens"] == genai.metadata["input_tokens"] == 360


def test_expectations_by_question_make_the_metrics_score_it() -> None:
    expected = Expectations.of(load_test_set(DATA / "agent_expected.jsonl").cases)
    for name in EXPORTS:
        (case,), matched = with_expectations([agent_case(name)], expected)
        assert matched == 1 and case.expected_tools_ordered
        assert case.expected_answer.text.startswith("Order 12345 was delivered")
        assert case.expected_tools is not None
        m = tool_metrics(case.expected_tools, case.tools_called, ordered=True)
        assert (m.precision, m.recall, m.argument_correctness, m.order_exact) == (1, 1, 1, 1)
        assert m.redundant_calls == 0


def otlp_doc(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


def genai_span(span_id: str, parent: str, start_ms: int, **attrs: str) -> dict[str, Any]:
    return {
        "traceId": "c" * 32,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": attrs.get("gen_ai.operation.name", "chat"),
        "startTimeUnixNano": str(1_764_115_200_000_000_000 + start_ms * 1_000_000),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def messages(role: str, *parts: dict[str, Any]) -> str:
    return json.dumps([{"role": role, "parts": list(parts)}])


CANCEL = {"type": "tool_call", "id": "t1", "name": "cancel_plan", "arguments": {"plan": 7}}
CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.input.messages": messages("user", {"type": "text", "content": "Cancel plan 7"}),
    "gen_ai.output.messages": messages("assistant", CANCEL),
}
ANSWER = {
    "gen_ai.operation.name": "chat",
    "gen_ai.output.messages": messages(
        "assistant", {"type": "text", "content": "Plan 7 is cancelled."}
    ),
}


def test_a_call_asked_for_but_not_traced_is_still_a_call() -> None:
    traces = read_traces(
        "t.json", otlp_doc(genai_span("1", "", 0, **CHAT), genai_span("2", "", 5, **ANSWER))
    )
    assert traces is not None
    (case,) = traces.cases
    assert case.tools_called == (ToolCall(name="cancel_plan", arguments={"plan": 7}, order=0),)
    assert case.response == "Plan 7 is cancelled."
    assert case.trajectory[0].duration_ms is None  # no end time recorded: unknown, not 0


@pytest.mark.parametrize(
    ("tool_attrs", "reason"),
    [
        ({"gen_ai.tool.call.arguments": "[1, 2]"}, "must be a JSON object, got a list"),
        ({"gen_ai.tool.call.arguments": "plan seven"}, "got text that is not JSON"),
        ({"gen_ai.tool.name": ""}, "a tool span without a tool name"),
    ],
)  # fmt: skip
def test_a_malformed_tool_span_is_one_reason_naming_its_span(
    tool_attrs: dict[str, str], reason: str
) -> None:
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "cancel_plan",
        **tool_attrs,
    }
    text = otlp_doc(
        genai_span("1", "", 0, **CHAT),
        genai_span("2", "", 3, **tool),
        genai_span("3", "", 5, **ANSWER),
    )
    with pytest.raises(TestSetError) as caught:
        read_traces("t.json", text)
    message = str(caught.value)
    assert "\n" not in message and reason in message and "span '2'" in message


def test_an_agent_span_with_the_messages_alone_still_gives_the_case() -> None:
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.input.messages": CHAT["gen_ai.input.messages"],
        "gen_ai.output.messages": ANSWER["gen_ai.output.messages"],
    }
    traces = read_traces("t.json", otlp_doc(genai_span("1", "", 0, **agent)))
    assert traces is not None
    (case,) = traces.cases
    assert (case.query, case.response) == ("Cancel plan 7", "Plan 7 is cancelled.")
    assert case.trajectory == () and case.tools_called == ()  # an agent span is no step
