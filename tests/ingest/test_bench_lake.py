"""The benchmark lake generator keeps up with the models (a small lake loads whole)."""

from __future__ import annotations

from engine.settings import Paths
from ingest import ingest
from tests.bench.lake_gen import generate


def test_generated_lake_loads_whole(home: Paths) -> None:
    generate(home.lake, results=1_000, runs=2, part_rows=250)
    report = ingest(home)
    assert report.rows == {"runs": 2, "results": 1_000, "claims": 5_000}
    assert report.corrupt == [] and report.waiting == 0
