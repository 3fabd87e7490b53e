-- The latest run that started before the given one.
SELECT run_id
FROM runs
WHERE started_at < (SELECT started_at FROM runs WHERE run_id = $run_id)
ORDER BY started_at DESC, run_id DESC
LIMIT 1;
