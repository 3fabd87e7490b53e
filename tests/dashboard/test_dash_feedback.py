"""Reviews and run labels written from the dashboard: one lake part per save, nothing lost
when two people save at once, clear refusals of incomplete saves."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dashboard.feedback import FeedbackError, ReviewMark, save_review, save_run_label
from engine.lake import list_parts, write_part
from engine.settings import Paths
from ingest import ingest
from tests.factories import result_record, run_record
from warehouse.queries import Warehouse

SAVES_EACH = 40


def _reviewer(lake: str, who: str, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    for n in range(SAVES_EACH):
        save_review(
            Path(lake),
            run_id="ra",
            iteration=1,
            sample_id="s1",
            candidate="",
            reviewer=who,
            comment=f"{who} save {n}",
            marks=[
                ReviewMark("response", "partly" if n % 2 else "correct"),
                ReviewMark("claim", "missing", "c1", "the claim", "found"),
            ],
        )


def test_two_reviewers_saving_at_once_lose_nothing(home: Paths) -> None:
    write_part(home.lake, "runs", "ra", 0, [run_record("ra")])
    write_part(home.lake, "results", "ra", 1, [result_record("ra", "s1")])
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(2)
    workers = [
        ctx.Process(target=_reviewer, args=(str(home.lake), who, start)) for who in ("ann", "ben")
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
        assert w.exitcode == 0
    parts = list_parts(home.lake, ["reviews"])
    assert len(parts) == 2 * SAVES_EACH  # one part per save, none overwritten
    ingest(home)
    got = (
        Warehouse(home.warehouse)
        .sql(
            "SELECT reviewer, count(*) AS rows, count(DISTINCT review_id) AS saves, "
            "count(DISTINCT comment) AS comments FROM reviews GROUP BY reviewer ORDER BY reviewer"
        )
        .frame
    )
    assert got.rows() == [
        ("ann", 2 * SAVES_EACH, SAVES_EACH, SAVES_EACH),
        ("ben", 2 * SAVES_EACH, SAVES_EACH, SAVES_EACH),
    ]
    # each person's latest review per item is kept, the other's too
    latest = Warehouse(home.warehouse).sql("SELECT count(*) AS n FROM review_latest").frame
    assert latest["n"][0] == 4


def test_one_save_is_one_part_with_one_review_id(tmp_path: Path) -> None:
    path = save_review(
        tmp_path,
        run_id="ra",
        iteration=2,
        sample_id="s<1>",
        candidate="long",
        reviewer="  Dana  ",
        comment="  wrong about Sundays ",
        marks=[
            ReviewMark("response", "incorrect", machine_label="pass"),
            ReviewMark("verdict", "disagree", "3", "open on Sundays", "SUPPORTED"),
        ],
    )
    assert path.parent == tmp_path / "reviews" / "run_id=ra" / "iteration=2"
    rows = pq.read_table(path).to_pylist()
    assert {r["review_id"] for r in rows} == {rows[0]["review_id"]}
    assert [(r["item"], r["item_id"], r["label"], r["machine_label"]) for r in rows] == [
        ("response", "", "incorrect", "pass"),
        ("verdict", "3", "disagree", "SUPPORTED"),
    ]
    assert {(r["reviewer"], r["comment"], r["candidate"]) for r in rows} == {
        ("Dana", "wrong about Sundays", "long")
    }


@pytest.mark.parametrize(
    ("reviewer", "marks", "message"),
    [
        ("  ", [ReviewMark("response", "correct")], "Enter your name"),
        ("eve", [], "Mark the response, a claim or a verdict"),
        ("eve", [ReviewMark("claim", "agree", "c1")], "a claim review is one of found"),
    ],
)
def test_incomplete_reviews_are_refused_and_write_nothing(
    tmp_path: Path, reviewer: str, marks: list[ReviewMark], message: str
) -> None:
    with pytest.raises(FeedbackError, match=message):
        save_review(
            tmp_path,
            run_id="ra",
            iteration=1,
            sample_id="s1",
            candidate="",
            reviewer=reviewer,
            comment="",
            marks=marks,
        )
    assert list_parts(tmp_path) == []


def test_run_label_saves_only_what_changed(tmp_path: Path) -> None:
    path = save_run_label(tmp_path, "ra", tags=[" nov ", "baseline", "nov", ""], labelled_by="x")
    (row,) = pq.read_table(path).to_pylist()
    assert (row["name"], row["tags"], row["archived"]) == (None, ["baseline", "nov"], None)
    with pytest.raises(FeedbackError, match="Nothing changed"):
        save_run_label(tmp_path, "ra")
    with pytest.raises(FeedbackError, match="cannot be empty"):
        save_run_label(tmp_path, "ra", name="   ")
    assert len(list_parts(tmp_path)) == 1
