"""Writing lake parts into the warehouse: the statements ingest runs under the write lock.

DuckDB reads the Parquet itself (``read_parquet`` + ``INSERT ... BY NAME``), so no row
passes through Python. Columns missing from older parts load as NULL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from warehouse.db import WarehouseError, is_storage_failure, write_connection
from warehouse.schema import RUNS_LOG, SCHEMA_VERSION, ddl, ddl_sha256, quote_ident, view_sql


@dataclass(frozen=True)
class PartRef:
    """A lake part to load: absolute path, path relative to the lake, table and keys."""

    path: Path
    relative: str
    table: str
    run_id: str
    iteration: int
    size_bytes: int


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def schema_is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the warehouse was created by this schema (else it must be rebuilt)."""
    try:
        rows = con.execute("SELECT ddl_sha256 FROM schema_version").fetchall()
    except duckdb.CatalogException:
        return False
    return rows == [(ddl_sha256(),)]


def drop_everything(con: duckdb.DuckDBPyConnection) -> None:
    """Drop every view and table (a rebuild starts from the lake)."""
    for (name,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
    ).fetchall():
        con.execute(f"DROP VIEW IF EXISTS {quote_ident(name)} CASCADE")
    for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
    ).fetchall():
        con.execute(f"DROP TABLE IF EXISTS {quote_ident(name)} CASCADE")


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create tables, ledger and views, and record the schema version."""
    con.execute(ddl())
    create_views(con)
    con.execute("DELETE FROM schema_version")
    con.execute(
        "INSERT INTO schema_version VALUES ($v, $sha, $at)",
        {"v": SCHEMA_VERSION, "sha": ddl_sha256(), "at": _now()},
    )


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create every view from ``sql/views`` in name order."""
    for name, text in view_sql():
        try:
            con.execute(text)
        except duckdb.Error as exc:
            raise WarehouseError(f"view file warehouse/sql/views/{name} failed: {exc}") from exc


def loaded_paths(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Relative paths of every part already in the ledger (loaded or corrupt)."""
    return {row[0] for row in con.execute("SELECT path FROM ingested_files").fetchall()}


def insert_parts(con: duckdb.DuckDBPyConnection, table: str, parts: Sequence[PartRef]) -> int:
    """Append the rows of ``parts`` to ``table``'s warehouse table; returns rows added."""
    target = RUNS_LOG if table == "runs" else table
    before = con.execute(f"SELECT count(*) FROM {quote_ident(target)}").fetchone()
    con.execute(
        f"INSERT INTO {quote_ident(target)} BY NAME "
        "SELECT * FROM read_parquet($files, union_by_name = true, hive_partitioning = false)",
        {"files": [str(p.path) for p in parts]},
    )
    after = con.execute(f"SELECT count(*) FROM {quote_ident(target)}").fetchone()
    assert before is not None and after is not None
    return int(after[0]) - int(before[0])


def refresh_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Rebuild ``runs`` as the latest state of each run in ``runs_log`` (small table), with
    the latest name people gave it (view ``run_labels_current``; ``runs_log`` keeps the
    name the run was started with)."""
    con.execute("DELETE FROM runs")
    con.execute(
        "INSERT INTO runs SELECT log.* REPLACE (coalesce(lab.name, log.name) AS name) "
        f"FROM (SELECT * FROM {RUNS_LOG} QUALIFY row_number() "
        "OVER (PARTITION BY run_id ORDER BY updated_at DESC) = 1) AS log "
        "LEFT JOIN run_labels_current AS lab USING (run_id)"
    )


def record_parts(
    con: duckdb.DuckDBPyConnection, parts: Sequence[PartRef], status: str, error: str | None
) -> None:
    """Add parts to the ledger."""
    if not parts:
        return
    # One statement for the whole batch: a row-by-row executemany is slow for 10^4 parts.
    con.execute(
        "INSERT INTO ingested_files SELECT unnest($paths), unnest($tables), unnest($runs), "
        "unnest($its), unnest($sizes), $status, $error, $at",
        {
            "paths": [p.relative for p in parts],
            "tables": [p.table for p in parts],
            "runs": [p.run_id for p in parts],
            "its": [p.iteration for p in parts],
            "sizes": [p.size_bytes for p in parts],
            "status": status,
            "error": error,
            "at": _now(),
        },
    )


@dataclass
class BatchResult:
    """Rows added per table, parts loaded, and parts skipped as corrupt (path, reason)."""

    rows: dict[str, int]
    loaded: int
    corrupt: list[tuple[str, str]]


class WarehouseWriter:
    """The operations of ingest on a write connection (the only writer of the file)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def ensure_schema(self, *, rebuild: bool) -> bool:
        """Create the schema; drop and recreate it when asked or when it is outdated.

        Returns whether existing tables were dropped (the lake is loaded again).
        """
        if not rebuild and schema_is_current(self.con):
            return False
        row = self.con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main'"
        ).fetchone()
        had_tables = bool(row and row[0])
        self.con.execute("BEGIN TRANSACTION")
        drop_everything(self.con)
        create_schema(self.con)
        self.con.execute("COMMIT")
        return had_tables

    def loaded_paths(self) -> set[str]:
        """Relative paths already in the ledger."""
        return loaded_paths(self.con)

    def load_batch(self, batch: Sequence[PartRef]) -> BatchResult:
        """Load parts in one transaction. If that fails, load each (run, iteration)
        partition in one transaction of its good parts, skipping and recording bad ones;
        a partition's tables therefore always become visible together."""
        try:
            return BatchResult(self._commit(batch, []), len(batch), [])
        except duckdb.Error as exc:
            if is_storage_failure(exc):
                raise  # the disk, not a part: loading part by part would mark good parts
        result = BatchResult({}, 0, [])
        partitions: dict[tuple[str, int], list[PartRef]] = {}
        for ref in batch:
            partitions.setdefault((ref.run_id, ref.iteration), []).append(ref)
        for parts in partitions.values():
            self._load_partition(parts, result)
        return result

    def _commit(
        self, parts: Sequence[PartRef], corrupt: Sequence[tuple[PartRef, str]]
    ) -> dict[str, int]:
        """Insert ``parts`` and record them (and ``corrupt``) in the ledger, all in one
        transaction; rolls back and re-raises on a DuckDB error."""
        by_table: dict[str, list[PartRef]] = {}
        for ref in parts:
            by_table.setdefault(ref.table, []).append(ref)
        self.con.execute("BEGIN TRANSACTION")
        try:
            rows = {table: insert_parts(self.con, table, refs) for table, refs in by_table.items()}
            record_parts(self.con, parts, "loaded", None)
            for ref, reason in corrupt:
                record_parts(self.con, [ref], "corrupt", reason)
            if "runs" in by_table or "run_labels" in by_table:
                refresh_runs(self.con)
            self.con.execute("COMMIT")
        except duckdb.Error as exc:
            if not is_storage_failure(exc):  # a full disk may not even roll back
                self.con.execute("ROLLBACK")
            raise
        return rows

    def _problem(self, ref: PartRef) -> str | None:
        """Why ``ref`` cannot load (its first error line), or None; changes nothing."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            insert_parts(self.con, ref.table, [ref])
        except duckdb.Error as exc:
            if is_storage_failure(exc):
                raise  # the disk, not this part
            return str(exc).strip().splitlines()[0][:300]
        finally:
            with contextlib.suppress(duckdb.Error):
                self.con.execute("ROLLBACK")
        return None

    def _load_partition(self, parts: Sequence[PartRef], result: BatchResult) -> None:
        try:
            rows = self._commit(parts, [])
            loaded = list(parts)
        except duckdb.Error:
            problems = [(ref, self._problem(ref)) for ref in parts]
            corrupt = [(ref, reason) for ref, reason in problems if reason is not None]
            loaded = [ref for ref, reason in problems if reason is None]
            rows = self._commit(loaded, corrupt)
            result.corrupt += [(str(ref.path), reason) for ref, reason in corrupt]
        result.loaded += len(loaded)
        for table, n in rows.items():
            result.rows[table] = result.rows.get(table, 0) + n

    def checkpoint(self) -> None:
        """Fold the WAL into the file so read-only openers never need to replay it."""
        self.con.execute("CHECKPOINT")


@contextmanager
def open_writer(path: Path, *, wait_s: float = 30.0) -> Iterator[WarehouseWriter]:
    """The writer over a write connection (retries for the lock, then ``WarehouseBusy``)."""
    with write_connection(path, wait_s=wait_s) as con:
        yield WarehouseWriter(con)
