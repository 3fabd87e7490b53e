"""Reviewers against each other (Krippendorff's alpha on items reviewed twice) and a judge
score's calibration against reviewers, on a tiny warehouse built through the lake and
checked against numbers computed by hand."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from dashboard import reliability_data
from engine.lake import write_part
from engine.models import ReviewRecord
from engine.settings import Paths
from ingest import ingest
from tests.factories import result_record, run_record
from warehouse.queries import Warehouse
from warehouse.reliability_queries import judge_calibration

T = datetime(2026, 11, 20, 10, 0)
# judge overall on 0-100: s1 (5, 5) -> 100, s2 (2, 2) -> 25, s3 (4, 4) -> 75
JUDGE = {"s1": 5.0, "s2": 2.0, "s3": 4.0}
RESPONSES = {  # reviewer -> sample -> label
    "alice": {"s1": "correct", "s2": "incorrect", "s3": "partly"},
    "bob": {"s1": "correct", "s2": "partly", "s3": "correct"},
}
CLAIMS = {"alice": {"c1": "found", "c2": "found"}, "Bob ": {"c1": "missing", "c2": "found"}}


def _build(home: Paths) -> Warehouse:
    lake = home.lake
    write_part(lake, "runs", "ra", 0, [run_record("ra")])
    rows = [
        result_record("ra", s, judge_faithfulness=v, judge_completeness=v, passed=v >= 4)
        for s, v in JUDGE.items()
    ]
    write_part(lake, "results", "ra", 1, rows)
    reviews: list[ReviewRecord] = []

    def review(reviewer: str, sample: str, item: str, label: str, item_id: str = "") -> None:
        n = len(reviews)
        reviews.append(
            ReviewRecord(
                review_id=f"rev{n:03d}",
                run_id="ra",
                iteration=1,
                sample_id=sample,
                item=item,  # type: ignore[arg-type]
                item_id=item_id,
                label=label,  # type: ignore[arg-type]
                machine_label="pass" if item == "response" else "found",
                reviewer=reviewer,
                reviewed_at=T + timedelta(minutes=n),
            )
        )

    for reviewer, labels in RESPONSES.items():
        for sample, label in labels.items():
            review(reviewer, sample, "response", label)
    for reviewer, labels in CLAIMS.items():
        for claim, label in labels.items():
            review(reviewer, "s1", "claim", label, claim)
    review("carol", "s2", "claim", "found", "c9")  # reviewed once: no unit
    write_part(lake, "reviews", "ra", 1, reviews)
    ingest(home)
    return Warehouse(home.warehouse)


def test_reviewer_alpha_by_hand(home: Paths) -> None:
    alphas = {
        r["item"]: r for r in reliability_data.reviewer_alpha(_build(home)).iter_rows(named=True)
    }
    # Responses, ordinal (incorrect 0, partly 1, correct 2): units s1 (2, 2), s2 (0, 1),
    # s3 (1, 2); n_0 = 1, n_1 = 2, n_2 = 3, n = 6. delta2(0,1) = (1 + 2 - 1.5)^2 = 2.25,
    # delta2(1,2) = (2 + 3 - 2.5)^2 = 6.25, delta2(0,2) = (6 - 2)^2 = 16. Observed
    # 2 x 2.25 + 2 x 6.25 = 17; expected 2 x (1x2x2.25 + 2x3x6.25 + 1x3x16) = 180;
    # alpha = 1 - 5 x 17 / 180 = 95 / 180.
    response = alphas["response"]
    assert response["level"] == "ordinal"
    assert (response["items"], response["reviewers"]) == (3, 2)
    assert response["alpha"] == pytest.approx(95 / 180)
    # Claims, nominal: units (found, missing) and (found, found), n_found = 3, n_missing =
    # 1; observed 2, expected 2 x 3 x 1 = 6; alpha = 1 - 3 x 2 / 6 = 0. "Bob " is bob.
    claim = alphas["claim"]
    assert (claim["items"], claim["reviewers"]) == (2, 2)
    assert claim["alpha"] == pytest.approx(0.0)


def test_calibration_bins_by_hand(home: Paths) -> None:
    bins = judge_calibration(_build(home), "judge_overall")
    got = [
        (r["bin_low"], r["reviews"], r["judge_mean"], r["share_correct"], r["reviewer_mean"])
        for r in bins.iter_rows(named=True)
    ]
    # s2 at 25: incorrect and partly; s3 at 75: partly and correct; s1 at 100: both correct
    assert got == [
        (20.0, 2, 25.0, 0.0, 25.0),
        (60.0, 2, 75.0, 0.5, 75.0),
        (80.0, 2, 100.0, 1.0, 100.0),
    ]
