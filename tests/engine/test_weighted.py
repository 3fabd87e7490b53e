"""Weighted scores computed by hand, and the SQL views agreeing with the Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.models import GraderScoreRecord
from tests.oracles.weighted import (
    CandidateScore,
    candidate_scores,
    equal_weight_score,
    grader_stats,
    weighted_score,
)

VIEWS = Path(__file__).resolve().parents[2] / "warehouse" / "sql" / "views"


def row(
    candidate: str,
    sample: str,
    grader: str,
    score: float | None,
    passed: bool | None,
    weight: float,
    iteration: int = 1,
    run: str = "r1",
) -> GraderScoreRecord:
    return GraderScoreRecord(
        run_id=run,
        iteration=iteration,
        sample_id=sample,
        candidate=candidate,
        grader=grader,
        score=score,
        passed=passed,
        reason="",
        weight=weight,
    )


ROWS = [
    # analyst: faithfulness 0.6, helpful 0.4 (its recommended_graders)
    row("analyst", "s1", "faithfulness", 0.75, True, 0.6),
    row("analyst", "s1", "helpful", 0.5, False, 0.4),
    row("analyst", "s2", "faithfulness", 1.0, True, 0.6),
    row("analyst", "s2", "helpful", 0.9, True, 0.4),
    row("analyst", "s3", "faithfulness", None, None, 0.6),  # the grader failed
    row("analyst", "s3", "helpful", 0.7, True, 0.4),
    # analyst-citations: faithfulness 0.7, helpful 0.3, and a regex it does not recommend
    row("analyst-citations", "s1", "faithfulness", 0.5, False, 0.7),
    row("analyst-citations", "s1", "helpful", 1.0, True, 0.3),
    row("analyst-citations", "s1", "cites", 1.0, True, 0.0),
    row("analyst-citations", "s2", "faithfulness", 1.0, True, 0.7),
    row("analyst-citations", "s2", "helpful", 0.8, True, 0.3),
    row("analyst-citations", "s2", "cites", 0.0, False, 0.0),
    # broken: its only grader failed everywhere
    row("broken", "s1", "faithfulness", None, None, 1.0),
]


def test_weighted_score_formula() -> None:
    # (2 * 0.9 + 1 * 0.3) / (2 + 1) = 2.1 / 3
    assert weighted_score({"a": 0.9, "b": 0.3}, {"a": 2.0, "b": 1.0}) == pytest.approx(0.7)
    # a grader without a mean is left out of both sums
    assert weighted_score({"a": 0.9, "b": None}, {"a": 2.0, "b": 1.0}) == pytest.approx(0.9)
    # a grader missing from the weights weighs 0, as in the write-up's loop
    assert weighted_score({"a": 0.9, "c": 0.0}, {"a": 1.0}) == pytest.approx(0.9)
    assert weighted_score({"a": 0.9}, {"a": 0.0}) is None
    assert weighted_score({}, {}) is None


def test_equal_weight_score() -> None:
    assert equal_weight_score({"a": 0.9, "b": 0.3, "c": None}) == pytest.approx(0.6)
    assert equal_weight_score({"a": None}) is None


def test_grader_stats_by_hand() -> None:
    stats = grader_stats(r for r in ROWS if r.candidate == "analyst")
    f, h = stats["faithfulness"], stats["helpful"]
    assert (f.mean_score, f.pass_rate, f.count, f.errors, f.weight) == (
        pytest.approx(0.875),
        pytest.approx(2 / 3),
        3,
        1,
        0.6,
    )
    assert (h.mean_score, h.pass_rate, h.count, h.errors, h.weight) == (
        pytest.approx(0.7),
        pytest.approx(2 / 3),
        3,
        0,
        0.4,
    )


def test_candidate_scores_by_hand() -> None:
    analyst, citations, broken = candidate_scores(ROWS)
    assert analyst.candidate == "analyst"
    assert analyst.samples == 3
    # equal weight: (0.875 + 0.7) / 2
    assert analyst.equal_weight == pytest.approx(0.7875)
    # weighted: (0.6 * 0.875 + 0.4 * 0.7) / (0.6 + 0.4) = 0.525 + 0.28
    assert analyst.weighted == pytest.approx(0.805)
    # s1 fails helpful, s3 has a failed grader: only s2 passes everything
    assert analyst.pass_rate == pytest.approx(1 / 3)

    assert citations.samples == 2
    # equal weight counts the unrecommended regex too: (0.75 + 0.9 + 0.5) / 3
    assert citations.equal_weight == pytest.approx(2.15 / 3)
    # weighted: (0.7 * 0.75 + 0.3 * 0.9) / (0.7 + 0.3); the regex weighs 0
    assert citations.weighted == pytest.approx(0.795)
    assert citations.pass_rate == 0.0
    assert [g.grader for g in citations.graders] == ["cites", "faithfulness", "helpful"]

    assert (broken.equal_weight, broken.weighted, broken.pass_rate) == (None, None, 0.0)


def test_weights_override_and_mappings_as_rows() -> None:
    rows: list[dict[str, Any]] = [r.model_dump() for r in ROWS if r.candidate == "analyst"]
    (score,) = candidate_scores(rows, {"analyst": {"faithfulness": 1.0, "helpful": 3.0}})
    # (1 * 0.875 + 3 * 0.7) / 4 = 2.975 / 4
    assert score.weighted == pytest.approx(0.74375)
    assert {g.grader: g.weight for g in score.graders} == {"faithfulness": 1.0, "helpful": 3.0}


def test_iterations_count_as_samples() -> None:
    rows = [
        row("a", "s1", "g", 1.0, True, 1.0, iteration=1),
        row("a", "s1", "g", 0.0, False, 1.0, iteration=2),
    ]
    (score,) = candidate_scores(rows)
    assert (score.samples, score.equal_weight, score.pass_rate) == (2, 0.5, 0.5)


def test_sql_views_agree_with_python() -> None:
    duckdb = pytest.importorskip("duckdb")
    from warehouse.schema import ddl

    con = duckdb.connect()
    con.execute(ddl())
    for name in ("60_candidate_scores.sql", "61_grader_summary.sql"):
        con.execute((VIEWS / name).read_text(encoding="utf-8"))
    columns = list(GraderScoreRecord.model_fields)
    placeholders = ", ".join("?" for _ in columns)
    con.executemany(
        f"INSERT INTO grader_scores ({', '.join(columns)}) VALUES ({placeholders})",
        [[getattr(r, c) for c in columns] for r in ROWS],
    )
    got = con.execute(
        "SELECT candidate, samples, graders, errors, equal_weight_score, weighted_score, "
        "pass_rate FROM candidate_scores WHERE run_id = 'r1' ORDER BY candidate"
    ).fetchall()
    expected: list[CandidateScore] = candidate_scores(ROWS)
    assert len(got) == len(expected)
    for (cand, samples, graders, errors, equal, weighted, pass_rate), py in zip(
        got, expected, strict=True
    ):
        assert cand == py.candidate
        assert samples == py.samples
        assert graders == len(py.graders)
        assert errors == sum(g.errors for g in py.graders)
        assert equal == (None if py.equal_weight is None else pytest.approx(py.equal_weight))
        assert weighted == (None if py.weighted is None else pytest.approx(py.weighted))
        assert pass_rate == pytest.approx(py.pass_rate)
    summary = con.execute(
        "SELECT candidate, grader, results, errors, mean_score, pass_rate, weight "
        "FROM grader_summary ORDER BY candidate, grader"
    ).fetchall()
    flat = [
        (c.candidate, g.grader, g.count, g.errors, g.mean_score, g.pass_rate, g.weight)
        for c in expected
        for g in c.graders
    ]
    assert len(summary) == len(flat)
    for sql_row, py_row in zip(summary, flat, strict=True):
        assert sql_row[:4] == py_row[:4]
        assert sql_row[4] == (None if py_row[4] is None else pytest.approx(py_row[4]))
        assert sql_row[5:] == (pytest.approx(py_row[5]), py_row[6])
