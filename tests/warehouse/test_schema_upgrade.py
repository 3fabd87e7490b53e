"""A warehouse made by an older release, with data in it, is brought to this release's
schema by the next ingest: a DuckLake catalog in place (rows kept, from every lake), a
file rebuilt from its lake; and a warehouse of a newer release is refused in one line.

The older release is simulated on a real warehouse: one view of this release dropped (the
previous release had no ``retrieval_scores``), one view changed, one column dropped and
the recorded fingerprint replaced, exactly the differences an upgrade has to repair."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from engine.lake import write_part
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from ingest import ingest
from tests.conftest import Store
from tests.factories import T0, result_record, run_record
from warehouse import catalog as lakecat
from warehouse.catalog import Catalog
from warehouse.db import write_connection
from warehouse.schema import ddl_sha256
from warehouse.upgrade import SchemaTooNew

COUNTS = (
    "SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM runs), "
    "(SELECT count(*) FROM ingested_files)"
)


def _fill(home: Paths, prefix: str, runs: int = 3, samples: int = 12) -> None:
    for r in range(runs):
        run_id = f"{prefix}{r}"
        write_part(home.lake, "runs", run_id, 0, [run_record(run_id, T0)])
        rows = [result_record(run_id, f"s{i}", accuracy=float(i)) for i in range(samples)]
        write_part(home.lake, "results", run_id, 1, rows)


@contextmanager
def _writer(store: Store) -> Iterator[duckdb.DuckDBPyConnection]:
    if store.catalog is None:
        with write_connection(store.home.warehouse) as con:
            yield con
    else:
        with lakecat.write_connection(store.catalog) as (con, _guard):
            yield con


def _age(con: duckdb.DuckDBPyConnection) -> None:
    """Make the warehouse look like one of the previous release."""
    con.execute("DROP VIEW retrieval_scores")
    con.execute("CREATE OR REPLACE VIEW run_summary AS SELECT 'old' AS release")
    con.execute("ALTER TABLE results DROP COLUMN cost_usd")
    con.execute("UPDATE schema_version SET ddl_sha256 = 'previous-release'")


def _state(con: duckdb.DuckDBPyConnection) -> tuple[object, ...]:
    row = con.execute(COUNTS).fetchone()
    assert row is not None
    return tuple(row)


def test_an_older_warehouse_with_data_is_upgraded_by_ingest(store: Store) -> None:
    _fill(store.home, "a")
    store.ingest()
    with _writer(store) as con:
        before = _state(con)
        _age(con)
    assert before == (36, 3, 6)

    _fill(store.home, "b", runs=1)  # new parts arrive with the upgrade
    report = store.ingest()
    if store.catalog is None:
        assert report.rebuilt and report.files_loaded == 8  # rebuilt from its lake
    else:
        assert not report.rebuilt and report.files_loaded == 2  # only the new parts
        assert report.upgraded is not None and "results.cost_usd" in report.upgraded
        assert "upgraded the warehouse schema in place" in report.headline()
    with _writer(store) as con:
        assert _state(con) == (48, 4, 8)
        assert con.execute("SELECT ddl_sha256 FROM schema_version").fetchall() == [(ddl_sha256(),)]
        views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
        assert {"retrieval_scores", "run_summary"} <= views
    summary = store.warehouse.sql("SELECT * FROM run_summary").frame
    assert summary.height == 4 and "samples" in summary.columns
    # Idempotent: the next ingest finds the schema current and changes nothing.
    again = store.ingest()
    assert again.files_loaded == 0 and again.upgraded is None and not again.rebuilt


def test_upgrade_keeps_the_rows_of_other_lakes(catalog: Catalog, tmp_path: Path) -> None:
    """Why a catalog is not rebuilt: its rows come from many machines' lakes."""
    mine, theirs = resolve_paths(tmp_path / "mine"), resolve_paths(tmp_path / "theirs")
    _fill(mine, "m")
    _fill(theirs, "t", runs=2)
    ingest(mine, catalog=catalog)
    ingest(theirs, catalog=catalog)
    with lakecat.write_connection(catalog) as (con, _guard):
        assert _state(con) == (60, 5, 10)
        _age(con)
    ingest(mine, catalog=catalog)
    with lakecat.write_connection(catalog) as (con, _guard):
        assert _state(con) == (60, 5, 10)
        runs = con.execute("SELECT count(*) FROM run_summary WHERE run_id LIKE 't%'").fetchone()
        assert runs == (2,)


def test_rebuild_of_a_catalog_drops_without_cascade(catalog: Catalog, home: Paths) -> None:
    _fill(home, "r")
    ingest(home, catalog=catalog)
    report = ingest(home, catalog=catalog, rebuild=True)
    assert report.rebuilt and report.files_loaded == 6
    with lakecat.write_connection(catalog) as (con, _guard):
        assert _state(con) == (36, 3, 6)


def test_a_warehouse_of_a_newer_release_is_refused_in_one_line(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(store.home, "n", runs=1)
    store.ingest()
    with _writer(store) as con:
        con.execute("ALTER TABLE results ADD COLUMN from_a_newer_release VARCHAR")
        con.execute("UPDATE schema_version SET ddl_sha256 = 'newer-release'")
    if store.catalog is None:
        # A file is the lake's copy: whatever made it, it is rebuilt from the lake.
        assert store.ingest().rebuilt
        return
    args = ["--home", str(store.home.home), "--catalog", f"postgres:{store.catalog.conninfo}"]
    args += ["--catalog-data", str(store.catalog.data_path), "ingest"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "column results.from_a_newer_release" in err and "upgrade evalhouse" in err


def test_a_view_of_a_newer_release_is_refused(catalog: Catalog, home: Paths) -> None:
    _fill(home, "v", runs=1)
    ingest(home, catalog=catalog)
    with lakecat.write_connection(catalog) as (con, _guard):
        con.execute("CREATE VIEW from_a_newer_release AS SELECT 1 AS x")
        con.execute("UPDATE schema_version SET ddl_sha256 = 'newer-release'")
    with pytest.raises(SchemaTooNew, match="view from_a_newer_release"):
        ingest(home, catalog=catalog)
