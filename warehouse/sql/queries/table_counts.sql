-- Rows per warehouse table, for the status line.
SELECT table_name, estimated_size AS row_count
FROM duckdb_tables()
WHERE schema_name = 'main'
ORDER BY table_name;
