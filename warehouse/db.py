"""The connection policy: every connection to the warehouse file is opened here.

DuckDB (measured here): a process holding the file read-write blocks every other
process, readers included; read-only holders block a writer. So readers use
short-lived read-only connections with retry and backoff, and the single writer
(ingest) retries for the lock and then gives up with a message that says the records
are safe in the lake.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa


class WarehouseError(Exception):
    """A warehouse problem a person can act on; ``title`` is a short headline."""

    title = "Warehouse error"


class WarehouseMissing(WarehouseError):
    """The warehouse file does not exist yet."""

    title = "No warehouse yet"


class WarehouseBusy(WarehouseError):
    """Another process held the lock for longer than we were willing to wait."""

    title = "Warehouse busy"


class QueryError(WarehouseError):
    """A query failed: bad SQL, a refused statement, or the time limit."""

    title = "Query failed"


_LOCK_MARKERS = ("lock", "Conflicting lock", "being used by another")

# Settings of every read connection. External access off means no read_parquet/read_csv
# of arbitrary paths, no httpfs, no ATTACH of other files, no COPY TO; locking the
# configuration means a query cannot SET it back on.
_SAFE_READ_CONFIG: dict[str, str | bool | int] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "threads": 2,
    "memory_limit": "1GB",
    # Locked at connect, not by a later SET: DuckDB shares one database instance between
    # the connections of a process, and a second SET on a locked instance fails.
    "lock_configuration": True,
}


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, duckdb.IOException) and any(m in text for m in _LOCK_MARKERS)


def _backoff(attempt: int, base: float = 0.02, cap: float = 1.0) -> float:
    return float(min(cap, base * 2**attempt) * (0.5 + random.random() / 2))


@contextmanager
def read_connection(path: Path, *, wait_s: float = 30.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only, sandboxed connection; retries while a writer holds the lock."""
    if not path.exists():
        raise WarehouseMissing(
            f"{path} does not exist yet. Create it with `evalhouse demo` (demo data) or "
            "`evalhouse run ...` followed by `evalhouse ingest`."
        )
    deadline = time.monotonic() + wait_s
    attempt = 0
    while True:
        try:
            con = duckdb.connect(str(path), read_only=True, config=dict(_SAFE_READ_CONFIG))
            break
        except duckdb.Error as exc:
            if not _is_lock_error(exc):
                raise WarehouseError(f"cannot open {path}: {exc}") from exc
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"{path} stayed locked by a writer (ingest) for {wait_s:.0f} s; try again."
                ) from exc
            time.sleep(_backoff(attempt))
            attempt += 1
    try:
        yield con
    finally:
        con.close()


@contextmanager
def write_connection(path: Path, *, wait_s: float = 30.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """The read-write connection of ingest; gives up with ``WarehouseBusy`` after ``wait_s``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    attempt = 0
    while True:
        try:
            con = duckdb.connect(
                str(path),
                config={"threads": 2, "memory_limit": "1GB", "preserve_insertion_order": False},
            )
            break
        except duckdb.Error as exc:
            if not _is_lock_error(exc):
                raise WarehouseError(f"cannot open {path} for writing: {exc}") from exc
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"{path} is in use by another process (a dashboard or query) and stayed "
                    f"locked for {wait_s:.0f} s. Nothing is lost: the records are safe in the "
                    "lake; run `evalhouse ingest` again later."
                ) from exc
            time.sleep(_backoff(attempt, base=0.05))
            attempt += 1
    try:
        yield con
    finally:
        con.close()


@dataclass(frozen=True)
class QueryResult:
    """Rows of a query, and whether the row cap cut them."""

    frame: pl.DataFrame
    truncated: bool
    elapsed_ms: float


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: Mapping[str, Any] | None = None,
    *,
    time_limit_s: float = 30.0,
    row_cap: int | None = None,
) -> QueryResult:
    """Run one statement with a time limit (interrupt) and an optional row cap."""
    timer = threading.Timer(time_limit_s, con.interrupt)
    timer.daemon = True
    started = time.perf_counter()
    timer.start()
    try:
        rel = con.execute(sql, dict(params) if params else None)
        if rel.description is None:
            frame = pl.DataFrame()
            truncated = False
        elif row_cap is None:
            frame = rel.pl()
            truncated = False
        else:
            arrow = rel.to_arrow_reader(min(row_cap + 1, 100_000))
            batches = []
            rows = 0
            for batch in arrow:
                batches.append(batch)
                rows += batch.num_rows
                if rows > row_cap:
                    break
            table = (
                pa.Table.from_batches(batches, schema=arrow.schema)
                if batches
                else arrow.schema.empty_table()
            )
            truncated = table.num_rows > row_cap
            frame = pl.from_arrow(table.slice(0, row_cap))  # type: ignore[assignment]
    except duckdb.InterruptException as exc:
        raise QueryError(f"the query ran longer than {time_limit_s:.0f} s and was stopped") from exc
    except duckdb.Error as exc:
        raise QueryError(str(exc).strip()) from exc
    finally:
        timer.cancel()
    return QueryResult(frame, truncated, (time.perf_counter() - started) * 1000)
