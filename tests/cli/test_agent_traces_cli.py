"""Production agents through the CLI: ``traces import`` writes each trace's tool calls and
steps into the test set, ``monitor --expected`` scores the trajectories with the tool
metrics into the warehouse (view ``tool_scores`` of a real DuckDB file), and a malformed
tool span is one line and exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.settings import Paths
from evalhouse.cli import main
from warehouse.queries import Warehouse

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
EXPORTS = ("agent_openinference.json", "agent_genai.json")
EXPECTED = DATA / "agent_expected.jsonl"


def test_import_keeps_the_calls_and_steps_and_takes_the_expectations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cases.jsonl"
    args = ["traces", "import", str(DATA / EXPORTS[1]), "--output", str(out)]
    assert main([*args, "--expected", str(EXPECTED)]) == 0
    assert "expectations from" in capsys.readouterr().err
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [c["name"] for c in row["tools_called"]] == ["lookup_order", "check_return_eligibility"]
    assert [s["kind"] for s in row["trajectory"]] == ["model", "tool", "model", "tool", "model"]
    assert row["trajectory"][1]["duration_ms"] == 200.0
    assert [e["name"] for e in row["expected_tools"]] == [
        "lookup_order",
        "check_return_eligibility",
    ]
    assert main(["inspect", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "lookup_order" in shown and "1 cases with tool calls" in shown
    # The recorded steps, in order, each on its line: the trajectory the metrics grade.
    assert "1 cases with a trajectory, 5 steps" in shown
    steps = [line.strip() for line in shown.splitlines() if line.startswith("      ")]
    steps = [line for line in steps if line[:2] in {f"{i}." for i in range(1, 6)}]
    assert [line.split()[1] for line in steps] == ["model", "tool", "model", "tool", "model"]
    assert steps[1].startswith("2. tool lookup_order(") and steps[1].endswith("(200 ms)")
    assert "asked lookup_order(" in steps[0]


def test_monitor_scores_both_conventions_the_same_into_tool_scores(
    tmp_path: Path, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in EXPORTS:
        shutil.copy(DATA / name, folder / name)
    args = ["monitor", str(folder), "--series", "acme-support", "--home", str(home.home)]
    assert main([*args, "--expected", str(EXPECTED)]) == 0
    told = capsys.readouterr().err
    assert "2 of 2 traces matched" in told
    frame = (
        Warehouse(home.warehouse)
        .sql("SELECT sample_id, metric, value FROM tool_scores ORDER BY sample_id, metric")
        .frame
    )
    by_trace: dict[str, dict[str, float | None]] = {}
    for sample_id, metric, value in frame.iter_rows():
        by_trace.setdefault(sample_id, {})[metric] = value
    assert set(by_trace) == {"4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319d"}
    oi, genai = by_trace.values()
    assert oi == genai == {
        "tool_precision": 1.0, "tool_recall": 1.0, "tool_f1": 1.0,
        "argument_correctness": 1.0, "order_exact": 1.0, "order_subsequence": 1.0,
        "redundant_calls": 0.0, "task_completion": 1.0,
    }  # fmt: skip
    calls = (
        Warehouse(home.warehouse)
        .sql(
            "SELECT DISTINCT metric, label, value FROM sample_scores "
            "WHERE scorer = 'tools' AND starts_with(metric, 'call:') ORDER BY metric"
        )
        .frame.rows()
    )
    assert calls == [("call:1", "lookup_order", 1.0), ("call:2", "check_return_eligibility", 1.0)]


def test_a_malformed_tool_span_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((DATA / EXPORTS[1]).read_text(encoding="utf-8"))
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for attr in span["attributes"]:
            if attr["key"] == "gen_ai.tool.call.arguments":
                attr["value"] = {"stringValue": '["12345"]'}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["traces", "import", str(bad)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith(f"error: {bad}: no trace yields a test case")
    assert "span 'b000000000000003': tool arguments must be a JSON object, got a list" in lines[0]
