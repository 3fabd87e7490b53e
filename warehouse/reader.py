"""The read facade over one warehouse and the registry of its named queries.

``Warehouse`` opens short-lived read-only connections (or sandboxed cursors over a DuckLake
catalog), binds parameters, applies a time limit and hides the server's paths in errors.
``named_query`` registers a query function under its name, which is also the name of its
SQL file in ``sql/queries/``; the functions themselves live in ``warehouse.queries``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import polars as pl

from warehouse import catalog as lakecat
from warehouse.catalog import Catalog
from warehouse.db import (
    QueryError,
    QueryResult,
    check_query,
    mask_paths,
    read_connection,
    redact_paths,
    run_query,
)
from warehouse.errors import LOCK_WAIT_S


@cache
def sql_file(name: str) -> str:
    """The text of ``warehouse/sql/queries/<name>.sql``."""
    return (resources.files("warehouse") / "sql" / "queries" / f"{name}.sql").read_text("utf-8")


class Warehouse:
    """The read facade over one warehouse: short-lived read-only connections to the file
    at ``path``, or sandboxed cursors over a DuckLake ``catalog`` when one is given."""

    def __init__(
        self, path: Path, *, wait_s: float = LOCK_WAIT_S, catalog: Catalog | None = None
    ) -> None:
        self.path = path
        self.wait_s = wait_s
        self.catalog = catalog
        self._local = threading.local()

    @contextmanager
    def session(self) -> Iterator[None]:
        """Run every query of the block (in this thread) on one read connection, opened at
        the block's first query and closed at its end. A dashboard page's queries then pay
        one connect instead of one each (opening the file costs about 25 ms) and share
        DuckDB's buffer cache. Keep blocks short, a page run at most: an open reader makes
        ingest wait for the lock. Nested blocks share the outer one's connection."""
        if getattr(self._local, "stack", None) is not None:
            yield
            return
        self._local.stack = ExitStack()
        self._local.con = None
        self._local.memo = {}
        try:
            yield
        finally:
            stack = self._local.stack
            self._local.stack = None
            self._local.con = None
            self._local.memo = None
            stack.close()

    def session_memo(self) -> dict[str, Any] | None:
        """A dict that lives as long as this thread's session (None outside a session): for
        values read once per page run, such as the data version."""
        memo: dict[str, Any] | None = getattr(self._local, "memo", None)
        return memo

    def release(self) -> None:
        """Close this thread's session connection now (say, before waiting for an ingest
        process, which needs the lock); the session's next query opens another."""
        stack = getattr(self._local, "stack", None)
        if stack is not None:
            self._local.con = None
            stack.close()  # an ExitStack can be used again once closed

    @contextmanager
    def _reader(self) -> Iterator[duckdb.DuckDBPyConnection]:
        stack: ExitStack | None = getattr(self._local, "stack", None)
        if stack is not None:
            if self._local.con is None:
                self._local.con = stack.enter_context(self._open())
            yield self._local.con
            return
        with self._open() as con:
            yield con

    @contextmanager
    def _open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self.catalog is None:
            with read_connection(self.path, wait_s=self.wait_s) as con:
                yield con
        else:
            with lakecat.read_connection(self.catalog) as con:
                yield con

    def _redact(self, text: str) -> str:
        if self.catalog is not None:
            for name in self.catalog.data_names():
                text = text.replace(name, "<data>")
            return self.catalog.redact(redact_paths(text, Path(self.path)))
        return redact_paths(text, self.path)

    def named(self, name: str, **params: Any) -> pl.DataFrame:
        """Run the named query file with bound parameters."""
        return self.sql(sql_file(name), params).frame

    def sql(
        self,
        text: str,
        params: Mapping[str, Any] | None = None,
        *,
        time_limit_s: float = 30.0,
        row_cap: int | None = None,
    ) -> QueryResult:
        """Run read-only queries in the sandbox (no file access, configuration locked, no
        function that reveals the server's files; see ``db.check_query``)."""
        with self._reader() as con:
            try:
                check_query(con, text)
                return run_query(con, text, params, time_limit_s=time_limit_s, row_cap=row_cap)
            except QueryError as exc:
                raise QueryError(self._redact(str(exc))) from exc

    def analyst_sql(
        self, text: str, *, time_limit_s: float = 30.0, row_cap: int | None = None
    ) -> QueryResult:
        """SQL a person typed (the SQL page, ``evalhouse sql``): the read-only sandbox of
        ``sql``, run in a child process whose memory, result size and time are capped
        (``warehouse.sandbox``), so no query can exhaust the process that asked."""
        from warehouse.sandbox import SandboxRequest, run_isolated

        catalog = self.catalog
        request = SandboxRequest(
            warehouse=str(self.path),
            catalog=None if catalog is None else f"postgres:{catalog.conninfo}",
            catalog_data=None if catalog is None else str(catalog.data_path),
            sql=text,
            time_limit_s=time_limit_s,
            row_cap=row_cap,
        )
        try:
            result: QueryResult = run_isolated(request)
        except QueryError as exc:
            raise QueryError(self._redact(str(exc))) from exc
        folders = [str(self.path.resolve().parent)] if catalog is None else catalog.data_names()
        return replace(result, frame=mask_paths(result.frame, folders))

    def data_version(self) -> str:
        """Changes whenever ingest loads something: keys the dashboard's caches."""
        if self.catalog is None and not self.path.exists():
            return "missing"
        frame = self.sql(
            "SELECT count(*) AS n, max(ingested_at)::VARCHAR AS at FROM ingested_files"
        ).frame
        return f"{frame['n'][0]}:{frame['at'][0]}"


QueryFn = TypeVar("QueryFn", bound=Callable[..., Any])

QUERIES: dict[str, Callable[..., Any]] = {}
"""Every named query function by name (the dashboard's one cache looks them up here)."""


def named_query(fn: QueryFn) -> QueryFn:
    """Register a query function under its name (which is also its SQL file's name)."""
    QUERIES[fn.__name__] = fn
    return fn
