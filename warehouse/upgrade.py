"""Bringing an existing warehouse up to this release's schema in place.

A warehouse file is simply rebuilt from its lake when the schema changes (the lake is the
source of truth, and the file has one lake). A DuckLake catalog cannot be: it holds the
lakes of many machines, so dropping it would leave it empty until every machine ingested
its whole lake again. So a catalog is upgraded where it stands, in one transaction:
missing tables are created, missing columns are added with ``ALTER TABLE ... ADD COLUMN``
(older rows read NULL, as older lake parts do), every view is dropped and created anew
(no ``CASCADE``: DuckLake refuses it and tracks no dependencies between views), and the
recorded schema version is rewritten. Rows are never touched.

Columns are only ever added (DESIGN: "Columns may be added; these ones keep their names
and meaning"), so a catalog holding a column this release does not know was upgraded by a
newer release: it is refused rather than "downgraded", else two releases ingesting one
catalog would recreate each other's views on every commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import duckdb

from engine.clock import utcnow
from warehouse.errors import WarehouseError
from warehouse.schema import SCHEMA_VERSION, ddl, ddl_sha256, quote_ident, view_sql


class SchemaTooNew(WarehouseError):
    """The warehouse was made by a newer evalhouse than this one."""

    title = "Warehouse is newer than this evalhouse"


@dataclass
class UpgradeReport:
    """What an in-place upgrade changed (for the ingest headline and the tests)."""

    tables_created: list[str] = field(default_factory=list)
    columns_added: list[str] = field(default_factory=list)
    """``table.column`` of every column added."""
    views: int = 0
    """Views created anew (every view of this release)."""

    def line(self) -> str:
        """One human line."""
        parts = [f"{self.views} views recreated"]
        if self.columns_added:
            parts.insert(0, "columns added: " + ", ".join(self.columns_added))
        if self.tables_created:
            parts.insert(0, "tables created: " + ", ".join(self.tables_created))
        return "upgraded the warehouse schema in place (" + "; ".join(parts) + ")"


def current_columns(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """Every table of the current database's ``main`` schema: column name -> type."""
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main' "
        "AND table_name IN (SELECT table_name FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = 'main') "
        "ORDER BY table_name, column_index"
    ).fetchall()
    out: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        out.setdefault(str(table), {})[str(column)] = str(kind)
    return out


def _wanted() -> dict[str, dict[str, str]]:
    return _reference()[0]


@cache
def _reference() -> tuple[dict[str, dict[str, str]], frozenset[str]]:
    """Tables with column types, and view names, of this release, as DuckDB reports them:
    the schema created on an empty in-memory database (so the ledger's hand-written tables
    are included, and types compare as DuckDB spells them, not as the DDL writes them)."""
    reference = duckdb.connect(":memory:")
    try:
        reference.execute(ddl())
        create_views(reference)
        return current_columns(reference), frozenset(view_names(reference))
    finally:
        reference.close()


def view_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Views of the current database's ``main`` schema."""
    rows = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
        "AND database_name = current_database()"
    ).fetchall()
    return [str(r[0]) for r in rows]


def _refuse_newer(con: duckdb.DuckDBPyConnection, have: dict[str, dict[str, str]]) -> None:
    """``SchemaTooNew`` when the warehouse holds columns, views or a schema version this
    release does not know (it was upgraded by a newer release: views, like columns, keep
    their names once published)."""
    wanted, views = _reference()
    unknown = [
        f"column {table}.{column}"
        for table, columns in have.items()
        if table in wanted
        for column in columns
        if column not in wanted[table]
    ]
    unknown += [f"view {name}" for name in view_names(con) if name not in views]
    try:
        row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    except duckdb.CatalogException:
        row = None
    version = int(row[0]) if row and row[0] is not None else 0
    if unknown or version > SCHEMA_VERSION:
        what = unknown[0] if unknown else f"schema version {version}"
        raise SchemaTooNew(
            f"the warehouse was upgraded by a newer evalhouse (it has {what}, unknown to "
            "this one); upgrade evalhouse on this machine, then ingest again"
        )


def upgrade_in_place(con: duckdb.DuckDBPyConnection) -> UpgradeReport:
    """Bring the warehouse of ``con`` (current database) to this release's schema without
    touching a row; the caller holds the transaction (and, on a catalog, the commit lock).

    Raises ``SchemaTooNew`` for a warehouse of a newer release, ``WarehouseError`` for a
    column whose type changed in a way DuckDB cannot convert in place."""
    have = current_columns(con)
    _refuse_newer(con, have)
    report = UpgradeReport()
    report.tables_created = sorted(t for t in _wanted() if t not in have)
    con.execute(ddl())  # CREATE TABLE IF NOT EXISTS: creates only the missing tables
    for table, columns in _wanted().items():
        present = have.get(table)
        if present is None:
            continue
        for column, kind in columns.items():
            if column not in present:
                # Added nullable whatever the model says: the rows already there have none.
                con.execute(
                    f"ALTER TABLE {quote_ident(table)} ADD COLUMN {quote_ident(column)} {kind}"
                )
                report.columns_added.append(f"{table}.{column}")
            elif present[column] != kind:
                _change_type(con, table, column, present[column], kind)
    report.views = recreate_views(con)
    write_version(con)
    return report


def _change_type(
    con: duckdb.DuckDBPyConnection, table: str, column: str, old: str, new: str
) -> None:
    """Widen a column's type in place (DuckLake allows promotions such as INTEGER to
    BIGINT); anything else is a change no release makes, refused in one line."""
    try:
        con.execute(
            f"ALTER TABLE {quote_ident(table)} ALTER COLUMN {quote_ident(column)} "
            f"SET DATA TYPE {new}"
        )
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise WarehouseError(
            f"column {table}.{column} is {old} in the warehouse and {new} in this release, "
            f"and cannot be converted in place ({first})"
        ) from None


def drop_views(con: duckdb.DuckDBPyConnection) -> None:
    """Drop every view of the current database's ``main`` schema, without ``CASCADE``.

    Neither DuckDB nor DuckLake keeps dependencies between views (DuckLake refuses
    ``CASCADE`` outright), so the order does not matter; views of older releases that this
    one no longer has go too."""
    for name in view_names(con):
        con.execute(f"DROP VIEW IF EXISTS {quote_ident(name)}")


def create_views(con: duckdb.DuckDBPyConnection) -> int:
    """(Re)create every view from ``sql/views`` in name order; returns how many."""
    files = view_sql()
    for name, text in files:
        try:
            con.execute(text)
        except duckdb.Error as exc:
            raise WarehouseError(f"view file warehouse/sql/views/{name} failed: {exc}") from exc
    return len(files)


def recreate_views(con: duckdb.DuckDBPyConnection) -> int:
    """Drop every view and create this release's views; returns how many were created."""
    drop_views(con)
    return create_views(con)


def write_version(con: duckdb.DuckDBPyConnection) -> None:
    """Record this release's schema version and fingerprint (one row)."""
    con.execute("DELETE FROM schema_version")
    con.execute(
        "INSERT INTO schema_version VALUES ($v, $sha, $at)",
        {"v": SCHEMA_VERSION, "sha": ddl_sha256(), "at": utcnow()},
    )
