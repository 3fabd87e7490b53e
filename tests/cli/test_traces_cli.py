"""``evalhouse traces import`` end to end: traces -> test set -> run with the recorded
answers (no target call) -> warehouse, and the one-line refusals (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine.testsets.traces as traces_module
from evalhouse.cli import main
from warehouse.queries import Warehouse

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def test_import_writes_a_test_set_that_run_scores_and_sql_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    cases = tmp_path / "cases.jsonl"
    assert main(["traces", "import", str(DATA / "otlp_openinference.jsonl"), "--output",
                 str(cases)]) == 0  # fmt: skip
    told = capsys.readouterr().err
    assert "imported 2 traces (4 spans)" in told and "--series docs-rag" in told
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    assert [r["metadata"]["series"] for r in rows] == ["docs-rag", "docs-rag"]
    assert main(["inspect", str(cases)]) == 0
    assert "format:    native-jsonl" in capsys.readouterr().out
    assert main(["inspect", str(DATA / "otlp_openinference.jsonl")]) == 0
    shown = capsys.readouterr().out
    assert "format:    otlp-jsonl" in shown and "series:    docs-rag" in shown
    args = ["run", "--test-set", str(cases), "--name", "docs-rag-1", "--series", "docs-rag"]
    assert main([*args, "--home", home]) in (0, 1)
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    frame = (
        Warehouse(tmp_path / "home" / "warehouse.duckdb")
        .sql(
            "SELECT r.sample_id, r.response, r.ai_provider, r.domain, s.series "
            "FROM results r JOIN run_series s USING (run_id) WHERE run_id = $run "
            "ORDER BY sample_id",
            {"run": run_id},
        )
        .frame
    )
    assert frame["sample_id"].to_list() == [r["id"] for r in rows]
    assert frame["response"].to_list() == [r["response"] for r in rows]  # recorded, no target
    assert set(frame["series"]) == {"docs-rag"} and set(frame["domain"]) == {"docs-rag"}
    assert frame["ai_provider"].to_list() == ["gpt-4o", "gpt-4o-mini"]


def test_run_reads_a_trace_file_directly_in_the_services_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    trace_file = DATA / "langfuse_traces.json"
    assert main(["run", "--test-set", str(trace_file), "--name", "prod-1", "--home", home]) in (
        0, 1,
    )  # fmt: skip
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    frame = (
        Warehouse(tmp_path / "home" / "warehouse.duckdb")
        .sql(
            "SELECT count(*) AS n, any_value(s.series) AS series FROM results "
            "JOIN run_series s USING (run_id) WHERE run_id = $run",
            {"run": run_id},
        )
        .frame
    )
    assert frame.to_dicts() == [{"n": 2, "series": "support-chat"}]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{]}]}]}', "invalid JSON at line 1"),
        ('{"resourceSpans": []}', "no trace yields a test case"),
        ('[{"id": "q1", "query": "Q?"}]', "not a trace export"),
        ("", "empty"),
    ],
)
def test_bad_trace_files_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, reason: str
) -> None:
    path = tmp_path / "traces.json"
    path.write_text(text, encoding="utf-8")
    assert main(["traces", "import", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and reason in lines[0], lines


def test_an_oversized_trace_file_is_refused_before_it_is_parsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(traces_module, "MAX_TRACE_FILE_BYTES", 1000)
    for command in (["traces", "import"], ["inspect"]):
        assert main([*command, str(DATA / "otlp_genai.json")]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "over the 1,000-byte limit of one load" in lines[0]


def test_a_missing_file_and_a_folder_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in (tmp_path / "nope.json", tmp_path):
        assert main(["traces", "import", str(path)]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
