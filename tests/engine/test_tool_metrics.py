"""Tool-call metrics of the agent test set (``tests/data/testsets/agent_tools.jsonl``: a
customer-support agent with right, wrong-tool, wrong-argument, missing-call, extra-call,
order and schema cases), against values computed by hand; and the format's reading of
tool calls (native and DeepEval) with its errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from engine.models import ExpectedTool, ToolCall
from engine.scoring.tools import is_subsequence, tool_metrics
from engine.testsets import case_hash, load_test_set
from engine.testsets.inspect import render_inspection

AGENT_SET = Path(__file__).resolve().parents[1] / "data" / "testsets" / "agent_tools.jsonl"

# precision, recall, f1, argument correctness, order exact, order subsequence, redundant
EXPECTED: dict[str, tuple[float, float, float, float | None, float | None, float | None, int]] = {
    "agent-01-right": (1, 1, 1, 1, None, None, 0),
    # search_faq instead of lookup_order: nothing matches, the call is redundant
    "agent-02-wrong-tool": (0, 0, 0, 0, None, None, 1),
    "agent-03-wrong-argument": (1, 1, 1, 0, None, None, 0),
    # create_ticket never made: recall 1/2, F1 = 2 x 1 x 0.5 / 1.5
    "agent-04-missing-call": (1, 0.5, 2 / 3, 0.5, None, None, 0),
    # lookup twice plus a refund policy: 1 of 3 calls matched, F1 = 2 x 1/3 / (4/3)
    "agent-05-extra-call": (1 / 3, 1, 0.5, 1, None, None, 2),
    # listed out of order but numbered in order: the numbers decide
    "agent-06-ordered-right": (1, 1, 1, 1, 1, 1, 0),
    "agent-07-wrong-order": (1, 1, 1, 1, 0, 0, 0),
    # a call in between: not exact, still a subsequence; F1 = 2 x 2/3 / (5/3)
    "agent-08-ordered-extra": (2 / 3, 1, 0.8, 1, 0, 1, 1),
    # the ticket's summary is shorter than its schema's minLength 10
    "agent-09-schema-invalid": (1, 1, 1, 0.5, None, None, 0),
    "agent-10-wrong-answer": (1, 1, 1, 1, None, None, 0),
}


def test_the_agent_test_set_scores_the_hand_computed_values() -> None:
    loaded = load_test_set(AGENT_SET)
    assert not loaded.problems
    assert {c.id for c in loaded.cases} == set(EXPECTED)
    for case in loaded.cases:
        assert case.expected_tools is not None
        m = tool_metrics(
            case.expected_tools, case.tools_called, ordered=case.expected_tools_ordered
        )
        got = (
            m.precision,
            m.recall,
            m.f1,
            m.argument_correctness,
            m.order_exact,
            m.order_subsequence,
            m.redundant_calls,
        )
        assert got == pytest.approx(EXPECTED[case.id]), case.id


def test_reasons_name_the_wrong_argument_and_the_schema_rule() -> None:
    cases = {c.id: c for c in load_test_set(AGENT_SET).cases}
    wrong = cases["agent-03-wrong-argument"]
    assert wrong.expected_tools is not None
    (check,) = tool_metrics(wrong.expected_tools, wrong.tools_called, ordered=False).checks
    assert check.problems == ('argument order_id is "12354", expected "12345"',)
    schema = cases["agent-09-schema-invalid"]
    assert schema.expected_tools is not None
    checks = tool_metrics(schema.expected_tools, schema.tools_called, ordered=False).checks
    assert checks[0].correct and not checks[1].correct
    assert "summary" in checks[1].problems[0] and "too short" in checks[1].problems[0]


def test_a_right_call_is_preferred_over_an_earlier_wrong_one_and_json_types_count() -> None:
    expected = [ExpectedTool(name="refund", arguments={"amount": 20, "full": True})]
    calls = [
        ToolCall(name="refund", arguments={"amount": 20, "full": 1}),  # 1 is not true
        ToolCall(name="refund", arguments={"amount": 20.0, "full": True}),  # 20.0 is 20
    ]
    m = tool_metrics(expected, calls, ordered=False)
    assert m.argument_correctness == 1.0 and m.checks[0].call is calls[1]
    assert m.redundant_calls == 1 and m.precision == 0.5


def test_nothing_expected_and_nothing_called_is_perfect_and_calling_is_not() -> None:
    none = tool_metrics([], [], ordered=True)
    assert (none.precision, none.recall, none.f1, none.argument_correctness) == (1, 1, 1, None)
    assert none.order_exact is None  # nothing to order
    extra = tool_metrics([], [ToolCall(name="search")], ordered=False)
    assert (extra.precision, extra.recall, extra.f1, extra.redundant_calls) == (0, 1, 0, 1)
    assert is_subsequence(["a", "b"], ["a", "x", "b"]) and not is_subsequence(
        ["b", "a"], ["a", "b"]
    )


def test_deepeval_tool_calls_are_read_with_their_input_parameters(tmp_path: Path) -> None:
    # DeepEval's LLMTestCase fields, ToolCall objects as its JSON dataset writes them
    row = {
        "input": "Where is order 1?",
        "actual_output": "It shipped.",
        "expected_output": "Order 1 shipped.",
        "tools_called": [
            {
                "name": "lookup_order",
                "description": "Finds an order",
                "reasoning": "asked",
                "input_parameters": {"order_id": "1"},
                "output": {"status": "shipped"},
            },
        ],
        "expected_tools": [{"name": "lookup_order", "input_parameters": {"order_id": "1"}}],
    }
    path = tmp_path / "deepeval.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    loaded = load_test_set(path)
    assert loaded.format.startswith("deepeval")
    (case,) = loaded.cases
    assert case.tools_called == (
        ToolCall(name="lookup_order", arguments={"order_id": "1"}, output={"status": "shipped"}),
    )
    assert case.expected_tools == (ExpectedTool(name="lookup_order", arguments={"order_id": "1"}),)
    assert "tools_called" not in case.metadata
    assert 'lookup_order(order_id="1")' in render_inspection(loaded)


def test_bad_tool_fields_name_the_file_line_and_field(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "query": "q", "expected_tools": [{"name": "x"}]},
        {"id": "no-name", "query": "q", "expected_tools": [{"arguments": {"a": 1}}]},
        {
            "id": "bad-schema",
            "query": "q",
            "expected_tools": [{"name": "x", "argument_schemas": {"a": {"type": 5}}}],
        },
        {
            "id": "both",
            "query": "q",
            "expected_tools": [
                {"name": "x", "arguments": {"a": 1}, "argument_schemas": {"a": {"type": "integer"}}}
            ],
        },
        {"id": "order", "query": "q", "expected_tools_ordered": True},
    ]
    path = tmp_path / "agent.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    problems = [str(p) for p in load_test_set(path).problems]
    assert problems[0] == f"{path}:2: expected_tools.0.name: Field required"
    assert problems[1].startswith(f"{path}:3: expected_tools.0.argument_schemas: schema of ")
    assert problems[2].startswith(f"{path}:4: expected_tools.0: argument 'a' has both")
    assert problems[3].startswith(f"{path}:5: case: expected_tools_ordered is set")
    assert len(problems) == 4


def test_a_case_without_tools_keeps_its_hash() -> None:
    loaded = load_test_set(AGENT_SET)
    bare = loaded.cases[0].model_copy(
        update={"tools_called": (), "expected_tools": None, "expected_tools_ordered": False}
    )
    dumped = bare.model_dump(mode="json")
    # the fields a case had before tool calls existed (the retrieval ids were unset too)
    for name in (
        "tools_called",
        "expected_tools",
        "expected_tools_ordered",
        "retrieved_context_ids",
        "relevant_context_ids",
        "trajectory",
    ):
        dumped.pop(name)

    blob = json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    assert case_hash(bare) == hashlib.sha256(blob.encode("utf-8")).hexdigest()
