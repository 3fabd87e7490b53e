-- Which lake parts are in the warehouse: ingest loads only paths not listed here.
CREATE TABLE IF NOT EXISTS ingested_files (
    path VARCHAR NOT NULL,          -- part path relative to the lake root
    table_name VARCHAR NOT NULL,    -- lake table the part belongs to
    run_id VARCHAR NOT NULL,
    iteration BIGINT NOT NULL,
    size_bytes BIGINT NOT NULL,
    status VARCHAR NOT NULL,        -- loaded | corrupt
    error VARCHAR,                  -- why a corrupt part was skipped
    ingested_at TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS schema_version (
    version BIGINT NOT NULL,        -- warehouse.schema.SCHEMA_VERSION
    ddl_sha256 VARCHAR NOT NULL,    -- fingerprint of the generated DDL and views
    created_at TIMESTAMP NOT NULL
);
