"""Reviews and run labels: lake records people write, ingested into documented tables and
views; judge agreement computed in SQL and checked against hand-computed numbers."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

import pytest
from polars.testing import assert_frame_equal

from engine.lake import write_part
from engine.models import ClaimRecord, ReviewRecord, RunLabelRecord, VerdictRecord
from engine.settings import Paths
from ingest import ingest
from tests.factories import result_record, run_record
from tests.oracles.agreement import cohen_kappa, pearson, spearman
from warehouse import queries as q
from warehouse.queries import SampleRef, Warehouse

T = datetime(2026, 11, 20, 10, 0)

# Judge scores of s1..s4 (1-5) and the rubric pass they imply (both >= 4).
FAITH = {"s1": 5.0, "s2": 4.0, "s3": 2.0, "s4": 3.0}
COMPL = {"s1": 5.0, "s2": 3.0, "s3": 1.0, "s4": 4.0}
CLAIMS = [  # (sample, claim id, analyzer status)
    ("s1", "c1", "found"),
    ("s1", "c2", "missing"),
    ("s1", "c3", "contradicted"),
    ("s2", "c1", "found"),
    ("s2", "c2", "found"),
    ("s3", "c1", "missing"),
]
VERDICTS = ["SUPPORTED", "CONTRADICTED", "NOT_ENOUGH_INFO"]  # of s1, claim_index 0..2


def _said(sample: str, item: str, item_id: str) -> str | None:
    """What evalhouse said about the item: the dashboard stores it with every review."""
    if item == "claim":
        return next(st for s, c, st in CLAIMS if (s, c) == (sample, item_id))
    if item == "verdict":
        return VERDICTS[int(item_id)]
    return "pass" if FAITH[sample] >= 4 and COMPL[sample] >= 4 else "fail"


def _review(n: int, reviewer: str, sample: str, item: str, label: str, **over: Any) -> Any:
    over.setdefault("machine_label", _said(sample, item, over.get("item_id", "")))
    return ReviewRecord(
        review_id=f"rev{n:03d}",
        run_id="ra",
        iteration=1,
        sample_id=sample,
        item=item,  # type: ignore[arg-type]
        label=label,  # type: ignore[arg-type]
        reviewer=reviewer,
        reviewed_at=T + timedelta(minutes=n),
        **over,
    )


def build(home: Paths) -> None:
    """Run ``ra`` (judge local, analyzer embedder minilm), its scores, claims, verdicts and
    the reviews of two people, all through the lake."""
    lake = home.lake
    write_part(lake, "runs", "ra", 0, [run_record("ra", name="first name", embedder="minilm")])
    write_part(
        lake,
        "claims",
        "ra",
        1,
        [
            ClaimRecord(
                run_id="ra",
                iteration=1,
                sample_id=s,
                claim_id=c,
                claim_text=f"claim {s}/{c}",
                importance="required",
                found=status == "found",
                similarity=0.5,
                status=status,  # type: ignore[arg-type]
            )
            for s, c, status in CLAIMS
        ],
    )
    write_part(
        lake,
        "verdicts",
        "ra",
        1,
        [
            VerdictRecord(
                run_id="ra",
                iteration=1,
                sample_id="s1",
                claim_index=i,
                claim_text=f"response claim {i}",
                verdict=v,  # type: ignore[arg-type]
            )
            for i, v in enumerate(VERDICTS)
        ],
    )
    write_part(
        lake,
        "results",
        "ra",
        1,
        [
            result_record(
                "ra",
                s,
                judge_faithfulness=FAITH[s],
                judge_completeness=COMPL[s],
                passed=FAITH[s] >= 4 and COMPL[s] >= 4,
            )
            for s in FAITH
        ],
    )
    reviews = [
        # alice: claims (s3/c1 twice: her later "missing" replaces her "found")
        _review(1, "alice", "s1", "claim", "found", item_id="c1"),
        _review(2, "alice", "s1", "claim", "missing", item_id="c2"),
        _review(3, "alice", "s1", "claim", "missing", item_id="c3"),
        _review(4, "alice", "s2", "claim", "found", item_id="c1"),
        _review(5, "alice", "s2", "claim", "missing", item_id="c2"),
        _review(6, "alice", "s3", "claim", "found", item_id="c1"),
        _review(7, "alice", "s3", "claim", "missing", item_id="c1"),
        # bob on s1/c1: "missing", then "found" (latest wins); " Bob " is the same person
        _review(8, "bob", "s1", "claim", "missing", item_id="c1"),
        _review(9, " Bob ", "s1", "claim", "found", item_id="c1"),
        # alice on the verdicts of s1
        _review(10, "alice", "s1", "verdict", "agree", item_id="0"),
        _review(11, "alice", "s1", "verdict", "disagree", item_id="1"),
        _review(12, "alice", "s1", "verdict", "agree", item_id="2"),
        # alice on the responses
        _review(13, "alice", "s1", "response", "correct"),
        _review(14, "alice", "s2", "response", "partly"),
        _review(15, "alice", "s3", "response", "incorrect"),
        _review(16, "alice", "s4", "response", "correct", comment="right, says the pricing page"),
    ]
    for r in reviews:  # one part per save, as the dashboard writes them
        write_part(lake, "reviews", "ra", 1, [r])
    ingest(home)


def _row(frame: Any, judge: str, metric: str) -> dict[str, Any]:
    rows = [r for r in frame.iter_rows(named=True) if r["judge"] == judge and r["metric"] == metric]
    assert len(rows) == 1, (judge, metric, frame)
    return rows[0]


def test_claim_status_kappa_by_hand(home: Paths) -> None:
    build(home)
    agreement = q.judge_agreement(Warehouse(home.warehouse))
    row = _row(agreement, "analyzer:minilm", "claim_status")
    # Pairs (analyzer, person), latest per reviewer and item:
    # alice (f,f) (m,m) (c,m) (f,f) (f,m) (m,m); bob (f,f)  -> 7 pairs, 5 equal.
    # Analyzer shares f 4, m 2, c 1; people f 3, m 4, c 0: p_e = (12 + 8 + 0) / 49.
    # kappa = (35/49 - 20/49) / (1 - 20/49) = 15/29.
    assert row["n"] == 7
    assert row["reviewers"] == 2
    assert row["accuracy"] == pytest.approx(5 / 7)
    assert row["kappa"] == pytest.approx(15 / 29)
    pairs = [("f", "f"), ("m", "m"), ("c", "m"), ("f", "f"), ("f", "m"), ("m", "m"), ("f", "f")]
    assert row["kappa"] == pytest.approx(cohen_kappa(pairs))


def test_verdict_and_rubric_kappa_by_hand(home: Paths) -> None:
    build(home)
    agreement = q.judge_agreement(Warehouse(home.warehouse))
    verdict = _row(agreement, "local", "claim_verdict")
    # judge S, N, N; alice agree, disagree, agree -> people S, S, N: p_o 2/3, p_e 4/9,
    # kappa = (6/9 - 4/9) / (5/9) = 0.4
    assert verdict["n"] == 3
    assert verdict["accuracy"] == pytest.approx(2 / 3)
    assert verdict["kappa"] == pytest.approx(0.4)
    rubric = _row(agreement, "local", "rubric_pass")
    # judge pass, fail, fail, fail; alice correct, partly, incorrect, correct -> pass, fail,
    # fail, pass: p_o 3/4, p_e (1*2 + 3*2)/16 = 1/2, kappa = 0.5
    assert rubric["n"] == 4
    assert rubric["accuracy"] == pytest.approx(0.75)
    assert rubric["kappa"] == pytest.approx(0.5)


def test_pearson_and_spearman_by_hand(home: Paths) -> None:
    build(home)
    agreement = q.judge_agreement(Warehouse(home.warehouse))
    row = _row(agreement, "local", "judge_faithfulness")
    judge = [100.0, 75.0, 25.0, 50.0]  # (5, 4, 2, 3 - 1) x 25
    people = [100.0, 50.0, 0.0, 100.0]  # correct, partly, incorrect, correct
    # Pearson: sum dx dy = 3125, sum dx^2 = 3125, sum dy^2 = 6875 -> sqrt(3125 / 6875)
    assert row["pearson"] == pytest.approx(math.sqrt(3125 / 6875))
    assert row["pearson"] == pytest.approx(pearson(judge, people))
    # Spearman: ranks (4, 3, 1, 2) vs (3.5, 2, 1, 3.5) -> 3 / sqrt(5 x 4.5)
    assert row["spearman"] == pytest.approx(3 / math.sqrt(22.5))
    assert row["spearman"] == pytest.approx(spearman(judge, people))
    assert row["mean_abs_gap"] == pytest.approx(25.0)
    assert row["kind"] == "score" and row["n"] == 4 and row["kappa"] is None
    # accuracy 80 on every sample: no variance, so no correlation (not NaN, not 0)
    flat = _row(agreement, "analyzer:minilm", "accuracy")
    assert flat["pearson"] is None and flat["spearman"] is None


def test_confusion_queue_and_sample_reviews(home: Paths) -> None:
    build(home)
    wh = Warehouse(home.warehouse)
    confusion = q.agreement_confusion(wh)
    claims = {
        (r["judge_label"], r["human_label"]): r["n"]
        for r in confusion.iter_rows(named=True)
        if r["metric"] == "claim_status"
    }
    assert claims == {("found", "found"): 3, ("found", "missing"): 1, ("missing", "missing"): 2,
                      ("contradicted", "missing"): 1}  # fmt: skip
    queue = q.review_queue(wh)
    # s1: claim c3 (contradicted vs missing) and verdict 1 disagree: 2 of 8 labelled items
    # (claims c1 by alice and by bob, c2, c3; verdicts 0-2; the rubric pass).
    first = queue.row(0, named=True)
    assert (first["sample_id"], first["disagreements"], first["reviewers"]) == ("s1", 2, 2)
    assert first["labels"] == 8
    # s2 (claim c2) and s4 (rubric fail, person: correct) disagree once each; the score gap
    # breaks the tie: s4 |50-100|, |75-100|, |62.5-100|, |80-100|, |60-100| -> mean 34.5,
    # s2 |75-50|, |50-50|, |62.5-50|, |80-50|, |60-50| -> mean 15.5. s3 agrees everywhere.
    assert list(queue["sample_id"]) == ["s1", "s4", "s2", "s3"]
    assert queue["score_gap"].to_list()[1:3] == pytest.approx([34.5, 15.5])
    assert queue["disagreements"].to_list() == [2, 1, 1, 0]
    reviews = q.sample_reviews(wh, SampleRef("ra", "s3", 1, ""))
    # alice's two reviews of s3/c1 collapse to the latest; plus her response review
    assert sorted(zip(reviews["item"], reviews["label"], strict=True)) == [
        ("claim", "missing"),
        ("response", "incorrect"),
    ]


def test_agreement_over_the_runs_chosen(home: Paths) -> None:
    build(home)
    every_ra = {
        name: fn(Warehouse(home.warehouse))
        for name, fn in (("agreement", q.judge_agreement), ("confusion", q.agreement_confusion),
                         ("queue", q.review_queue))
    }  # fmt: skip
    # A later run, reviewed once: a claim the analyzer found and carol says is missing.
    lake = home.lake
    later = T + timedelta(days=1)
    write_part(lake, "runs", "rb", 0, [run_record("rb", later, name="second", embedder="minilm")])
    write_part(lake, "results", "rb", 1, [result_record("rb", "s9")])
    carol = ReviewRecord(
        review_id="rev900", run_id="rb", iteration=1, sample_id="s9", item="claim",
        item_id="c1", label="missing", machine_label="found", reviewer="carol", reviewed_at=later,
    )  # fmt: skip
    write_part(lake, "reviews", "rb", 1, [carol])
    ingest(home)
    wh = Warehouse(home.warehouse)
    assert q.reviewed_runs(wh)["run_id"].to_list() == ["rb", "ra"]  # newest first
    # run ra alone: the figures before rb existed (to the last bits of a float sum)
    assert_frame_equal(q.judge_agreement(wh, ("ra",)), every_ra["agreement"])
    assert_frame_equal(q.agreement_confusion(wh, ["ra"]), every_ra["confusion"])
    assert_frame_equal(q.review_queue(wh, run_ids=("ra",)), every_ra["queue"])
    # run rb alone: one claim, judged differently
    (only,) = q.judge_agreement(wh, ("rb",)).iter_rows(named=True)
    assert (only["judge"], only["metric"], only["n"], only["reviewers"], only["accuracy"]) == (
        "analyzer:minilm", "claim_status", 1, 1, 0.0,
    )  # fmt: skip
    assert q.agreement_confusion(wh, ("rb",)).select("judge_label", "human_label", "n").rows() == [
        ("found", "missing", 1)
    ]
    assert q.review_queue(wh, run_ids=("rb",))["sample_id"].to_list() == ["s9"]
    # no choice (None or empty) is every run
    claims = _row(q.judge_agreement(wh, ()), "analyzer:minilm", "claim_status")
    assert claims["n"] == _row(every_ra["agreement"], "analyzer:minilm", "claim_status")["n"] + 1
    assert set(q.review_queue(wh)["run_id"]) == {"ra", "rb"}


def test_run_labels_rename_tag_archive(home: Paths) -> None:
    build(home)
    lake, wh = home.lake, Warehouse(home.warehouse)

    def label(n: int, **fields: Any) -> None:
        write_part(
            lake,
            "run_labels",
            "ra",
            0,
            [
                RunLabelRecord(
                    label_id=f"l{n}",
                    run_id="ra",
                    labelled_at=T + timedelta(hours=n),
                    labelled_by="carol",
                    **fields,
                )
            ],
        )

    label(1, name="Baseline, Nov", tags=["baseline", "nov"])
    label(2, archived=True)
    ingest(home)
    runs = q.runs(wh)
    assert runs.row(0, named=True)["name"] == "Baseline, Nov"
    assert runs["archived"].to_list() == [True]
    assert runs["tags"].to_list() == [["baseline", "nov"]]
    # the name a run was started with stays in runs_log
    assert wh.sql("SELECT name FROM runs_log").frame["name"].to_list() == ["first name"]
    # a later state of the run (it was resumed) keeps the name people gave it
    later = run_record("ra", name="first name", embedder="minilm", updated_at=T + timedelta(1))
    write_part(lake, "runs", "ra", 0, [later])
    label(3, archived=False, tags=[])
    ingest(home)
    row = q.runs(wh).row(0, named=True)
    assert (row["name"], row["archived"], row["tags"]) == ("Baseline, Nov", False, [])
    detail = q.runs_detail(wh).row(0, named=True)
    assert detail["labelled_by"] == "carol"
    # a rebuild from the lake gives the same
    ingest(home, rebuild=True)
    assert q.runs(wh).row(0, named=True)["name"] == "Baseline, Nov"


def test_every_view_is_documented_and_the_readme_examples_run(home: Paths) -> None:
    import re

    from warehouse.docs import README
    from warehouse.schema import view_sql

    text = README.read_text(encoding="utf-8")
    views = [m.group(1) for _, sql in view_sql() for m in [re.search(r"VIEW (\w+) AS", sql)] if m]
    assert {"run_labels_current", "review_latest", "review_pairs"} <= set(views)
    assert [v for v in views if f"### `{v}`" not in text] == []
    build(home)
    wh = Warehouse(home.warehouse)
    block = text.split("## Example queries", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    statements = [s for s in block.split(";") if s.strip()]
    assert len(statements) >= 6
    for statement in statements:
        wh.sql(statement)  # raises on an example that no longer runs
    # the reviews example: alice disagreed with verdict 1 (CONTRADICTED)
    got = wh.sql(statements[-1]).frame
    assert got.select("sample_id", "item_id", "judge_label", "reviewer").rows() == [
        ("s1", "1", "not supported", "alice")
    ]


def test_comments_reach_the_queue_and_the_comment_list(home: Paths) -> None:
    build(home)
    later = [
        # carol on s1/c3: missing where the analyzer said contradicted (one disagreement)
        _review(30, "carol", "s1", "claim", "missing", item_id="c3", comment=" not in the answer "),
        # carol on s2: a comment she then replaced by a review without one
        _review(31, "carol", "s2", "response", "partly", comment="old thought"),
        _review(32, "carol", "s2", "response", "correct"),
    ]
    for r in later:
        write_part(home.lake, "reviews", "ra", 1, [r])
    ingest(home)
    wh = Warehouse(home.warehouse)
    said = q.review_comments(wh)
    assert said.select("sample_id", "reviewer", "comment", "items", "disagreements").rows() == [
        ("s1", "carol", "not in the answer", 1, 1),
        ("s4", "alice", "right, says the pricing page", 1, 1),
    ]
    assert q.review_comments(wh, ("nope",)).is_empty()
    comments = dict(q.review_queue(wh).select("sample_id", "comments").iter_rows())
    assert comments == {
        "s1": "carol: not in the answer",
        "s2": None,
        "s3": None,
        "s4": "alice: right, says the pricing page",
    }
