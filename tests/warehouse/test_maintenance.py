"""``evalhouse maintain`` on a real catalog: many small ingests (one snapshot and a few
small files each), an orphan left by a killed ingester; after maintenance every table's
rows are the same, and there are fewer snapshots and fewer files. Its functions stay
refused in analysts' SQL."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import psutil
import pytest

from engine.lake import write_part
from engine.settings import Paths
from evalhouse.cli import main
from ingest import ingest
from tests.factories import T0, result_record, run_record
from warehouse.catalog import Catalog, CatalogError, write_connection
from warehouse.commit_lock import advisory_lock
from warehouse.maintenance import maintain
from warehouse.queries import Warehouse

ROOT = Path(__file__).resolve().parents[2]


def _args(home: Paths, catalog: Catalog) -> list[str]:
    return [
        *("--home", str(home.home), "--catalog", f"postgres:{catalog.conninfo}"),
        *("--catalog-data", str(catalog.data_path)),
    ]


def _small_ingests(home: Paths, catalog: Catalog, count: int) -> None:
    """``count`` ingests of one small run each, as runners ingesting after every flush do
    (20 results a part: more than DuckLake inlines, so each writes Parquet files)."""
    for r in range(count):
        run_id = f"run{r:03d}"
        write_part(home.lake, "runs", run_id, 0, [run_record(run_id, T0)])
        rows = [result_record(run_id, f"s{i}", accuracy=float(i)) for i in range(20)]
        write_part(home.lake, "results", run_id, 1, rows)
        ingest(home, catalog=catalog)


def _orphan(catalog: Catalog) -> Path:
    """A Parquet file no snapshot knows, as an ingester killed before its commit leaves."""
    source = next(catalog.data_path.rglob("*.parquet"))
    orphan = source.with_name("ducklake-killed-ingester.parquet")
    shutil.copyfile(source, orphan)
    return orphan


def _maintain_and_check(
    home: Paths, catalog: Catalog, ingests: int, capsys: pytest.CaptureFixture[str]
) -> None:
    _small_ingests(home, catalog, ingests)
    orphan = _orphan(catalog)
    report = maintain(catalog, keep_s=3600, grace_s=3600)  # everything is younger: a no-op
    assert report.after.snapshots >= report.before.snapshots and orphan.exists()
    before = report.after
    # A grace under the floor is forced: no ingest writes to this catalog now.
    args = ["maintain", "--keep", "0s", "--grace", "0s", "--force-grace"]
    assert main([*_args(home, catalog), *args]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("maintained the catalog") and "rows unchanged" in line
    after = maintain(catalog, keep_s=0, grace_s=0).before
    assert after.rows == before.rows
    assert after.rows["results"] == 20 * ingests and after.rows["runs"] == ingests
    assert before.snapshots > ingests and after.snapshots < 5
    assert after.files * 4 < before.files and not orphan.exists()
    summary = Warehouse(home.warehouse, catalog=catalog).sql("SELECT * FROM run_summary")
    assert summary.frame.height == ingests


def test_maintain_a_catalog_of_many_small_ingests(
    catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _maintain_and_check(home, catalog, 15, capsys)


@pytest.mark.slow
def test_maintain_a_catalog_of_hundreds_of_snapshots(
    catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _maintain_and_check(home, catalog, 100, capsys)


def _kill_the_pass() -> None:
    """SIGKILL the running pass's process, as a native abort inside DuckLake ends it."""
    for child in psutil.Process().children():
        if "warehouse.maintenance_child" in " ".join(child.cmdline()):
            child.send_signal(signal.SIGKILL)


@pytest.mark.parametrize("deaths", [1, 2])
def test_a_pass_whose_process_dies_runs_once_more(
    deaths: int, catalog: Catalog, home: Paths
) -> None:
    """The pass runs in a process of its own: killed (here while it waits for the commit
    lock this test holds), the caller lives, and the pass runs again and finishes; a second
    death is one line that says the finished steps are done."""
    _small_ingests(home, catalog, 3)
    heard: list[str] = []
    with ExitStack() as held:
        con, _guard = held.enter_context(write_connection(catalog))
        held.enter_context(advisory_lock(con, 10))

        def told(message: str) -> None:
            heard.append(message)
            waits = sum("commit lock" in m for m in heard)
            if "commit lock" in message and waits <= deaths:
                _kill_the_pass()
            elif "commit lock" in message:
                held.close()  # the lock is let go: this pass finishes

        if deaths > 1:
            twice = re.escape("its process died twice (signal 9); the steps")
            with pytest.raises(CatalogError, match=twice):
                maintain(catalog, keep_s=3600, grace_s=3600, wait_s=60, on_message=told)
            assert [("commit lock" in m, "died" in m) for m in heard] == [
                (True, False),
                (False, True),
                (True, False),
            ]
            return
        report = maintain(catalog, keep_s=3600, grace_s=3600, wait_s=60, on_message=told)
    assert [("commit lock" in m, "died (signal 9); once more" in m) for m in heard] == [
        (True, False),
        (False, True),
        (True, False),
    ]
    assert report.after.rows == report.before.rows
    assert report.after.rows["results"] == 60 and report.after.rows["runs"] == 3


@pytest.mark.parametrize(
    "sql",
    [
        "CALL ducklake_merge_adjacent_files('lake')",
        "SELECT * FROM ducklake_expire_snapshots('lake', older_than => now())",
        "FROM ducklake_delete_orphaned_files('lake', cleanup_all => true)",
        "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)",
        "SELECT count(*) FROM lake.ducklake_flush_inlined_data('lake')",
        "CHECKPOINT",
    ],
)
def test_analysts_sql_cannot_maintain(
    sql: str, catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _small_ingests(home, catalog, 1)
    assert main([*_args(home, catalog), "sql", sql]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_maintain_needs_a_catalog(home: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--home", str(home.home), "maintain"]) == 2
    assert "maintain works on a DuckLake catalog" in capsys.readouterr().err


@pytest.mark.slow
def test_scheduled_maintenance_runs_rounds_until_stopped(catalog: Catalog, home: Paths) -> None:
    _small_ingests(home, catalog, 3)
    child = subprocess.Popen(
        [sys.executable, "-m", "evalhouse.cli", *_args(home, catalog), "maintain", "--every", "1s"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    lines = [child.stdout.readline() for _ in range(2)]
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=60) == 130
    assert all(line.startswith("maintained the catalog") for line in lines)
    assert child.stderr is not None and "Traceback" not in child.stderr.read()
