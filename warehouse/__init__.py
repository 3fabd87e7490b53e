"""The DuckDB warehouse: schema, connection policy, SQL files and typed queries.

The only package that imports duckdb.
"""
