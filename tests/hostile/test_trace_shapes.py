"""One malformed trace skips one trace: valid JSON in shapes the conventions do not allow
(a Unicode digit or 5,000 digits as an index, ``1e400`` tokens, a start time of 10^30, a
list where an object belongs, a number where a list belongs, JSON nested 500 deep inside a
string attribute, a lone surrogate in a text) is a ``skipped: FILE:LINE: trace ID: reason``
line; the good traces beside it load, in ``traces import``, ``inspect`` and ``run``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.settings import Paths
from tests.hostile.conftest import cli

DEEP = "[" * 500 + "]" * 500


def _kv(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value} if isinstance(value, str) else value}


def _attrs() -> list[dict[str, Any]]:
    return [
        _kv("gen_ai.prompt.0.role", "user"),
        _kv("gen_ai.prompt.0.content", "How much is Pro?"),
        _kv("gen_ai.completion.0.content", "Pro is $49 a month."),
        _kv("gen_ai.request.model", "gpt-4o-mini"),
    ]


def _span(trace_id: str, extra: list[dict[str, Any]] | None = None, **fields: Any) -> Any:
    span = {
        "traceId": trace_id,
        "spanId": "b7ad6b7169203331",
        "name": "chat gpt-4o-mini",
        "startTimeUnixNano": "1700000000000000000",
        "attributes": _attrs() + (extra or []),
    }
    return {**span, **fields}


BAD_SPANS: dict[str, Any] = {
    "unicode-digit": _span("unicode-digit", [_kv("gen_ai.prompt.\u00b2.content", "x")]),
    "long-index": _span("long-index", [_kv("gen_ai.prompt." + "9" * 5000 + ".content", "x")]),
    "inf-double-tokens": _span(
        "inf-double-tokens", [{"key": "gen_ai.usage.input_tokens", "value": {"doubleValue": 1e400}}]
    ),
    "inf-int-tokens": _span(
        "inf-int-tokens", [{"key": "gen_ai.usage.output_tokens", "value": {"intValue": 1e400}}]
    ),
    "start-10e30": _span("start-10e30", startTimeUnixNano=str(10**30)),
    "list-for-object": _span("list-for-object", [{"key": "k", "value": {"arrayValue": []}}]),
    "number-for-list": _span(
        "number-for-list", [{"key": "k", "value": {"arrayValue": {"values": 5}}}]
    ),
    "number-for-events": _span("number-for-events", events=5),
    "kvlist-list": _span("kvlist-list", [{"key": "k", "value": {"kvlistValue": [1, 2]}}]),
    "deep-in-string": _span("deep-in-string", [_kv("gen_ai.input.messages", DEEP)]),
    # JSON may spell half a surrogate pair, which no UTF-8 file can hold
    "surrogate-answer": _span(
        "surrogate-answer", [_kv("gen_ai.completion.0.content", "Pro is \ud800 a month.")]
    ),
    "surrogate-model": _span("surrogate-model", [_kv("gen_ai.response.model", "gpt\udfff")]),
}


def _otlp_line(spans: list[Any]) -> str:
    request = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_kv("service.name", "shop")]},
                "scopeSpans": [{"spans": spans}],
            }
        ]
    }
    # ``json.dumps`` writes 1e400 (infinity once parsed) as Infinity; a file has 1e400.
    return json.dumps(request).replace("Infinity", "1e400")


@pytest.fixture
def otlp_file(tmp_path: Path) -> Path:
    """JSON Lines, as the collector's file exporter writes them: a good trace on line 1,
    one bad trace per line after it, another good trace last."""
    lines = [_otlp_line([_span("good-1")])]
    lines += [_otlp_line([span]) for span in BAD_SPANS.values()]
    lines.append(_otlp_line([_span("good-2")]))
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _skips(err: str) -> dict[str, str]:
    """trace id -> ``FILE:LINE: reason`` of each ``skipped:`` line."""
    found = {}
    for line in err.splitlines():
        match = re.match(r"^skipped: (.+?):(\d+): trace (\S+): (.+)$", line)
        if match:
            found[match.group(3)] = f"{match.group(1)}:{match.group(2)}"
    return found


def test_traces_import_skips_each_bad_trace_with_its_file_line_and_reason(
    otlp_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "cases.jsonl"
    outcome = cli(capsys, "traces", "import", str(otlp_file), "--output", str(output))
    assert "Traceback" not in outcome.err and outcome.code == 0, outcome.err
    skipped = _skips(outcome.err)
    assert set(skipped) == set(BAD_SPANS), outcome.err
    for line, trace_id in enumerate(BAD_SPANS, start=2):
        assert skipped[trace_id] == f"{otlp_file}:{line}"
    cases = [json.loads(line) for line in output.read_text().splitlines()]
    assert [c["id"] for c in cases] == ["good-1", "good-2"]


def test_the_reasons_name_what_is_wrong(
    otlp_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = cli(capsys, "traces", "import", str(otlp_file)).err
    reasons = {t: line for line in err.splitlines() for t in BAD_SPANS if f"trace {t}:" in line}
    assert "not an index" in reasons["unicode-digit"] and "not an index" in reasons["long-index"]
    assert "not a count of tokens" in reasons["inf-double-tokens"]
    assert "int64" in reasons["inf-int-tokens"] and "int64" in reasons["start-10e30"]
    assert "nested over 64 levels" in reasons["deep-in-string"]
    assert "must be a list" in reasons["number-for-events"]
    assert "\\ud800, a lone surrogate" in reasons["surrogate-answer"]
    assert "\\udfff, a lone surrogate" in reasons["surrogate-model"]
    assert all(len(line) < 400 for line in reasons.values())  # no 5,000-digit echo


def test_inspect_and_run_skip_the_same_traces(
    otlp_file: Path, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = cli(capsys, "inspect", str(otlp_file))
    assert outcome.code == 0 and "Traceback" not in outcome.out + outcome.err, outcome.err
    outcome = cli(
        capsys, "run", "--test-set", str(otlp_file), "--name", "t", "--home", str(home.home)
    )
    assert outcome.code == 0 and "Traceback" not in outcome.out + outcome.err, outcome.err
    assert len([p for p in home.lake.rglob("*.parquet") if "results" in p.parts]) >= 1


def test_a_bad_langfuse_trace_skips_only_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def trace(trace_id: str, **fields: Any) -> dict[str, Any]:
        base = {
            "id": trace_id,
            "name": "shop",
            "timestamp": "2025-01-01T00:00:00Z",
            "input": "How much is Pro?",
            "output": "Pro is $49 a month.",
            "observations": [],
        }
        return {**base, **fields}

    usage = {"type": "GENERATION", "startTime": "x", "usage": {"input": 1e400}}
    traces = [
        trace("good"),
        trace("observations-number", observations=7),
        trace("tokens-inf", observations=[usage]),
        trace("timestamp-huge", timestamp=10**30),
    ]
    path = tmp_path / "langfuse.json"
    path.write_text(json.dumps({"data": traces}).replace("Infinity", "1e400"))
    outcome = cli(capsys, "traces", "import", str(path))
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    assert [json.loads(line)["id"] for line in outcome.out.splitlines()] == ["good"]
    skipped = [line for line in outcome.err.splitlines() if line.startswith("skipped:")]
    assert len(skipped) == 3, outcome.err
    for trace_id in ("observations-number", "tokens-inf", "timestamp-huge"):
        assert any(f"trace {trace_id}" in line or trace_id in line for line in skipped), skipped


def test_the_suggested_command_quotes_the_service_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    request = json.loads(_otlp_line([_span("good-1")]))
    service = request["resourceSpans"][0]["resource"]["attributes"][0]["value"]
    service["stringValue"] = "shop $(touch PWNED)"
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(request))
    output = tmp_path / "my cases.jsonl"
    outcome = cli(capsys, "traces", "import", str(path), "--output", str(output))
    assert outcome.code == 0, outcome.err
    line = next(x for x in outcome.err.splitlines() if x.startswith("score them: "))
    words = shlex.split(line.removeprefix("score them: "))
    assert words[words.index("--series") + 1] == "shop $(touch PWNED)"
    assert words[words.index("--test-set") + 1] == str(output)
