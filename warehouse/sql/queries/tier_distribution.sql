-- Rows per (domain, metric, tier) of one run, long form for charts.
SELECT domain, metric, tier, count(*) AS samples
FROM (
    SELECT domain, 'accuracy' AS metric, accuracy_tier AS tier FROM results WHERE run_id = $run_id
    UNION ALL
    SELECT domain, 'completeness', completeness_tier FROM results WHERE run_id = $run_id
    UNION ALL
    SELECT domain, 'attribution', attribution_tier FROM results WHERE run_id = $run_id
)
WHERE tier IS NOT NULL
GROUP BY ALL
ORDER BY domain, metric, tier;
