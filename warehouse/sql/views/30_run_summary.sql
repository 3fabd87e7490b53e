-- One row per run: its state and headline numbers. samples counts result rows (all
-- iterations); pass_rate is over rows with a judge verdict.
CREATE OR REPLACE VIEW run_summary AS
SELECT
    r.run_id,
    r.name,
    r.status,
    r.started_at,
    r.finished_at,
    r.iterations,
    count(res.sample_id) AS samples,
    count(res.error) AS errors,
    avg(CASE WHEN res.passed THEN 1.0 WHEN NOT res.passed THEN 0.0 END) AS pass_rate,
    avg(res.accuracy) AS accuracy_mean,
    avg(res.completeness) AS completeness_mean,
    avg(res.attribution) AS attribution_mean,
    coalesce(sum(res.cost_usd), 0) AS cost_usd
FROM runs AS r
LEFT JOIN results AS res USING (run_id)
GROUP BY ALL;
