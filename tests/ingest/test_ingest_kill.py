"""Kill -9 of a real ingest process between batches: every (run, iteration) the warehouse
shows is whole, all its tables at once.

The lake comes from the benchmark generator (results parts with ~5 claims per result,
claims part published before its results part, as the runner does). The ingest process
uses small batches so one ingest takes several, and after reporting each one it waits for
the test's word on stdin; it is killed while it waits, and the warehouse is then read as
any reader would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.lake import list_parts
from engine.settings import Paths
from ingest import ingest
from tests.bench.lake_gen import generate
from warehouse.queries import Warehouse

ROOT = Path(__file__).resolve().parents[2]

DRIVER = """
import sys
import ingest.run
from engine.settings import resolve_paths

def report(message):
    print(message, flush=True)
    # The kill lands here, after a batch committed and before the next: the test answers
    # every report it does not kill on, so no clock decides where the kill falls.
    sys.stdin.readline()

ingest.run.BATCH_FILES = int(sys.argv[2])
ingest.run.ingest(resolve_paths(sys.argv[1]), on_message=report)
"""

pytestmark = pytest.mark.slow


def _lake_rows(home: Paths) -> dict[tuple[str, str, int], int]:
    """Rows per (table, run, iteration) in the lake, from the Parquet footers."""
    rows: Counter[tuple[str, str, int]] = Counter()
    for part in list_parts(home.lake):
        n = pq.ParquetFile(part.path).metadata.num_rows
        rows[(part.table, part.run_id, part.iteration)] += n
    return dict(rows)


def _warehouse_rows(home: Paths, table: str) -> dict[tuple[str, int], int]:
    frame = (
        Warehouse(home.warehouse)
        .sql(f"SELECT run_id, iteration, count(*) AS n FROM {table} GROUP BY ALL")
        .frame
    )
    return {(str(r), int(i)): int(n) for r, i, n in frame.iter_rows()}


def _ingest_and_kill(home: Paths, after_batches: int) -> bool:
    """Start an ingest process, SIGKILL it after ``after_batches`` batch reports; returns
    whether it was killed (False: it finished first)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(home.home), "40"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen = 0
    killed = False
    for line in proc.stdout:
        if line.startswith("ingested "):
            seen += 1
            if seen == after_batches:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                break
        proc.stdin.write("\n")  # go on to the next batch
        proc.stdin.flush()
    proc.wait(timeout=60)
    proc.stdin.close()
    return killed


def test_kill_between_batches_leaves_whole_partitions(home: Paths) -> None:
    # 6 runs x 1 iteration, 24 results and 24 claims parts each: 294 parts. In batches of
    # about 40 parts that never split a partition: the 6 run states, then one run each.
    generate(home.lake, results=7_200, runs=6, part_rows=50)
    lake = _lake_rows(home)
    kills = 0
    for after in (2, 2, 2):
        kills += _ingest_and_kill(home, after)
        results = _warehouse_rows(home, "results")
        claims = _warehouse_rows(home, "claims")
        assert results, "the killed ingest committed no batch"
        for run_id, iteration in results:
            assert results[(run_id, iteration)] == lake[("results", run_id, iteration)]
            assert claims.get((run_id, iteration), 0) == lake[("claims", run_id, iteration)]
        assert set(claims) <= set(results)
    assert kills == 3  # each ingest was stopped part-way, none ran to the end
    # The next ingest completes exactly what the killed ones left.
    ingest(home)
    assert _warehouse_rows(home, "results") == {
        (r, i): n for (t, r, i), n in lake.items() if t == "results"
    }
    assert _warehouse_rows(home, "claims") == {
        (r, i): n for (t, r, i), n in lake.items() if t == "claims"
    }
