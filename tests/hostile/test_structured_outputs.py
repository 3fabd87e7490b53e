"""Answers from structured outputs: a known answer field is taken (``answer``, a chat
message's ``content``, an OpenAI completion's ``choices[0].message.content``...), an
object without one refuses its trace with the reason, and nothing is ever stored whole: a
planted ``Authorization: Bearer`` reaches no lake table and not the warehouse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.settings import Paths
from engine.testsets.traces.answers import NoAnswerField, answer_of
from tests.hostile.conftest import assert_clean_skip, cli

PLANTED = "Authorization: Bearer sk-planted-0123456789abcdef"

COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "Pro is $49 a month."}}],
    "usage": {"prompt_tokens": 9, "completion_tokens": 7},
    "system_fingerprint": PLANTED,
}  # fmt: skip
"""An OpenAI chat completion as the SDK returns it (a planted header in a field beside)."""


def _trace(trace_id: str, output: Any) -> dict[str, Any]:
    return {
        "id": trace_id, "name": "shop", "timestamp": "2025-01-01T00:00:00Z",
        "input": {"question": "How much is Pro?"}, "output": output, "observations": [],
    }  # fmt: skip


TRACES = [
    _trace("answer-key", {"answer": "Pro is $49 a month.", "headers": PLANTED}),
    _trace("completion", COMPLETION),
    _trace("message", {"role": "assistant", "content": [{"type": "text", "text": "Pro: $49."}]}),
    _trace("no-answer-key", {"headers": PLANTED, "status": "ok"}),
    _trace("one-string", {"debug": PLANTED}),
    _trace("list-no-assistant", [{"role": "tool", "content": PLANTED}]),
]
REFUSED = {"no-answer-key", "one-string", "list-no-assistant"}


@pytest.fixture
def langfuse_file(tmp_path: Path) -> Path:
    path = tmp_path / "langfuse.jsonl"  # one trace a line, so each skip names its line
    path.write_text("".join(json.dumps(t) + "\n" for t in TRACES), encoding="utf-8")
    return path


def test_known_fields_are_taken_and_the_rest_refused_with_the_reason(
    langfuse_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = cli(capsys, "traces", "import", str(langfuse_file))
    assert_clean_skip(outcome, len(REFUSED), mentions="without a known answer field")
    answers = {c["id"]: c["response"] for c in map(json.loads, outcome.out.splitlines())}
    assert answers == {
        "answer-key": "Pro is $49 a month.",
        "completion": "Pro is $49 a month.",
        "message": "Pro: $49.",
    }
    for trace_id in REFUSED:
        assert any(f"trace {trace_id}: 'output' is" in line for line in outcome.err_lines)
    assert "sk-planted" not in outcome.out + outcome.err


def test_a_planted_credential_reaches_no_lake_table_and_not_the_warehouse(
    langfuse_file: Path, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = cli(
        capsys, "run", "--test-set", str(langfuse_file), "--name", "t", "--home", str(home.home)
    )
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    assert sum("without a known answer field" in line for line in outcome.err_lines) == 3
    parts = list(home.lake.rglob("*.parquet"))
    assert any("results" in p.parts for p in parts)
    for part in parts:
        assert b"sk-planted" not in part.read_bytes(), part
    assert b"sk-planted" not in home.warehouse.read_bytes()


def test_an_openinference_output_value_object_is_refused_not_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``output.value`` holding a JSON object without an answer field (an app span)."""

    def kv(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    def span(trace_id: str, output: Any) -> dict[str, Any]:
        return {
            "traceId": trace_id, "spanId": "a1", "name": "agent",
            "startTimeUnixNano": "1700000000000000000",
            "attributes": [kv("openinference.span.kind", "CHAIN"),
                           kv("input.value", "How much is Pro?"),
                           kv("output.value", json.dumps(output))],
        }  # fmt: skip

    spans = [span("good", COMPLETION), span("bad", {"request": {"headers": PLANTED}})]
    path = tmp_path / "traces.jsonl"  # the collector's file exporter: one request a line
    path.write_text(
        "".join(
            json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [s]}]}]}) + "\n" for s in spans
        ),
        encoding="utf-8",
    )
    outcome = cli(capsys, "traces", "import", str(path))
    assert_clean_skip(outcome, 1, mentions="'output.value' is an object without a known answer")
    ((case),) = map(json.loads, outcome.out.splitlines())
    assert case["id"] == "good" and case["response"] == "Pro is $49 a month."
    assert "sk-planted" not in outcome.out


@pytest.mark.parametrize(
    ("value", "answer"),
    [
        ({"output": {"text": "a"}}, "a"),
        ({"choices": [{"text": "legacy"}]}, "legacy"),
        ({"output_text": "resp", "output": [{"type": "message"}]}, "resp"),
        ({"output": [{"type": "message", "content": [{"type": "output_text", "text": "r"}]}]}, "r"),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "a"),
        ("plain", "plain"),
        (None, ""),
    ],
)
def test_answer_fields(value: Any, answer: str) -> None:
    assert answer_of(value, "output") == answer


@pytest.mark.parametrize(
    "value",
    [{"x": 1}, {"choices": []}, {"choices": [{"message": {"tool_calls": []}}]}, [{"a": 1}], {}],
)
def test_objects_without_an_answer_are_refused(value: Any) -> None:
    with pytest.raises(NoAnswerField, match="'output' is"):
        answer_of(value, "output")
