-- Every run, newest first, with its headline numbers.
SELECT run_id, name, status, started_at, finished_at, iterations, samples, errors,
       pass_rate, accuracy_mean, completeness_mean, attribution_mean, cost_usd
FROM run_summary
ORDER BY started_at DESC, run_id DESC;
