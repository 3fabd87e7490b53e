"""Typed queries of test-set versions (``sql/queries/testset_*.sql``, ``run_testset_*``,
``shared_case_count``): a test set's versions and their cases, the version each run scored,
and the cases two runs share. Registered in ``queries.QUERIES`` like every named query; a
module of its own because ``queries`` is long enough."""

from __future__ import annotations

from typing import NamedTuple

import polars as pl

from warehouse.queries import Warehouse, named_query


class SharedCases(NamedTuple):
    """Cases each of two runs scored, and those both scored with the same content."""

    run_cases: int
    baseline_cases: int
    shared: int


@named_query
def testset_version_list(wh: Warehouse, name: str | None = None) -> pl.DataFrame:
    """The versions of the test set ``name`` (of every test set when None), oldest first."""
    return wh.named("testset_version_list", test_set=name)


@named_query
def testset_version_cases(wh: Warehouse, name: str, version: int) -> pl.DataFrame:
    """``sample_id``, ``sample_hash`` and ``case_json`` of every case of one version."""
    return wh.named("testset_version_cases", test_set=name, version=int(version))


@named_query
def run_testset_versions(wh: Warehouse, run_ids: tuple[str, ...]) -> pl.DataFrame:
    """The test-set name, version and cases hash of each run of ``run_ids``."""
    return wh.named("run_testset_versions", run_ids=list(run_ids))


@named_query
def shared_case_count(wh: Warehouse, run_id: str, baseline_run_id: str) -> SharedCases:
    """Cases each run scored, and those both scored with the same id and content."""
    row = wh.named("shared_case_count", run_id=run_id, baseline_run_id=baseline_run_id).row(0)
    return SharedCases(int(row[0]), int(row[1]), int(row[2]))
