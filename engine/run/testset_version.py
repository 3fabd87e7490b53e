"""A run's test-set version in the lake (table ``testset_cases``): every case of the test
set it loaded, whatever part of it the run scores, written once per run (a resumed run has
it already), so each version of a test set is kept with its cases."""

from __future__ import annotations

from pathlib import Path

from engine.lake import partition_dir, write_part
from engine.testsets import LoadedTestSet
from engine.testsets.versions import version_case_records

TABLE = "testset_cases"


def write_testset_version(lake: Path, run_id: str, test_set: LoadedTestSet) -> None:
    """Write the test set's cases under the run, unless the run wrote them already."""
    if not test_set.cases or any(partition_dir(lake, TABLE, run_id, 0).glob("part-*.parquet")):
        return
    write_part(lake, TABLE, run_id, 0, version_case_records(run_id, test_set.name, test_set.cases))
