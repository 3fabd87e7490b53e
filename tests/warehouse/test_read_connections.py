"""Read connections in one process: concurrent, sandboxed, and never fighting over settings."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from engine.lake import write_part
from engine.settings import Paths
from ingest import ingest
from tests.factories import result_record
from warehouse.db import read_connection
from warehouse.queries import Warehouse


def test_overlapping_readers_in_one_process(home: Paths) -> None:
    # DuckDB shares one database instance between a process's connections; a reader that
    # opens while another is open must not fail on the sandbox settings (a dashboard
    # serves several sessions from threads of one process).
    write_part(home.lake, "results", "R", 1, [result_record("R", "s1")])
    ingest(home)
    with read_connection(home.warehouse) as first, read_connection(home.warehouse) as second:
        assert first.execute("SELECT count(*) FROM results").fetchall() == [(1,)]
        assert second.execute("SELECT count(*) FROM results").fetchall() == [(1,)]
    warehouse = Warehouse(home.warehouse)
    with ThreadPoolExecutor(max_workers=8) as pool:
        counts = list(
            pool.map(
                lambda _: warehouse.sql("SELECT count(*) FROM results").frame.item(), range(64)
            )
        )
    assert counts == [1] * 64
