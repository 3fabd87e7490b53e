"""Trace exports read as test cases: each format from fixtures written from its documented
shape (``tests/data/traces/README.md`` names the sources), and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.testsets import load_test_set
from engine.testsets.base import TestSetError
from engine.testsets.traces import read_traces
from engine.testsets.traces.otlp import any_value

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def test_otlp_genai_indexed_attributes_and_message_events() -> None:
    loaded = load_test_set(DATA / "otlp_genai.json")
    assert loaded.format == "otlp-json" and loaded.series == "support-bot"
    cases = {c.id: c for c in loaded.cases}
    indexed = cases["5b8efff798038103d269b633813fc60c"]
    assert indexed.query == "How much is the Acme Pro plan?"  # the user's, not the system's
    assert indexed.response == "The Acme Pro plan costs $20 per month, billed monthly."
    assert indexed.ai_provider == "gpt-4o-mini-2024-07-18"  # the response model wins
    assert indexed.metadata["input_tokens"] == 52 and indexed.metadata["output_tokens"] == 17
    assert indexed.metadata["service"] == "support-bot"
    assert indexed.metadata["trace_source"] == "otel-genai"
    assert indexed.metadata["started_at"].startswith("2025-11-26T00:00:00")
    events = cases["0af7651916cd43dd8448eb211c80319c"]
    assert events.query == "Does Acme offer a free trial?"
    assert events.response == "Yes, every Acme plan starts with a 14-day free trial."
    assert events.metadata["input_tokens"] == 40
    # The health-check trace has no GenAI span: skipped, and said so.
    assert [p.reason for p in loaded.problems] == [
        "1 trace(s) without a GenAI or OpenInference span skipped"
    ]


def test_openinference_jsonl_with_retrieved_documents() -> None:
    loaded = load_test_set(DATA / "otlp_openinference.jsonl")
    assert loaded.format == "otlp-jsonl" and loaded.series == "docs-rag"
    cases = {c.id: c for c in loaded.cases}
    rag = cases["a1b2c3d4e5f60718293a4b5c6d7e8f90"]
    assert rag.query == "Which regions does Acme host data in?"  # the CHAIN root's input
    assert rag.response.startswith("Acme hosts customer data in the EU")
    assert rag.context == (
        "Customer data is stored in Frankfurt (EU) or Virginia (US), chosen at sign-up.",
        "Backups are kept for 30 days in the same region as the data.",
    )
    assert rag.metadata["document_ids"] == [
        "https://acme.com/security#regions", "https://acme.com/faq#backup",
    ]  # fmt: skip
    assert (rag.ai_provider, rag.metadata["input_tokens"], rag.metadata["output_tokens"]) == (
        "gpt-4o", 210, 19,
    )  # fmt: skip
    # Without a reference the retrieved context is what the answer is scored against.
    assert [g.chunk_id for g in rag.ground_truth] == ["ctx#0", "ctx#1"]
    llm_only = cases["b1b2c3d4e5f60718293a4b5c6d7e8f91"]
    assert llm_only.query == "Is there an Acme mobile app?"  # from the JSON input.value
    assert llm_only.response == "Yes, for iOS and Android."  # the message, not the raw JSON


def test_langfuse_trace_export() -> None:
    loaded = load_test_set(DATA / "langfuse_traces.json")
    assert loaded.format == "langfuse-traces-json" and loaded.series == "support-chat"
    cases = {c.id: c for c in loaded.cases}
    first = cases["c7a4f3f0-5a1e-4c1b-9d7e-1f2a3b4c5d6e"]
    assert first.query == "Can I cancel the Acme Pro plan at any time?"
    assert first.response.startswith("Yes. Pro is billed monthly")
    assert len(first.context or ()) == 2 and "Settings > Billing" in (first.context or ("",))[0]
    assert (first.metadata["input_tokens"], first.metadata["output_tokens"]) == (180, 21)
    assert first.tags == ("production",)
    second = cases["d8b5e4a1-6b2f-4d2c-8e8f-2a3b4c5d6e7f"]
    assert second.query == "What is Acme's support email?"  # from its generation
    assert second.response == "You can reach support at help@acme.com."
    assert second.ai_provider == "gpt-4o"


def test_a_langfuse_dataset_export_is_still_a_dataset() -> None:
    item = {"id": "i1", "input": {"question": "Q?"}, "expectedOutput": "A.", "datasetName": "d"}
    assert read_traces("x.json", json.dumps([item])) is None


def test_any_value_decodes_every_otlp_type() -> None:
    assert any_value({"intValue": "9007199254740993"}) == 9007199254740993
    assert any_value({"arrayValue": {"values": [{"boolValue": True}, {"doubleValue": 0.5}]}}) == [
        True, 0.5,
    ]  # fmt: skip
    nested = {"kvlistValue": {"values": [{"key": "a", "value": {"stringValue": "b"}}]}}
    assert any_value(nested) == {"a": "b"}
    assert any_value({}) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"resourceSpans": [', "invalid JSON at line 1"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}', "without a traceId"),
        ('{"resourceSpans": []}', "no trace yields a test case"),
        ('{"resourceSpans": ["nope"]}', "resourceSpans must hold objects"),
    ],
)
def test_malformed_trace_files_are_refused_with_the_reason(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TestSetError) as caught:
        load_test_set(path)
    assert reason in str(caught.value) and str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_trace_with_more_text_than_a_case_holds_is_skipped(tmp_path: Path) -> None:
    doc = json.loads((DATA / "otlp_genai.json").read_text(encoding="utf-8"))
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    for attr in span["attributes"]:
        if attr["key"] == "gen_ai.completion.0.content":
            attr["value"] = {"stringValue": "x" * 1_100_000}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    loaded = load_test_set(path)
    assert [c.id for c in loaded.cases] == ["0af7651916cd43dd8448eb211c80319c"]
    assert any("over the 1,000,000-byte limit" in p.reason for p in loaded.problems)


def test_an_attribute_nested_past_the_limit_is_refused_not_a_recursion_error(
    tmp_path: Path,
) -> None:
    value: dict[str, object] = {"stringValue": "deep"}
    for _ in range(200):
        value = {"arrayValue": {"values": [value]}}
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat",
            "attributes": [{"key": "gen_ai.prompt", "value": value}]}  # fmt: skip
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TestSetError, match="nested over 64 levels"):
        load_test_set(path)


def test_a_langfuse_trace_with_a_long_input_is_still_a_trace(tmp_path: Path) -> None:
    doc = json.loads((DATA / "langfuse_traces.json").read_text(encoding="utf-8"))
    doc["data"][0]["input"] = {"question": "Can I cancel? " + "Please. " * 20_000}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert load_test_set(path).format == "langfuse-traces-json"  # not a Phoenix dataset
