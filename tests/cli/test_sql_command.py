"""`evalhouse sql`: read-only, three output formats, refusals as clear one-line errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.settings import Paths
from evalhouse.cli import main
from ingest import ingest
from tests.factories import result_record, run_record


@pytest.fixture
def seeded(home: Paths) -> Paths:
    write_part(home.lake, "runs", "R", 0, [run_record("R")])
    write_part(home.lake, "results", "R", 1, [result_record("R", "s1"), result_record("R", "s2")])
    ingest(home)
    return home


def test_table_csv_json(seeded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    q = "SELECT sample_id, accuracy FROM results ORDER BY sample_id"
    assert main(["sql", q, "--home", str(seeded.home)]) == 0
    out = capsys.readouterr().out
    assert "sample_id" in out and "s2" in out and "80.0" in out
    assert main(["sql", q, "--format", "csv", "--home", str(seeded.home)]) == 0
    assert capsys.readouterr().out.splitlines() == ["sample_id,accuracy", "s1,80.0", "s2,80.0"]
    assert main(["sql", q, "--format", "json", "--home", str(seeded.home)]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"sample_id": "s1", "accuracy": 80.0},
        {"sample_id": "s2", "accuracy": 80.0},
    ]


def test_csv_writes_nested_columns_as_json(
    seeded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    q = "SELECT sample_id, ['a', 'b'] AS tags, {'n': 1} AS info FROM results ORDER BY 1 LIMIT 1"
    assert main(["sql", q, "--format", "csv", "--home", str(seeded.home)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    assert json.loads(rows[0]["tags"]) == ["a", "b"] and json.loads(rows[0]["info"]) == {"n": 1}


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM results",
        "CREATE TABLE x (a INT)",
        "SELECT * FROM read_csv('/etc/passwd')",
        "COPY results TO '/tmp/evalhouse-leak.csv'",
        "ATTACH '/tmp/other.duckdb' AS o",
        "INSTALL httpfs",
        "SET enable_external_access = true",
    ],
)
def test_writes_and_file_access_are_refused(
    seeded: Paths, query: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sql", query, "--home", str(seeded.home)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Query failed:") and "Traceback" not in err


def test_row_cap(seeded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    q = "SELECT * FROM range(50)"
    assert main(["sql", q, "--format", "csv", "--max-rows", "10", "--home", str(seeded.home)]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 11
    assert "cut at 10 rows" in captured.err


def test_missing_warehouse_says_how_to_create_it(
    home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sql", "SELECT 1", "--home", str(home.home)]) == 3  # unavailable, not misused
    assert "evalhouse demo" in capsys.readouterr().err


def test_ingest_command(home: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    write_part(home.lake, "results", "R", 1, [result_record("R", "s1")])
    assert main(["ingest", "--home", str(home.home)]) == 0
    assert "ingested 1 parts" in capsys.readouterr().out
    assert main(["ingest", "--home", str(home.home)]) == 0
    assert "nothing new" in capsys.readouterr().out


def test_export_reads_the_cases_from_the_warehouse_when_the_file_is_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv_file = tmp_path / "cases.csv"
    csv_file.write_text(
        "query,response,expected_answer,ground_truth\n"
        '"How long is the trial?","Thirty days.","The trial lasts 30 days.",'
        '"Every plan has a 30-day free trial."\n',
        encoding="utf-8",
    )
    home = str(tmp_path / "home")
    assert main(["run", "--test-set", str(csv_file), "--name", "c", "--home", home]) == 0
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    csv_file.unlink()
    assert main(["export", run_id, "--format", "jsonl", "--home", home]) == 0
    captured = capsys.readouterr()
    case = json.loads(captured.out.strip().splitlines()[0])
    assert case["expected_answer"]["text"] == "The trial lasts 30 days."
    assert [g["text"] for g in case["ground_truth"]] == ["Every plan has a 30-day free trial."]
    assert "gone or changed" not in captured.err
