"""The warehouse's errors, apart from the connection code so that a command can catch
them without loading DuckDB, polars and pyarrow (0.3 s of every CLI start)."""

from __future__ import annotations


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


class WarehouseStorageError(WarehouseError):
    """Writing the warehouse file failed (disk full, read-only, I/O error)."""

    title = "Warehouse not written"
