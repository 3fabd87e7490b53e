"""The connection policy: every connection to the warehouse file is opened here.

DuckDB (measured here): a process holding the file read-write blocks every other
process, readers included; read-only holders block a writer. So readers use
short-lived read-only connections with retry and backoff, and the single writer
(ingest) retries for the lock and then gives up with a message that says the records
are safe in the lake.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

# Re-exported: callers have always caught these from here.
from warehouse.errors import (
    LOCK_WAIT_S,
    QueryError as QueryError,
    WarehouseBusy as WarehouseBusy,
    WarehouseCorrupt as WarehouseCorrupt,
    WarehouseError as WarehouseError,
    WarehouseMissing as WarehouseMissing,
    WarehouseStorageError as WarehouseStorageError,
)

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


_HIDDEN_FUNCTIONS = frozenset(
    {
        # They show where the warehouse, the temp folder and the user's home are.
        "duckdb_databases",
        "pragma_database_list",
        "duckdb_settings",
        "pg_settings",
        "current_setting",
        "duckdb_extensions",
        "extension_versions",
        "duckdb_secrets",
        "which_secret",
        "duckdb_temporary_files",
        "duckdb_external_file_cache",
        "duckdb_logs",
        "duckdb_log_contexts",
        "enable_logging",
        # They run SQL given as text, which the check below cannot see.
        "query",
        "query_table",
    }
)
"""Functions and views refused in analysts' SQL: a sandbox that cannot read files must not
tell where they are either (the dashboard's SQL page may face people who may query the
warehouse but not learn the server's layout)."""

_HIDDEN_PREFIXES = ("postgres_", "pg_", "ducklake_", "__ducklake_metadata")
"""On a DuckLake catalog: the postgres extension's functions run SQL on the catalog's
server, DuckLake's own functions list data files or change the catalog, and the
``__ducklake_metadata_*`` database is the catalog's raw metadata (data paths included).
``pg_`` names are refused whole (``pg_settings``, ``pg_read_file`` style helpers)."""


def _hidden(name: str) -> bool:
    return name in _HIDDEN_FUNCTIONS or name.startswith(_HIDDEN_PREFIXES)


_EXPLAIN = re.compile(r"^\s*EXPLAIN(\s+ANALY[SZ]E)?\s+", re.IGNORECASE)

_ONLY_QUERIES = (
    "only queries are allowed here (SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, "
    "EXPLAIN); PRAGMA, SET, CALL, PREPARE and statements that change anything are refused"
)


def check_query(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse (``QueryError``) text that is not one or more plain queries, or that names a
    function of ``_HIDDEN_FUNCTIONS``; empty or comment-only text is refused too.

    The check reads DuckDB's own parse tree (``json_serialize_sql``), so quoting, case,
    schema prefixes and nesting do not hide a name; a statement the serializer cannot
    express (PRAGMA, SET, CALL, ...) is not a query and is refused.
    """
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(one_line(str(exc))) from exc
    if not statements:
        raise QueryError("no SQL statement: the text is empty or only comments")
    for statement in statements:
        text = statement.query
        if statement.type == duckdb.StatementType.EXPLAIN:
            text = _EXPLAIN.sub("", text, count=1)
        row = con.execute("SELECT json_serialize_sql($q)", {"q": text}).fetchone()
        tree = json.loads(row[0]) if row else {"error": True}
        if tree.get("error"):
            raise QueryError(_ONLY_QUERIES)
        hidden = sorted(n for n in _names(tree) if _hidden(n))
        if hidden:
            raise QueryError(
                f"{hidden[0]} is not available here: it reveals the server's files or "
                "runs SQL from text"
            )
        if _FILE_COLUMN in _column_names(tree):
            raise QueryError(
                f"the {_FILE_COLUMN} column is not available here: it reveals where the "
                "data files are"
            )


_NAME_KEYS = ("function_name", "table_name", "schema_name", "catalog_name", "schema", "catalog")


def _names(tree: Any) -> set[str]:
    """Every function and table name in a serialized parse tree, lower-cased."""
    names: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _NAME_KEYS and isinstance(value, str):
                    names.add(value.lower())
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return names


_FILE_COLUMN = "filename"
"""DuckLake's virtual column: the full path of the Parquet file each row was read from,
that is the catalog's data folder (on every table, absent from ``SELECT *``)."""


def _column_names(tree: Any) -> set[str]:
    """The last part of every column reference in a serialized parse tree, lower-cased
    (``r."FileName"`` is ``filename``)."""
    names: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            parts = node.get("column_names")
            if isinstance(parts, list) and parts and isinstance(parts[-1], str):
                names.add(parts[-1].lower())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return names


def mask_paths(frame: pl.DataFrame, folders: Sequence[str]) -> pl.DataFrame:
    """``frame`` with each of ``folders`` replaced by ``<data>`` in its text columns: a
    plan (``EXPLAIN ANALYZE``) or any other text a query returns may name the data files,
    whatever the parse-tree check missed."""
    folders = [f for f in folders if len(f) > 1]
    texts = [name for name, kind in frame.schema.items() if kind == pl.String]
    if not folders or not texts:
        return frame
    masked = [pl.col(name) for name in texts]
    for folder in folders:
        masked = [col.str.replace_all(folder, "<data>", literal=True) for col in masked]
    return frame.with_columns(masked)


def one_line(text: str) -> str:
    """A DuckDB error on one line: its lines joined, the caret line (which points into the
    line above and means nothing once joined) left out."""
    lines = [line.strip() for line in text.splitlines()]
    return " | ".join(line for line in lines if line and set(line) != {"^"})


def redact_paths(text: str, path: Path) -> str:
    """``text`` without the warehouse's folder or the user's home directory (error texts
    of DuckDB name files it could not open)."""
    folder = str(path.resolve().parent)
    if len(folder) > 1:
        text = text.replace(folder, "<home>")
    user_home = os.path.expanduser("~")
    if len(user_home) > 1:
        text = text.replace(user_home, "~")
    return text


_STORAGE_MARKERS = (
    "No space left on device",
    "Disk quota exceeded",
    "Read-only file system",
    "Input/output error",
    "File too large",
    "database has been invalidated",
)


def is_storage_failure(exc: BaseException) -> bool:
    """Whether a DuckDB error is the warehouse's storage failing (disk full, read-only,
    I/O error, an instance invalidated by an earlier fatal error), not bad data: such an
    error must stop ingest, never mark the part being loaded as corrupt."""
    if isinstance(exc, duckdb.FatalException | duckdb.InternalException):
        return True
    return isinstance(exc, duckdb.Error) and any(m in str(exc) for m in _STORAGE_MARKERS)


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, duckdb.IOException) and any(m in text for m in _LOCK_MARKERS)


def _backoff(attempt: int, base: float = 0.02, cap: float = 1.0) -> float:
    return float(min(cap, base * 2**attempt) * (0.5 + random.random() / 2))


def _refuse_odd_file(path: Path) -> None:
    """A warehouse path that exists but is no regular file (a folder, or a FIFO DuckDB
    would wait on forever) is refused before DuckDB opens it."""
    if path.exists() and not path.is_file():
        raise WarehouseCorrupt(f"{path} is not a regular file; move it away (the lake rebuilds it)")


_NOT_DUCKDB = "not a valid DuckDB database file"
_DAMAGE_MARKERS = (_NOT_DUCKDB, "Corrupt database file", "Could not read enough bytes")
_REBUILD_HINT = "; move it away and run `evalhouse ingest --rebuild` to rebuild it from the lake"


def is_damaged(exc: BaseException) -> bool:
    """Whether a DuckDB error says the warehouse file itself is damaged (not a DuckDB file,
    a block whose checksum fails, a file cut short)."""
    return isinstance(exc, duckdb.IOException) and any(m in str(exc) for m in _DAMAGE_MARKERS)


_PERMISSION_MARKERS = ("Permission denied", "Read-only file system", "Operation not permitted")


def _open_failed(path: Path, exc: duckdb.Error, mode: str) -> WarehouseError:
    """Why ``path`` did not open: a permission the user can grant (``WarehouseError``), or
    a file DuckDB cannot read (``WarehouseCorrupt``: the warehouse is unavailable)."""
    text = f"cannot open {path}{mode}: {one_line(str(exc))}"
    if any(m in str(exc) for m in _PERMISSION_MARKERS):
        return WarehouseError(text)
    return WarehouseCorrupt(text + (_REBUILD_HINT if is_damaged(exc) else ""))


@contextmanager
def read_connection(
    path: Path, *, wait_s: float = LOCK_WAIT_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only, sandboxed connection; retries while a writer holds the lock."""
    _refuse_odd_file(path)
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
                raise _open_failed(path, exc, "") from exc
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
def write_connection(
    path: Path, *, wait_s: float = LOCK_WAIT_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The read-write connection of ingest; gives up with ``WarehouseBusy`` after ``wait_s``."""
    _refuse_odd_file(path)
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
                raise _open_failed(path, exc, " for writing") from exc
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
    except duckdb.Error as exc:
        if not is_storage_failure(exc):
            raise
        raise WarehouseStorageError(
            f"writing {path} failed ({one_line(str(exc))[:300]}). Nothing is lost: the "
            "records are safe in the lake and what was committed is kept; fix the disk and "
            "run `evalhouse ingest` again."
        ) from exc
    finally:
        # An instance a fatal error invalidated cannot close cleanly; it is gone anyway.
        with suppress(duckdb.Error):
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
    """Run one statement with a time limit (interrupt) and an optional row cap.

    ``time_limit_s`` must be a positive finite number and ``row_cap`` at least 1: 0, a
    negative or nan time limit would switch the limit off (``ValueError``)."""
    if not (math.isfinite(time_limit_s) and time_limit_s > 0):
        raise ValueError(f"time_limit_s must be a positive number of seconds, not {time_limit_s}")
    if row_cap is not None and row_cap < 1:
        raise ValueError(f"row_cap must be at least 1, not {row_cap}")
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
            frame = pl.DataFrame(table.slice(0, row_cap))
    except duckdb.InterruptException as exc:
        raise QueryError(f"the query ran longer than {time_limit_s:.0f} s and was stopped") from exc
    except duckdb.Error as exc:
        if is_damaged(exc):
            # a damaged block read mid-query: the warehouse is unavailable, the query is fine
            raise WarehouseCorrupt(f"{one_line(str(exc))}{_REBUILD_HINT}") from exc
        raise QueryError(one_line(str(exc))) from exc
    finally:
        timer.cancel()
        # An interrupt already under way must end before the caller may close ``con``:
        # DuckDB must never interrupt a connection that is being closed.
        timer.join()
    return QueryResult(frame, truncated, (time.perf_counter() - started) * 1000)
