"""``evalhouse migrate --to CATALOG``: copy a warehouse file into an empty DuckLake catalog.

Every table is copied as it is, the ingest ledger included, so an ingest on the catalog
afterwards loads only the lake parts the file had not loaded yet. The copy is one
transaction: a failure leaves the catalog as it was.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from warehouse.catalog import Catalog, CatalogError, CommitGuard
from warehouse.db import WarehouseMissing, one_line
from warehouse.loader import create_schema, drop_everything, open_writer, schema_is_current
from warehouse.schema import quote_ident, table_columns

SOURCE = "evalhouse_file"
"""The name the warehouse file is attached under during the copy."""

COPIED_TABLES = (*table_columns(), "ingested_files")
"""The tables copied (views are created anew; ``schema_version`` is written by
``create_schema``)."""


def migrate(path: Path, catalog: Catalog) -> dict[str, int]:
    """Copy the warehouse file at ``path`` into ``catalog``; returns rows per table.

    Refused (``CatalogError``) when the catalog already holds loaded parts, or when the
    file's schema is not the current one (``evalhouse ingest`` brings it up to date)."""
    if not path.is_file():
        raise WarehouseMissing(f"{path} does not exist: nothing to migrate")
    with open_writer(path, catalog=catalog) as writer:
        con, guard = writer.con, writer.guard
        assert guard is not None
        try:
            con.execute(f"ATTACH {_literal(str(path))} AS {SOURCE} (READ_ONLY)")
        except duckdb.Error as exc:
            raise CatalogError(f"cannot read {path}: {one_line(str(exc))}") from None
        try:
            return _copy_all(con, guard, path, catalog)
        finally:
            # The writer instance is kept for the process: leave nothing attached to it.
            con.execute(f"DETACH {SOURCE}")


def _copy_all(
    con: duckdb.DuckDBPyConnection, guard: CommitGuard, path: Path, catalog: Catalog
) -> dict[str, int]:
    """Check both sides, then copy every table in one transaction under the commit lock."""
    if not _source_current(con):
        raise CatalogError(
            f"{path} was made by an older evalhouse; run `evalhouse ingest` on it first"
        )
    with guard.lock():
        if schema_is_current(con):
            row = con.execute("SELECT count(*) FROM ingested_files").fetchone()
            if row and row[0]:
                raise CatalogError(
                    f"{catalog.label} already holds a warehouse ({row[0]} lake parts "
                    "loaded); migrate copies into an empty catalog only"
                )
        con.execute("BEGIN TRANSACTION")
        try:
            drop_everything(con)
            create_schema(con)
            counts = {table: _copy(con, table) for table in COPIED_TABLES}
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return counts


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _source_current(con: duckdb.DuckDBPyConnection) -> bool:
    con.execute(f"USE {SOURCE}")
    try:
        return schema_is_current(con)
    finally:
        con.execute("USE lake")


def _copy(con: duckdb.DuckDBPyConnection, table: str) -> int:
    name = quote_ident(table)
    con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {SOURCE}.main.{name}")
    row = con.execute(f"SELECT count(*) FROM {name}").fetchone()
    return int(row[0]) if row else 0
