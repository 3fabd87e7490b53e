"""The DuckDB warehouse: schema, connection policy, SQL files and typed queries.

The only package that imports duckdb.
"""

ENV_CATALOG = "EVALHOUSE_CATALOG"
"""Environment variable naming a DuckLake catalog (``postgres:...``) instead of the file."""
ENV_CATALOG_DATA = "EVALHOUSE_CATALOG_DATA"
"""Environment variable naming the DuckLake catalog's data folder."""

SNAPSHOT_KEEP_S = 7 * 24 * 3600.0
"""Default age past which ``evalhouse maintain`` expires a catalog's snapshots (time
travel reaches this far back). Here, not in ``warehouse.maintenance``, so that the command
line states it without loading DuckDB."""

FILE_GRACE_S = 3600.0
"""Default age a catalog's file must have before ``evalhouse maintain`` deletes it as
unused or orphaned: longer than any ingest takes between writing its Parquet files and
committing them."""
