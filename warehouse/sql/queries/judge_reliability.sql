-- Judge reliability of run $run_id: view judge_reliability, metrics in a fixed order.
SELECT judge, metric, answers, asks, flaky_answers, flip_rate, mean_spread_100, max_range_100
FROM judge_reliability
WHERE run_id = $run_id
ORDER BY judge, metric;
