"""Ingest: incremental, idempotent, skips corrupt parts, rebuilds, and waits for the lock."""

from __future__ import annotations

import subprocess
import sys
import time

import duckdb
import pytest

from engine.lake import write_part
from engine.settings import Paths
from ingest import ingest
from tests.factories import result_record, run_record
from warehouse.db import WarehouseBusy
from warehouse.queries import Warehouse


def _count(home: Paths, sql: str) -> int:
    return int(Warehouse(home.warehouse).sql(sql).frame.item())


def _seed(home: Paths, run_id: str = "R", n: int = 3) -> None:
    write_part(home.lake, "runs", run_id, 0, [run_record(run_id)])
    write_part(home.lake, "results", run_id, 1, [result_record(run_id, f"s{i}") for i in range(n)])


def test_second_ingest_changes_nothing(home: Paths) -> None:
    _seed(home)
    first = ingest(home)
    assert first.files_loaded == 2 and first.rows == {"runs": 1, "results": 3}
    second = ingest(home)
    assert second.files_loaded == 0 and second.already_loaded == 2
    assert "nothing new" in second.summary()
    assert _count(home, "SELECT count(*) FROM results") == 3


def test_only_new_parts_load(home: Paths) -> None:
    _seed(home)
    ingest(home)
    write_part(home.lake, "results", "R", 2, [result_record("R", "s9", iteration=2)])
    report = ingest(home)
    assert report.files_loaded == 1 and report.rows == {"results": 1}
    assert _count(home, "SELECT count(*) FROM results") == 4


def test_corrupt_and_truncated_parts_are_skipped_and_recorded(home: Paths) -> None:
    _seed(home)
    good = write_part(home.lake, "results", "R", 2, [result_record("R", "x", iteration=2)])
    assert good is not None
    truncated = good.with_name("part-000099.parquet")
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    garbage = good.with_name("part-000100.parquet")
    garbage.write_bytes(b"PAR1" + b"\x00" * 64 + b"PAR1")
    report = ingest(home)
    bad = {path for path, _reason in report.corrupt}
    assert bad == {str(truncated), str(garbage)}
    assert all(reason for _p, reason in report.corrupt)
    assert str(truncated) in report.summary()
    # every good row loaded, no partial rows from the bad parts
    assert _count(home, "SELECT count(*) FROM results") == 4
    assert _count(home, "SELECT count(*) FROM ingested_files WHERE status = 'corrupt'") == 2
    # recorded: not retried on the next ingest
    assert ingest(home).corrupt == []


def test_rebuild_recreates_from_lake(home: Paths) -> None:
    _seed(home)
    ingest(home)
    con = duckdb.connect(str(home.warehouse))
    con.execute("DELETE FROM results")
    con.close()
    report = ingest(home, rebuild=True)
    assert report.rebuilt
    assert _count(home, "SELECT count(*) FROM results") == 3


def test_orphan_temporary_parts_are_ignored(home: Paths) -> None:
    _seed(home)
    folder = home.lake / "results" / "run_id=R" / "iteration=1"
    (folder / ".part-deadbeef.tmp").write_bytes(b"half a file")
    report = ingest(home)
    assert report.corrupt == [] and report.rows["results"] == 3
    assert not (folder / ".part-deadbeef.tmp").exists()


def test_busy_warehouse_gives_up_with_lake_message(home: Paths) -> None:
    _seed(home)
    ingest(home)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
            "time.sleep(30)",
            str(home.warehouse),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(WarehouseBusy) as info:
            ingest(home, wait_s=1.0)
        assert time.monotonic() - started < 10
        assert "safe in the lake" in str(info.value)
    finally:
        holder.kill()
        holder.wait()


def test_reader_waits_for_a_short_write_lock(home: Paths) -> None:
    _seed(home)
    ingest(home)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
            "time.sleep(1.0); c.close()",
            str(home.warehouse),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert _count(home, "SELECT count(*) FROM results") == 3  # retried until released
    finally:
        holder.wait()


def test_detail_parts_wait_for_their_results_part(home: Paths) -> None:
    from engine.models import ClaimRecord
    from tests.factories import T0

    claim = ClaimRecord(
        run_id="R",
        iteration=1,
        sample_id="s1",
        claim_id="c1",
        claim_text="x",
        importance="required",
        found=False,
        similarity=0.1,
    )
    write_part(home.lake, "runs", "R", 0, [run_record("R", T0)])
    # a flush half-written: its claims part is out, its results part is not yet
    write_part(home.lake, "claims", "R", 1, [claim])
    first = ingest(home)
    assert first.waiting == 1 and "wait for their results part" in first.summary()
    assert _count(home, "SELECT count(*) FROM claims") == 0
    write_part(home.lake, "results", "R", 1, [result_record("R", "s1")])
    second = ingest(home)
    assert second.waiting == 0
    assert _count(home, "SELECT count(*) FROM claims") == 1
    assert _count(home, "SELECT count(*) FROM results") == 1


def test_batches_never_split_a_partition(home: Paths) -> None:
    from pathlib import Path

    from ingest.run import partition_batches
    from warehouse.loader import PartRef

    def ref(table: str, run_id: str, iteration: int, seq: int) -> PartRef:
        rel = f"{table}/run_id={run_id}/iteration={iteration}/part-{seq:06d}.parquet"
        return PartRef(Path(rel), rel, table, run_id, iteration, 1)

    refs = [ref("runs", "A", 0, 1), ref("runs", "B", 0, 1)]
    refs += [ref("results", "A", 1, s) for s in range(1, 4)]
    refs += [ref("results", "B", 1, s) for s in range(1, 3)]
    refs += [ref("claims", "A", 1, s) for s in range(1, 4)]
    refs += [ref("claims", "B", 1, s) for s in range(1, 3)]
    batches = partition_batches(refs, 4)
    keys = [[(r.run_id, r.iteration) for r in b] for b in batches]
    # runs of A and B (2 parts), then A/1 whole (6 parts > 4), then B/1 whole (4 parts)
    assert [sorted(set(k)) for k in keys] == [[("A", 0), ("B", 0)], [("A", 1)], [("B", 1)]]
    assert [len(b) for b in batches] == [2, 6, 4]
    assert sorted(r.relative for b in batches for r in b) == sorted(r.relative for r in refs)
