-- Run header cards: one run's headline numbers over its result rows (all iterations).
-- Latency percentiles are over rows that have a latency. The pass rate is over judged rows
-- (errors left out): an answer that says nothing (empty or abstained) is not passed, and
-- abstention_rate, the share of those among the rows that are not errors, is shown beside
-- it. The noise of each change is card_sample_deltas's paired bootstrap.
SELECT
    count(*) AS samples,
    count(error) AS errors,
    avg(CASE WHEN error IS NULL THEN 0.0 ELSE 1.0 END) AS error_rate,
    avg(CASE WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END) AS pass_rate,
    count(passed) AS pass_n,
    avg(CASE WHEN answer IN ('no answer', 'abstained') THEN 1.0
             WHEN answer = 'answered' THEN 0.0 END) AS abstention_rate,
    avg(overall) AS overall,
    coalesce(sum(cost_usd), 0) AS cost_usd,
    quantile_cont(latency_ms, 0.5) AS latency_p50,
    quantile_cont(latency_ms, 0.95) AS latency_p95,
    avg(latency_ms) AS latency_mean
FROM result_scores
WHERE run_id = $run_id;
