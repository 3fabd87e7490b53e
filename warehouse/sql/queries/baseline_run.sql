-- The default baseline of a run: the previous completed run of its series (view
-- run_series, the one definition). Null for the first run of a series.
SELECT baseline_run_id AS run_id
FROM run_series
WHERE run_id = $run_id AND baseline_run_id IS NOT NULL;
