"""The warehouse schema, generated from the engine's record models.

Nothing here is written by hand per column: ``ddl()`` turns every model in
``engine.models.LAKE_TABLES`` into a CREATE TABLE, so the lake and the warehouse can
not drift apart. The DDL's sha256 is the schema version: when the models change, the
next ingest rebuilds a warehouse file from its lake (the source of truth) and upgrades a
DuckLake catalog in place (``warehouse.upgrade``).
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources

import polars as pl

from engine.columns import Column, columns
from engine.models import LAKE_TABLES, RunRecord

SCHEMA_VERSION = 1
"""Bumped by hand only when the warehouse's own tables (ledger, views) change meaning."""

RUNS_LOG = "runs_log"
"""Every run state ever written; ``runs`` keeps the latest per run_id."""


def quote_ident(name: str) -> str:
    """Quote an SQL identifier (the one place identifiers are escaped)."""
    return '"' + name.replace('"', '""') + '"'


def _create_table(table: str, cols: list[Column]) -> str:
    def line(c: Column) -> str:
        not_null = " NOT NULL" if c.required and not c.nullable else ""
        return f"    {quote_ident(c.name)} {c.duckdb_type}{not_null}"

    body = ",\n".join(line(c) for c in cols)
    return f"CREATE TABLE IF NOT EXISTS {quote_ident(table)} (\n{body}\n);"


# The schema is the code's: computed once per process (every ingest checks it, and reading
# the models' type hints costs about 15 ms a time).


@functools.cache
def _table_columns() -> tuple[tuple[str, tuple[Column, ...]], ...]:
    tables = [(table, tuple(columns(model))) for table, model in LAKE_TABLES.items()]
    return (*tables, (RUNS_LOG, tuple(columns(RunRecord))))


def table_columns() -> dict[str, list[Column]]:
    """Columns of every record table of the warehouse, ``runs_log`` included."""
    return {table: list(cols) for table, cols in _table_columns()}


@functools.cache
def ddl() -> str:
    """The complete DDL of the warehouse tables (views are in ``sql/views``)."""
    parts = [_create_table(t, cols) for t, cols in table_columns().items()]
    parts.append(_sql_text("ledger.sql").strip())
    return "\n\n".join(parts) + "\n"


@functools.cache
def ddl_sha256() -> str:
    """Fingerprint of the DDL and the views; a change means the warehouse is rebuilt."""
    digest = hashlib.sha256(ddl().encode())
    digest.update(str(SCHEMA_VERSION).encode())
    for _name, text in view_sql():
        digest.update(text.encode())
    return digest.hexdigest()


def _sql_text(relative: str) -> str:
    return (resources.files("warehouse") / "sql" / relative).read_text(encoding="utf-8")


def view_sql() -> list[tuple[str, str]]:
    """(file name, SQL) of every view file, in name order."""
    return list(_view_sql())


@functools.cache
def _view_sql() -> tuple[tuple[str, str], ...]:
    folder = resources.files("warehouse") / "sql" / "views"
    files = sorted((p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return tuple((p.name, p.read_text(encoding="utf-8")) for p in files)


def polars_schema(table: str) -> dict[str, pl.DataType]:
    """The polars schema of a record table, for empty frames and checks."""
    mapping: dict[str, pl.DataType] = {
        "VARCHAR": pl.String(),
        "BIGINT": pl.Int64(),
        "DOUBLE": pl.Float64(),
        "BOOLEAN": pl.Boolean(),
        "TIMESTAMP": pl.Datetime("us"),
        "VARCHAR[]": pl.List(pl.String()),
    }
    return {c.name: mapping[c.duckdb_type] for c in table_columns()[table]}
