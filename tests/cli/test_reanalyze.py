"""`evalhouse reanalyze`: a run's stored answers scored again against new ground truth, as a
new run of the same series whose config names the old run and the truth's version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalhouse.cli import main
from warehouse.queries import Warehouse

CASE = {
    "id": "q1",
    "domain": "acme.com",
    "query": "What does the Pro plan cost?",
    "response": "The Pro plan costs $40 per month.",
    "expected_answer": {
        "text": "The Pro plan costs $40 per month.",
        "claims": [{"id": "c1", "text": "The Pro plan costs $40 per month."}],
    },
    "ground_truth": [
        {"chunk_id": "p1", "page_url": "https://acme.com/p", "text": "Pro: $40/month."}
    ],
}


def _write(path: Path, **over: object) -> Path:
    path.write_text(json.dumps({**CASE, **over}) + "\n", encoding="utf-8")
    return path


def test_stored_answers_against_new_truth_in_the_same_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    old = _write(tmp_path / "pricing.jsonl")
    assert (
        main(["run", "--test-set", str(old), "--name", "pricing 2026-11-01", "--home", home]) == 0
    )
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    old.unlink()  # the run kept its cases: the old file is not needed
    new_truth = {"text": "The Pro plan costs $45 per month.",
                 "claims": [{"id": "c1", "text": "The Pro plan costs $45 per month."}]}  # fmt: skip
    truth = _write(tmp_path / "truth.jsonl", expected_answer=new_truth, response=None)
    assert main(["reanalyze", run_id, "--ground-truth", str(truth), "--home", home]) == 0
    again = capsys.readouterr().out.strip().splitlines()[-1]
    wh = Warehouse(tmp_path / "home" / "warehouse.duckdb")
    rows = {
        r["run_id"]: r
        for r in wh.sql(
            "SELECT r.run_id, x.response, x.completeness, s.series, s.baseline_run_id, "
            "json_extract_string(r.config, '$.reanalysis_of') AS of, "
            "json_extract_string(r.config, '$.ground_truth_hash') AS truth "
            "FROM runs r JOIN run_series s USING (run_id) JOIN results x USING (run_id)"
        ).frame.to_dicts()
    }
    assert rows[again]["response"] == CASE["response"]  # the same answer, no target call
    assert rows[again]["of"] == run_id and len(rows[again]["truth"]) == 64
    assert rows[again]["series"] == rows[run_id]["series"] == "pricing"
    assert rows[again]["baseline_run_id"] == run_id
    assert rows[run_id]["completeness"] == 100.0 and rows[again]["completeness"] == 0.0


def test_unknown_runs_and_unrelated_truth_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    data = _write(tmp_path / "a.jsonl")
    assert main(["run", "--test-set", str(data), "--name", "a", "--home", home]) == 0
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    args = ["reanalyze", "--home", home, "--ground-truth", str(data)]
    assert main([*args, "nope"]) == 2
    assert "is not in the lake" in capsys.readouterr().err
    other = _write(tmp_path / "b.jsonl", id="zz")
    assert main(["reanalyze", run_id, "--ground-truth", str(other), "--home", home]) == 2
    assert "none of its case ids" in capsys.readouterr().err
