"""The typed fast path reads an OTLP request exactly as the dict reader does: the same
spans, the same unreadable spans with the same reasons; a request in any other shape is
left to the dict reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.files import json_loads
from engine.testsets.traces import otlp, otlp_typed, read_traces
from tests.hostile.test_trace_shapes import BAD_SPANS, _otlp_line, _span

DATA = Path(__file__).parents[1] / "data" / "traces"


def _both(text: str) -> tuple[list[Any], list[Any]]:
    typed = otlp_typed.request(text)
    assert typed is not None, "the typed path was not taken"
    return list(otlp_typed.spans(typed)), list(otlp.spans([json_loads(text, max_depth=None)]))


@pytest.mark.parametrize("shape", sorted(BAD_SPANS))
def test_each_malformed_span_reads_the_same_both_ways(shape: str) -> None:
    text = _otlp_line([_span("good-1"), BAD_SPANS[shape], _span("good-2")])
    # 1e400 and a lone surrogate: msgspec refuses the file, json.loads reads it
    if shape.startswith(("inf-", "surrogate-")):
        assert otlp_typed.request(text) is None
        return
    typed, plain = _both(text)
    assert typed == plain
    assert [type(s).__name__ for s in typed].count("Span") >= 2


@pytest.mark.parametrize(
    "name", ["otlp_genai.json", "agent_genai.json", "agent_openinference.json"]
)
@pytest.mark.parametrize("indent", [None, 2])
def test_the_fixture_exports_read_the_same_both_ways(name: str, indent: int | None) -> None:
    doc = json.loads((DATA / name).read_text(encoding="utf-8"))
    typed, plain = _both(json.dumps(doc, indent=indent))
    assert typed == plain and len(typed) > 1


def test_each_line_of_a_collector_file_reads_the_same_both_ways() -> None:
    lines = (DATA / "otlp_openinference.jsonl").read_text(encoding="utf-8").splitlines()
    for line in filter(str.strip, lines):
        typed, plain = _both(line)
        assert typed == plain


@pytest.mark.parametrize(
    "span",
    [
        {"traceId": "t", "attributes": [{"key": "k", "value": "a plain value"}]},
        {"traceId": "t", "attributes": [{"key": 5, "value": {"stringValue": "x"}}]},
        {"traceId": "t", "attributes": {"k": "an object, not a list"}},
        5,
    ],
    ids=["plain-value", "number-key", "object-attributes", "number-span"],
)
def test_other_shapes_are_left_to_the_dict_reader(span: Any, tmp_path: Path) -> None:
    text = _otlp_line([_span("good-1"), span])
    assert otlp_typed.request(text) is None
    loaded = read_traces("f.json", text)
    assert loaded is not None and [c.id for c in loaded.cases] == ["good-1"]


def test_a_file_of_several_requests_is_left_to_the_dict_reader() -> None:
    text = _otlp_line([_span("good-1")]) + "\n" + _otlp_line([_span("good-2")]) + "\n"
    assert otlp_typed.request(text) is None
    loaded = read_traces("f.jsonl", text)
    assert loaded is not None and loaded.format == "otlp-jsonl"
    assert [c.id for c in loaded.cases] == ["good-1", "good-2"]
