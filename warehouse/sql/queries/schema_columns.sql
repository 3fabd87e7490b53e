-- The schema browser: every column of every table and view of the warehouse.
SELECT
    c.table_name AS object,
    CASE WHEN v.view_name IS NULL THEN 'table' ELSE 'view' END AS kind,
    c.column_name AS "column",
    c.data_type AS type,
    c.column_index AS position
FROM duckdb_columns() AS c
LEFT JOIN duckdb_views() AS v
    ON v.view_name = c.table_name AND v.schema_name = c.schema_name AND NOT v.internal
WHERE c.schema_name = 'main' AND c.database_name = current_database()
ORDER BY kind, object, position;
