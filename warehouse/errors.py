"""The warehouse's errors, apart from the connection code so that a command can catch
them without loading DuckDB, polars and pyarrow (0.3 s of every CLI start).

Two families a caller tells apart: ``WarehouseUnavailable`` (the warehouse file or the
catalog cannot be read now: missing, locked, unreadable, a server that does not answer;
an outage, exit code 3) and every other ``WarehouseError`` (a mistake a person fixes: bad
SQL, a bad ``--catalog``, a full disk; exit code 2)."""

from __future__ import annotations


class WarehouseError(Exception):
    """A warehouse problem a person can act on; ``title`` is a short headline."""

    title = "Warehouse error"


class WarehouseUnavailable(WarehouseError):
    """The warehouse or its catalog cannot be read right now: an outage, not a mistake in
    the command (CI tells the two apart by the exit code)."""

    title = "Warehouse unavailable"


class WarehouseMissing(WarehouseUnavailable):
    """The warehouse file does not exist yet."""

    title = "No warehouse yet"


LOCK_WAIT_S = 30.0
"""How long a reader or writer waits for a lock (the warehouse file's, or a catalog's commit
lock; ``evalhouse ingest --wait``) before giving up with ``WarehouseBusy`` and naming the
holder. A commit holds a lock for well under a second, so half a minute means it is stuck.
Here, beside the error, because the CLI's parsers need it without loading DuckDB."""


class WarehouseBusy(WarehouseUnavailable):
    """Another process held the lock for longer than we were willing to wait."""

    title = "Warehouse busy"


class WarehouseCorrupt(WarehouseUnavailable):
    """The warehouse file exists but DuckDB cannot open it (not a DuckDB file, damaged)."""

    title = "Warehouse unreadable"


class QueryError(WarehouseError):
    """A query failed: bad SQL, a refused statement, or the time limit."""

    title = "Query failed"


class WarehouseStorageError(WarehouseError):
    """Writing the warehouse file failed (disk full, read-only, I/O error)."""

    title = "Warehouse not written"


class CatalogError(WarehouseError):
    """A catalog that cannot be used: a bad ``--catalog``, a server that refused the
    connection's settings, a missing extension package."""

    title = "Catalog error"


class CatalogUnavailable(CatalogError, WarehouseUnavailable):
    """The catalog's PostgreSQL server (or its data folder) could not be reached."""

    title = "Catalog unavailable"
