"""Writing lake parts into the warehouse: the statements ingest runs under the write lock.

DuckDB reads the Parquet itself (``read_parquet`` + ``INSERT ... BY NAME``), so no row
passes through Python. Columns missing from older parts load as NULL.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from engine.clock import utcnow
from warehouse import catalog as lakecat
from warehouse.catalog import Catalog, CommitConflict, CommitGuard
from warehouse.db import (
    WarehouseBusy,
    is_storage_failure,
    one_line,
    write_connection,
)
from warehouse.errors import LOCK_WAIT_S
from warehouse.schema import RUNS_LOG, ddl, ddl_sha256, quote_ident
from warehouse.upgrade import (
    UpgradeReport,
    create_views,
    drop_views,
    upgrade_in_place,
    write_version,
)


@dataclass(frozen=True)
class PartRef:
    """A lake part to load: absolute path, path relative to the lake, table and keys."""

    path: Path
    relative: str
    table: str
    run_id: str
    iteration: int
    size_bytes: int


def schema_is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the warehouse was created by this schema (else it must be rebuilt)."""
    try:
        rows = con.execute("SELECT ddl_sha256 FROM schema_version").fetchall()
    except duckdb.CatalogException:
        return False
    return rows == [(ddl_sha256(),)]


def drop_everything(con: duckdb.DuckDBPyConnection) -> None:
    """Drop every view and table (a rebuild starts from the lake). No ``CASCADE``: DuckLake
    refuses it, and nothing here depends on a table but the views, dropped first."""
    drop_views(con)
    for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
        "AND database_name = current_database()"
    ).fetchall():
        con.execute(f"DROP TABLE IF EXISTS {quote_ident(name)}")


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create tables, ledger and views, and record the schema version."""
    con.execute(ddl())
    create_views(con)
    write_version(con)


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


def refresh_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> None:
    """Set the ``runs`` rows of ``run_ids`` to the latest state of each in ``runs_log``, with
    the latest name people gave it (view ``run_labels_current``; ``runs_log`` keeps the
    name the run was started with).

    Only the runs a batch touched: on a DuckLake catalog a delete of other runs' rows would
    make concurrent ingesters of different runs conflict for nothing."""
    ids = {"ids": list(run_ids)}
    con.execute("DELETE FROM runs WHERE run_id IN (SELECT unnest($ids))", ids)
    con.execute(
        "INSERT INTO runs BY NAME SELECT log.* REPLACE (coalesce(lab.name, log.name) AS name) "
        f"FROM (SELECT * FROM {RUNS_LOG} WHERE run_id IN (SELECT unnest($ids)) "
        "QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY updated_at DESC) = 1) AS log "
        "LEFT JOIN run_labels_current AS lab USING (run_id)",
        ids,
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
            "at": utcnow(),
        },
    )


@dataclass
class BatchResult:
    """Rows added per table, parts loaded, and parts skipped as corrupt (path, reason)."""

    rows: dict[str, int]
    loaded: int
    corrupt: list[tuple[str, str]]


COMMIT_TRIES = 60
"""Commits of one batch tried at most on a DuckLake catalog (each retry leaves out what
other ingesters loaded meanwhile, so some ingester makes progress every round)."""


class WarehouseWriter:
    """The operations of ingest on a write connection: the one writer of a warehouse file,
    or one of several writers of a DuckLake catalog (``guard`` set)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, guard: CommitGuard | None = None) -> None:
        self.con = con
        self.guard = guard
        self.upgraded: UpgradeReport | None = None
        """What ``ensure_schema`` changed when it upgraded a catalog in place."""

    def ensure_schema(self, *, rebuild: bool) -> bool:
        """Create the schema, or bring an outdated one up to date; drop and recreate it
        when asked. A file is rebuilt from its lake; a catalog (the lakes of many
        machines) is upgraded in place (``warehouse.upgrade``), its rows kept.

        Returns whether existing tables were dropped (the lake is loaded again).
        """
        if not rebuild and schema_is_current(self.con):
            return False
        if self.guard is None:
            return self._recreate_schema()
        # Several ingesters may find an empty or outdated catalog at once: one creates or
        # upgrades it, the others find it current once they hold the lock.
        with self.guard.lock():
            if not rebuild and schema_is_current(self.con):
                return False
            if rebuild or not self._has_tables():
                return self._recreate_schema()
            self.con.execute("BEGIN TRANSACTION")
            try:
                self.upgraded = upgrade_in_place(self.con)
                self.con.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    self.con.execute("ROLLBACK")
                raise
            return False

    def _has_tables(self) -> bool:
        row = self.con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' "
            "AND database_name = current_database()"
        ).fetchone()
        return bool(row and row[0])

    def _recreate_schema(self) -> bool:
        had_tables = self._has_tables()
        self.con.execute("BEGIN TRANSACTION")
        try:
            drop_everything(self.con)
            create_schema(self.con)
            self.con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                self.con.execute("ROLLBACK")
            raise
        return had_tables

    def loaded_paths(self) -> set[str]:
        """Relative paths already in the ledger."""
        return loaded_paths(self.con)

    def load_batch(self, batch: Sequence[PartRef]) -> BatchResult:
        """Load parts in one transaction. If that fails, load each (run, iteration)
        partition in one transaction of its good parts, skipping and recording bad ones;
        a partition's tables therefore always become visible together."""
        try:
            rows, loaded = self._commit(batch, [])
            return BatchResult(rows, loaded, [])
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
    ) -> tuple[dict[str, int], int]:
        """Insert ``parts`` and record them (and ``corrupt``) in the ledger, all in one
        transaction; rolls back and re-raises on a DuckDB error. Returns the rows added
        per table and the number of parts loaded (on a catalog, parts another ingester
        loaded first are left out). A commit that conflicts with another ingester's is
        retried on the newer snapshot."""
        if self.guard is None:
            return self._commit_once(parts, corrupt)
        for attempt in range(COMMIT_TRIES):
            try:
                return self._commit_once(parts, corrupt)
            except CommitConflict:
                pass
            except duckdb.Error as exc:
                if not lakecat.is_conflict(exc):
                    raise
            time.sleep(min(1.0, 0.02 * 1.5**attempt) * (0.5 + random.random()))
        raise WarehouseBusy(
            f"other ingesters kept committing the same runs; gave up after {COMMIT_TRIES} "
            "tries. Nothing is lost: run `evalhouse ingest` again."
        )

    def _commit_once(
        self, parts: Sequence[PartRef], corrupt: Sequence[tuple[PartRef, str]]
    ) -> tuple[dict[str, int], int]:
        self.con.execute("BEGIN TRANSACTION")
        try:
            baseline: list[tuple[object, ...]] = []
            if self.guard is not None:
                # This transaction's snapshot: leave out what is loaded by now, and note
                # how many parts of these runs the ledger holds, to compare at commit.
                done = self._in_ledger(
                    [p.relative for p in parts] + [r.relative for r, _ in corrupt]
                )
                parts = [p for p in parts if p.relative not in done]
                corrupt = [(r, why) for r, why in corrupt if r.relative not in done]
                baseline = self.con.execute(_RUN_PARTS, _run_ids(parts, corrupt)).fetchall()
            by_table: dict[str, list[PartRef]] = {}
            for ref in parts:
                by_table.setdefault(ref.table, []).append(ref)
            rows = {table: insert_parts(self.con, table, refs) for table, refs in by_table.items()}
            record_parts(self.con, parts, "loaded", None)
            for ref, reason in corrupt:
                record_parts(self.con, [ref], "corrupt", reason)
            touched = {r.run_id for t in ("runs", "run_labels") for r in by_table.get(t, [])}
            if touched:
                refresh_runs(self.con, sorted(touched))
            if self.guard is None:
                self.con.execute("COMMIT")
            else:
                with self.guard.lock():
                    if self.guard.fresh(_RUN_PARTS, _run_ids(parts, corrupt)) != baseline:
                        raise CommitConflict
                    self.con.execute("COMMIT")
        except BaseException as exc:  # a lock not taken (WarehouseBusy) rolls back too
            if not is_storage_failure(exc):  # a full disk may not even roll back
                with contextlib.suppress(duckdb.Error):
                    self.con.execute("ROLLBACK")
            raise
        return rows, len(parts)

    def _in_ledger(self, relatives: list[str]) -> set[str]:
        found = self.con.execute(
            "SELECT path FROM ingested_files WHERE path IN (SELECT unnest($paths))",
            {"paths": relatives},
        ).fetchall()
        return {row[0] for row in found}

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
            rows, loaded = self._commit(parts, [])
        except duckdb.Error:
            problems = [(ref, self._problem(ref)) for ref in parts]
            corrupt = [(ref, reason) for ref, reason in problems if reason is not None]
            good = [ref for ref, reason in problems if reason is None]
            rows, loaded = self._commit(good, corrupt)
            result.corrupt += [(str(ref.path), reason) for ref, reason in corrupt]
        result.loaded += loaded
        for table, n in rows.items():
            result.rows[table] = result.rows.get(table, 0) + n

    def checkpoint(self) -> None:
        """Fold the WAL into the file so read-only openers never need to replay it (a
        catalog has no WAL: its snapshots are committed in PostgreSQL)."""
        if self.guard is None:
            self.con.execute("CHECKPOINT")


_RUN_PARTS = (
    "SELECT run_id, count(*) FROM ingested_files WHERE run_id IN (SELECT unnest($ids)) "
    "GROUP BY run_id ORDER BY run_id"
)
"""Ledger parts per run: equal at a transaction's start and at its commit means no other
ingester committed parts of these runs in between."""


def _run_ids(
    parts: Sequence[PartRef], corrupt: Sequence[tuple[PartRef, str]]
) -> dict[str, list[str]]:
    return {"ids": sorted({p.run_id for p in parts} | {r.run_id for r, _ in corrupt})}


@contextmanager
def open_writer(
    path: Path, *, wait_s: float = LOCK_WAIT_S, catalog: Catalog | None = None
) -> Iterator[WarehouseWriter]:
    """The writer over a write connection: of the file at ``path`` (retries for the lock,
    then ``WarehouseBusy``), or of ``catalog`` when one is given."""
    if catalog is not None:
        with lakecat.write_connection(catalog, wait_s=wait_s) as (con, guard):
            try:
                yield WarehouseWriter(con, guard)
            except duckdb.Error as exc:
                # A DuckDB error may quote the connection string (password included).
                raise lakecat.CatalogError(
                    f"writing the catalog {catalog.label} failed: "
                    f"{catalog.redact(one_line(str(exc)))[:400]}. Nothing is lost: the "
                    "records are safe in the lake; run `evalhouse ingest` again."
                ) from None
        return
    with write_connection(path, wait_s=wait_s) as con:
        yield WarehouseWriter(con)
