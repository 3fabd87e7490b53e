-- Run header cards: one run's headline numbers over its result rows (all iterations), with
-- the spread and counts each card's noise check needs. Latency percentiles are over rows
-- that have a latency; pass rate over rows with a judge verdict.
SELECT
    count(*) AS samples,
    count(error) AS errors,
    avg(CASE WHEN error IS NULL THEN 0.0 ELSE 1.0 END) AS error_rate,
    avg(CASE WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END) AS pass_rate,
    count(passed) AS pass_n,
    avg(overall) AS overall,
    stddev_samp(overall) AS overall_sd,
    count(overall) AS overall_n,
    coalesce(sum(cost_usd), 0) AS cost_usd,
    quantile_cont(latency_ms, 0.5) AS latency_p50,
    quantile_cont(latency_ms, 0.95) AS latency_p95,
    avg(latency_ms) AS latency_mean,
    stddev_samp(latency_ms) AS latency_sd,
    count(latency_ms) AS latency_n
FROM results
WHERE run_id = $run_id;
