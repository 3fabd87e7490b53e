"""The DuckDB warehouse: schema, connection policy, SQL files and typed queries.

The only package that imports duckdb.
"""

ENV_CATALOG = "EVALHOUSE_CATALOG"
"""Environment variable naming a DuckLake catalog (``postgres:...``) instead of the file."""
ENV_CATALOG_DATA = "EVALHOUSE_CATALOG_DATA"
"""Environment variable naming the DuckLake catalog's data folder."""
