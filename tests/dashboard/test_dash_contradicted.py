"""Contradicted claims are their own count on Sample and Claims, and the Claims page counts
the iteration its row names (not the sum of every iteration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.lake import write_part
from engine.models import ClaimRecord
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory, table
from tests.factories import T0, result_record, run_record

CLAIMS = [
    ("c1", "Acme Pro costs $20 per month.", True, "found"),
    ("c2", "Support is closed on Sundays.", False, "contradicted"),
    ("c3", "Refunds take five days.", False, "missing"),
]
"""One of each: found, stated wrongly (the response says support is open on Sundays), left
out."""


@pytest.fixture(scope="module")
def claims_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    return build_claims_home(tmp_path_factory.mktemp("contradicted") / "home")


def build_claims_home(root: Path) -> Paths:
    """Run ``rk``: sample acme-q1 in three iterations, each with the three ``CLAIMS``."""
    paths = resolve_paths(root)
    write_part(paths.lake, "runs", "rk", 0, [run_record("rk", T0, iterations=3)])
    for iteration in (1, 2, 3):
        write_part(
            paths.lake,
            "claims",
            "rk",
            iteration,
            [
                ClaimRecord(
                    run_id="rk",
                    iteration=iteration,
                    sample_id="acme-q1",
                    claim_id=cid,
                    claim_text=text,
                    importance="required",
                    found=found,
                    status=status,
                    similarity=0.8 if found else 0.5,
                )
                for cid, text, found, status in CLAIMS
            ],
        )
        write_part(
            paths.lake,
            "results",
            "rk",
            iteration,
            [result_record("rk", "acme-q1", iteration=iteration, response="Open on Sundays.")],
        )
    ingest(paths)
    return paths


def test_sample_page_labels_a_contradicted_claim_contradicted(
    app: AppFactory, claims_home: Paths
) -> None:
    at = app(claims_home, "sample", run="rk", sample="acme-q1", iteration="1")
    headings = [m.value for m in at.markdown]
    assert "**Missing (1)**" in headings
    assert "**:red[Contradicted (1)]**" in headings
    assert "**Found (1)**" in headings
    shown = [[str(r["claim_text"]) for r in table(at, "importance", nth)] for nth in range(3)]
    assert shown == [
        ["Refunds take five days."],
        ["Support is closed on Sundays."],
        ["Acme Pro costs $20 per month."],
    ]


def test_claims_page_counts_one_iteration_with_contradicted_apart(
    app: AppFactory, claims_home: Paths
) -> None:
    at = app(claims_home, "claims", run="rk")
    (row,) = table(at, "missing_claims")  # the per-query table
    # three iterations of three claims: the row names iteration 1 and counts its claims
    assert row["iteration"] == 1
    assert (row["claims"], row["found"], row["contradicted"], row["missing"]) == (3, 1, 1, 1)
    assert row["missing_claims"] == "Refunds take five days."
