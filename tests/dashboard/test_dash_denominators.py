"""Right denominators, checked by hand on a tiny warehouse built through the lake and
ingest: pass rates count empty and abstained answers as not passed (the seed's 3/8) with
the abstention rate beside them, and ``domain_scores`` counts tiers per query."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.lake import write_part
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory, all_columns, shown_cards
from tests.factories import T0, result_record, run_record
from warehouse.queries import Warehouse

EIGHT = [
    # (sample, passed, response, abstained): as the judge records them
    ("acme-1", True, "Acme Pro costs $20.", None),
    ("acme-2", True, "Support is open daily.", None),
    ("acme-3", True, "Refunds take 5 days.", None),
    ("acme-4", False, "Acme Pro is free.", None),
    ("acme-5", False, "Support never answers.", None),
    ("acme-6", False, "Refunds are instant.", None),
    ("acme-7", False, "I'm sorry, I can't help with that.", True),
    ("acme-8", False, "", None),
]
"""3 pass, 3 fail, 1 refusal, 1 empty answer."""


@pytest.fixture(scope="module")
def eight_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    paths = resolve_paths(tmp_path_factory.mktemp("eight") / "home")
    write_part(paths.lake, "runs", "r8", 0, [run_record("r8", T0)])
    rows = [
        result_record(
            "r8",
            sample_id,
            passed=passed,
            response=response,
            abstained=abstained,
            judge_faithfulness=None if not response or abstained else (5.0 if passed else 2.0),
            judge_completeness=5.0 if passed else 1.0,
        )
        for sample_id, passed, response, abstained in EIGHT
    ]
    write_part(paths.lake, "results", "r8", 1, rows)
    ingest(paths)
    return paths


def test_overview_pass_rate_is_three_of_eight_with_abstention_beside(
    app: AppFactory, eight_home: Paths
) -> None:
    at = app(eight_home)
    cards = shown_cards(at)
    assert cards["Pass rate"]["value"] == "37.5%"  # 3 / 8, not 3 / 6
    assert cards["Abstained"]["value"] == "25.0%"  # the refusal and the empty answer, 2 / 8
    rows = {str(r["Metric"]): r for r in all_columns(at)}
    assert rows["Rubric pass rate"]["Score"] == 37.5
    assert rows["Rubric pass rate"]["Abstained %"] == 25.0
    assert rows["Accuracy"]["Samples"] == 8


def _tier_home(root: Path) -> Paths:
    """Six queries, three iterations each; q1..q4 excellent every time, q5 good, q6 good in
    iteration 1 and poor in iterations 2 and 3."""
    paths = resolve_paths(root)
    write_part(paths.lake, "runs", "rt", 0, [run_record("rt", T0, iterations=3)])
    for iteration in (1, 2, 3):
        scores = [90.0, 90.0, 90.0, 90.0, 75.0, 75.0 if iteration == 1 else 30.0]
        rows = [
            result_record("rt", f"q{i + 1}", iteration=iteration, accuracy=s)
            for i, s in enumerate(scores)
        ]
        write_part(paths.lake, "results", "rt", iteration, rows)
    ingest(paths)
    return paths


def test_domain_scores_counts_tiers_per_query(tmp_path: Path) -> None:
    paths = _tier_home(tmp_path / "home")
    row = (
        Warehouse(paths.warehouse)
        .sql("SELECT * FROM domain_scores WHERE run_id = 'rt'")
        .frame.row(0, named=True)
    )
    assert row["query_count"] == 6
    counts = [row[f"accuracy_{t}"] for t in ("excellent", "good", "fair", "poor")]
    # per query, its three iterations averaged: q6 counts 1/3 good and 2/3 poor
    assert counts == pytest.approx([4.0, 1 + 1 / 3, 0.0, 2 / 3])
    assert sum(counts) == pytest.approx(row["query_count"])
