"""Analyst SQL cannot exhaust the process that asked: it runs in a child with its memory,
result size and time capped (warehouse.sandbox)."""

from __future__ import annotations

import resource
import time

import pytest

from engine.settings import Paths
from ingest import ingest
from tests.conftest import Store
from warehouse.errors import QueryError
from warehouse.queries import Warehouse


@pytest.fixture
def warehouse(home: Paths) -> Warehouse:
    ingest(home)  # the schema, no runs
    return Warehouse(home.warehouse)


def test_a_query_that_builds_a_huge_value_is_stopped_in_its_own_process(
    warehouse: Warehouse,
) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    # The memory cap must stop it, not the clock: about 5 s on a quiet 2-core machine and
    # 17 s beside the rest of the suite, so the time limit is far above either.
    with pytest.raises(QueryError, match=r"(?i)memory"):
        warehouse.analyst_sql("SELECT repeat('x', 900000000) AS s", time_limit_s=60)
    assert time.monotonic() - started < 75
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 200, grown_mb  # the 900 MB were the child's, not ours


def test_a_result_over_the_byte_cap_is_refused_not_sent(warehouse: Warehouse) -> None:
    with pytest.raises(QueryError, match="result is over 64 MB"):
        warehouse.analyst_sql("SELECT repeat('x', 1000000) AS s FROM range(100)", row_cap=1000)


def test_a_query_that_runs_too_long_is_stopped(warehouse: Warehouse) -> None:
    started = time.monotonic()
    with pytest.raises(QueryError, match="longer than"):
        warehouse.analyst_sql(
            "SELECT count(*) FROM range(100000000000) a, range(100) b", time_limit_s=1
        )
    assert time.monotonic() - started < 20


def test_ordinary_queries_and_the_sandbox_rules_still_hold(warehouse: Warehouse) -> None:
    result = warehouse.analyst_sql("SELECT 1 AS one, [1, 2] AS xs", row_cap=10)
    assert result.frame.to_dicts() == [{"one": 1, "xs": [1, 2]}] and not result.truncated
    capped = warehouse.analyst_sql("SELECT * FROM range(50)", row_cap=10)
    assert capped.frame.height == 10 and capped.truncated
    with pytest.raises(QueryError):
        warehouse.analyst_sql("SELECT * FROM read_csv('/etc/passwd')")


def test_analyst_sql_reads_both_backends(store: Store) -> None:
    from engine.lake import write_part
    from tests.factories import result_record, run_record

    write_part(store.home.lake, "runs", "r1", 0, [run_record("r1")])
    write_part(store.home.lake, "results", "r1", 1, [result_record("r1", "s1", accuracy=80.0)])
    store.ingest()
    result = store.warehouse.analyst_sql("SELECT run_id, accuracy FROM results")
    assert result.frame.to_dicts() == [{"run_id": "r1", "accuracy": 80.0}]
