"""Compare's queries on a real warehouse: runs added against one baseline, groups by the
cases' metadata (field names that look like JSON paths included), different-only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.models import CaseRecord
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.factories import result_record, run_record
from warehouse import compare_queries as cq
from warehouse.queries import Warehouse

ODD_FIELD = "$.a/b~ **<b>x</b>**"
"""A metadata field whose name reads like a JSON path, and like Markdown and HTML."""

# sample -> (region, odd field, baseline accuracy, new accuracy, other accuracy)
SAMPLES = {
    "s1": ("eu", "x", 80.0, 60.0, 85.0),
    "s2": ("eu", "y", 70.0, 72.0, 50.0),
    "s3": ("us", "x", 50.0, 90.0, None),
    "s4": (None, None, 40.0, 40.0, 40.0),
}


def compare_home(root: Path) -> Paths:
    """A home whose runs ``base``, ``new`` and ``other`` scored ``SAMPLES``; the cases of
    ``new`` carry the metadata."""
    paths = resolve_paths(root)
    for run_id in ("base", "new", "other"):
        write_part(paths.lake, "runs", run_id, 0, [run_record(run_id)])
    cases = []
    for sample, (region, odd, *_) in SAMPLES.items():
        meta = {} if region is None else {"region": region, ODD_FIELD: odd}
        case = {"id": sample, "domain": "d.example", "query": "q", "metadata": meta}
        cases.append(
            CaseRecord(
                run_id="new",
                sample_id=sample,
                sample_hash="h",
                domain="d.example",
                query="q",
                case_json=json.dumps(case),
            )
        )
    write_part(paths.lake, "cases", "new", 1, cases)
    for col, run_id in ((2, "base"), (3, "new"), (4, "other")):
        rows = [
            result_record(run_id, sample, domain="d.example", accuracy=values[col])
            for sample, values in SAMPLES.items()
            if values[col] is not None
        ]
        write_part(paths.lake, "results", run_id, 1, rows)
    ingest(paths)
    return paths


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return Warehouse(compare_home(tmp_path_factory.mktemp("compare") / "home").warehouse)


def test_group_fields_list_the_metadata(wh: Warehouse) -> None:
    assert cq.compare_group_fields(wh, "new") == ["domain", f"meta:{ODD_FIELD}", "meta:region"]


def test_groups_by_a_metadata_field_per_run(wh: Warehouse) -> None:
    frame = cq.compare_groups(
        wh, ("new", "other"), "base", metric="accuracy", tolerance=5.0, group="meta:region"
    )
    got = {(r["group_value"], r["run_id"]): r for r in frame.iter_rows(named=True)}
    # eu: s1 80 -> 60 and s2 70 -> 72 in "new"; 80 -> 85 and 70 -> 50 in "other"
    assert got[("eu", "new")]["mean_delta"] == pytest.approx(-9.0)
    assert (got[("eu", "new")]["regressed"], got[("eu", "new")]["unchanged"]) == (1, 1)
    assert got[("eu", "other")]["mean_delta"] == pytest.approx(-7.5)
    assert got[("us", "new")]["improved"] == 1
    assert ("us", "other") not in got  # "other" never scored s3
    assert got[(None, "new")]["samples"] == 1
    # a field name that reads like a JSON path is still one field
    odd = cq.compare_groups(
        wh, ("new",), "base", metric="accuracy", tolerance=5.0, group=f"meta:{ODD_FIELD}"
    )
    assert sorted(v for v in odd["group_value"] if v is not None) == ["x", "y"]


def test_samples_with_added_runs_grouped_and_different_only(wh: Warehouse) -> None:
    page = cq.compare_samples(
        wh, "new", "base", metric="accuracy", tolerance=5.0, added=["other"],
        group="meta:region", group_value="eu",
    )  # fmt: skip
    assert list(page["sample_id"]) == ["s1", "s2"]  # largest drop first
    added = {r["sample_id"]: r["added"] for r in page.iter_rows(named=True)}
    assert added["s2"] == [
        {"run_id": "other", "score": 50.0, "delta": -20.0, "status": "regressed"}
    ]
    # s2 moves 2 points in "new" (within the tolerance) but 20 in "other": it differs
    differ = cq.compare_samples(
        wh, "new", "base", metric="accuracy", tolerance=5.0, added=["other"], different_only=True
    )
    assert sorted(differ["sample_id"]) == ["s1", "s2", "s3"]
    alone = cq.compare_samples(
        wh, "new", "base", metric="accuracy", tolerance=5.0, different_only=True
    )
    assert sorted(alone["sample_id"]) == ["s1", "s3"]


def test_unknown_group_is_refused(wh: Warehouse) -> None:
    with pytest.raises(ValueError, match="unknown group"):
        cq.compare_groups(wh, ("new",), "base", metric="accuracy", tolerance=5.0, group="region")
