"""The DuckLake catalog on a real PostgreSQL: concurrent ingesters over overlapping lakes,
a reader looping while they write, the sandbox, migrate, and refused catalog strings."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.lake import write_part
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from ingest import ingest
from tests.factories import T0, result_record, run_record
from warehouse import queries
from warehouse.catalog import Catalog, close_readers, parse_catalog
from warehouse.db import QueryError, WarehouseMissing
from warehouse.queries import Warehouse

ROOT = Path(__file__).resolve().parents[2]
RUNS = 12
SAMPLES = 15
LAKES = 4


def _pool(folder: Path) -> Paths:
    """A lake of RUNS runs (a state part and two results parts each), written once; the
    lakes of the test are copies of parts of it, so shared parts are the same files."""
    pool = resolve_paths(folder / "pool")
    for r in range(RUNS):
        run_id = f"run{r:02d}"
        write_part(pool.lake, "runs", run_id, 0, [run_record(run_id, T0)])
        for iteration in (1, 2):
            rows = [
                result_record(run_id, f"s{i}", iteration=iteration, accuracy=float(i))
                for i in range(SAMPLES)
            ]
            write_part(pool.lake, "results", run_id, iteration, rows)
    return pool


def _overlapping_homes(folder: Path, pool: Paths) -> list[Paths]:
    """LAKES homes; home i holds runs 3i .. 3i+5 (mod RUNS): every run is in two lakes."""
    homes = []
    for i in range(LAKES):
        home = resolve_paths(folder / f"home{i}")
        for r in range(3 * i, 3 * i + 6):
            run_id = f"run{r % RUNS:02d}"
            for table in ("runs", "results"):
                source = pool.lake / table / f"run_id={run_id}"
                shutil.copytree(source, home.lake / table / f"run_id={run_id}")
        homes.append(home)
    return homes


def _cli(home: Paths, catalog: Catalog, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "EVALHOUSE_CATALOG": f"postgres:{catalog.conninfo}"}
    env["EVALHOUSE_CATALOG_DATA"] = str(catalog.data_path)
    return subprocess.Popen(
        [sys.executable, "-m", "evalhouse.cli", "--home", str(home.home), *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_four_ingesters_over_overlapping_lakes_and_a_reader(
    catalog: Catalog, tmp_path: Path
) -> None:
    pool = _pool(tmp_path)
    homes = _overlapping_homes(tmp_path, pool)
    # The catalog is empty: the four also race to create the DuckLake and the schema.
    warehouse = Warehouse(tmp_path / "unused.duckdb", catalog=catalog)
    errors: list[str] = []
    seen: list[tuple[int, int]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            try:
                runs = queries.runs(warehouse).height
                counts = queries.table_counts(warehouse)
                rows = warehouse.sql("SELECT count(*) AS n FROM results").frame.item()
                assert counts.height > 0
                seen.append((runs, int(rows)))
            except WarehouseMissing:
                # Only before the first ingest has created the warehouse in the catalog.
                if seen:
                    errors.append("the warehouse went missing")
            except Exception as exc:
                errors.append(repr(exc))
            time.sleep(0.05)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        procs = [_cli(home, catalog, "ingest") for home in homes]
        outputs = [p.communicate(timeout=240) for p in procs]
    finally:
        done.set()
        reader.join(timeout=60)
    loaded = 0
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        if out.startswith("ingested"):  # else another ingester took all of this lake first
            loaded += int(out.split()[1])
    assert loaded == RUNS * 3  # every distinct part loaded by exactly one ingester
    assert errors == []
    total_rows = RUNS * 2 * SAMPLES
    frame = warehouse.sql(
        "SELECT count(*) AS n, count(DISTINCT (run_id, iteration, sample_id)) AS d FROM results"
    ).frame
    assert frame.row(0) == (total_rows, total_rows)
    runs = warehouse.sql("SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM runs").frame
    assert runs.row(0) == (RUNS, RUNS)
    ledger = warehouse.sql(
        "SELECT count(*) AS n, count(DISTINCT path) AS d FROM ingested_files"
    ).frame
    assert ledger.row(0) == (RUNS * 3, RUNS * 3)
    # The reader saw the runs arrive (not only the end state) and never saw rows go away.
    assert seen and seen[0][0] < RUNS
    assert max(s[0] for s in seen) <= RUNS and max(s[1] for s in seen) <= total_rows
    assert all(a[1] <= b[1] for a, b in itertools.pairwise(seen))
    assert queries.runs(warehouse).height == RUNS
    # Everything is loaded: each lake's ingest again finds nothing new.
    again = ingest(homes[0], catalog=catalog)
    assert again.files_loaded == 0 and again.already_loaded == 6 * 3


def test_reader_sandbox_on_a_catalog(catalog: Catalog, home: Paths) -> None:
    write_part(home.lake, "results", "R", 1, [result_record("R", "s1")])
    ingest(home, catalog=catalog)
    warehouse = Warehouse(home.warehouse, catalog=catalog)
    assert warehouse.sql("SELECT count(*) FROM results").frame.item() == 1
    refused = [
        "SELECT * FROM __ducklake_metadata_lake.public.ducklake_metadata",
        "SELECT * FROM __ducklake_metadata_lake.ducklake_data_file",
        "SELECT * FROM postgres_query('__ducklake_metadata_lake', 'SELECT 1')",
        "SELECT * FROM ducklake_list_files('lake', 'results')",
        f"SELECT * FROM read_parquet('{catalog.data_path}/**/*.parquet')",
        "ATTACH 'other.duckdb' AS other",
        "CALL postgres_execute('__ducklake_metadata_lake', 'DROP TABLE ducklake_snapshot')",
        "INSERT INTO results SELECT * FROM results",
        "DETACH lake",
    ]
    for sql in refused:
        with pytest.raises(QueryError) as caught:
            warehouse.sql(sql)
        assert str(catalog.data_path) not in str(caught.value), sql
    assert warehouse.sql("SELECT count(*) FROM results").frame.item() == 1


def test_empty_catalog_reads_as_missing(catalog: Catalog, home: Paths) -> None:
    with pytest.raises(WarehouseMissing, match="evalhouse ingest"):
        Warehouse(home.warehouse, catalog=catalog).sql("SELECT 1")


def _rows(warehouse: Warehouse, table: str) -> list[tuple[object, ...]]:
    frame = warehouse.sql(f"SELECT * FROM {table}").frame
    return sorted(frame.rows(), key=repr)


def test_migrate_round_trip(
    catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    for run_id, day in (("A", 0), ("B", 7)):
        write_part(home.lake, "runs", run_id, 0, [run_record(run_id, T0 + day * (T0 - T0))])
        rows = [result_record(run_id, f"s{i}", accuracy=10.0 * i) for i in range(5)]
        write_part(home.lake, "results", run_id, 1, rows)
    ingest(home)
    target = ["migrate", "--to", f"postgres:{catalog.conninfo}", "--catalog-data"]
    assert main(["--home", str(home.home), *target, str(catalog.data_path)]) == 0
    assert "copied" in capsys.readouterr().out
    file_wh = Warehouse(home.warehouse)
    lake_wh = Warehouse(home.warehouse, catalog=catalog)
    for table in ("runs", "runs_log", "results", "ingested_files", "run_summary", "domain_scores"):
        assert _rows(lake_wh, table) == _rows(file_wh, table), table
    # The ledger came along: nothing is loaded twice, and new parts still load.
    assert ingest(home, catalog=catalog).files_loaded == 0
    write_part(home.lake, "results", "B", 2, [result_record("B", "s9", iteration=2)])
    assert ingest(home, catalog=catalog).files_loaded == 1
    assert lake_wh.sql("SELECT count(*) FROM results").frame.item() == 11
    # A catalog that holds a warehouse is not overwritten.
    assert main(["--home", str(home.home), *target, str(catalog.data_path)]) == 2
    err = capsys.readouterr().err
    assert "already holds a warehouse" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "value",
    [
        "mysql:host=x",
        "postgres:",
        "postgres:just words",
        "postgres:host='unbalanced",
        "postgresql://u:p@host:notaport/db",
    ],
)
def test_bad_catalog_string_is_one_line_exit_2(
    value: str, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--home", str(home.home), "sql", "SELECT 1", "--catalog", value,
                 "--catalog-data", str(home.home / "data")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "--catalog" in err, err


def test_unreachable_catalog_exits_3_and_hides_the_password(
    home: Paths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALHOUSE_CATALOG", "postgres:host=127.0.0.1 port=1 dbname=x "
                       "user=u password=hunter2secret connect_timeout=2")  # fmt: skip
    monkeypatch.setenv("EVALHOUSE_CATALOG_DATA", str(home.home / "data"))
    home.home.mkdir(parents=True)
    for args in (["sql", "SELECT 1"], ["ingest"], ["check", "r1", "--min", "accuracy=70"]):
        code = main(["--home", str(home.home), *args])
        captured = capsys.readouterr()
        assert code == 3, captured.err  # an outage, not a mistake: CI tells them apart
        assert captured.err.startswith("Catalog unavailable: ")
        assert "hunter2secret" not in captured.err + captured.out
        assert len(captured.err.strip().splitlines()) == 1, captured.err
        assert "password=***" in captured.err
    close_readers()


def test_catalog_label_and_repr_mask_the_password(tmp_path: Path) -> None:
    cat = parse_catalog("postgres:host=h password='s3cr et' dbname=d", tmp_path, where="x")
    assert "s3cr" not in cat.label and "s3cr" not in repr(cat)
    uri = parse_catalog("postgres:postgresql://me:pa55word@h/db", tmp_path, where="x")
    assert "pa55word" not in uri.label and "pa55word" not in repr(uri)


def test_sql_and_check_commands_on_a_catalog(
    catalog: Catalog, home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    write_part(home.lake, "runs", "R", 0, [run_record("R", T0)])
    rows = [result_record("R", f"s{i}", accuracy=80.0 + i) for i in range(3)]
    write_part(home.lake, "results", "R", 1, rows)
    flags = ["--catalog", f"postgres:{catalog.conninfo}", "--catalog-data", str(catalog.data_path)]
    assert main(["--home", str(home.home), *flags, "ingest"]) == 0
    capsys.readouterr()
    assert main(["--home", str(home.home), "sql", "SELECT count(*) AS n FROM results",
                 "--format", "csv", *flags]) == 0  # fmt: skip
    assert capsys.readouterr().out.split() == ["n", "3"]
    assert main(["--home", str(home.home), *flags, "check", "R", "--min", "accuracy=80"]) == 0
    assert main(["--home", str(home.home), *flags, "check", "R", "--min", "accuracy=90"]) == 1
    assert not home.warehouse.exists()  # the catalog was used, not a file
