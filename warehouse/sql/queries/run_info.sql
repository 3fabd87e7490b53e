-- One run's latest state (name, test set, config) for the launcher's re-run buttons.
SELECT run_id, name, status, started_at, test_set, config, judge, embedder, iterations
FROM runs
WHERE run_id = $run_id;
