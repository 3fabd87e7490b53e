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

MIN_FILE_GRACE_S = 600.0
"""Shortest ``--grace`` ``evalhouse maintain`` takes without ``--force-grace``: an ingest in
flight writes its Parquet files before it waits (``--wait``, default 30 s) for the commit
lock, and a file younger than this may be one it has not committed yet. Deleting it breaks
every later query on those runs ("Cannot open file"), so a shorter grace is the operator's
explicit choice, for a catalog no ingest is writing to."""
