-- The review flags a run's result rows carry, each with how many rows carry it.
SELECT flag, count(*) AS rows
FROM (SELECT unnest(flags) AS flag FROM results WHERE run_id = $run_id)
GROUP BY flag
ORDER BY rows DESC, flag
