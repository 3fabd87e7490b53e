-- The tier thresholds a run was scored with (runs.config -> analyzer.tiers); nulls when the
-- run's config does not say (the caller falls back to the defaults).
SELECT TRY_CAST(json_extract_string(config, '$.analyzer.tiers.excellent') AS DOUBLE) AS excellent,
       TRY_CAST(json_extract_string(config, '$.analyzer.tiers.good') AS DOUBLE) AS good,
       TRY_CAST(json_extract_string(config, '$.analyzer.tiers.fair') AS DOUBLE) AS fair
FROM runs
WHERE run_id = $run_id;
