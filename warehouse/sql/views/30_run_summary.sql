-- One row per run: its state and headline numbers. samples counts result rows (all
-- iterations); pass_rate is over rows with a judge verdict. The results are aggregated
-- per run before the join (one group per run, not a join of every result row).
CREATE OR REPLACE VIEW run_summary AS
WITH per_run AS (
    SELECT
        run_id,
        count(sample_id) AS samples,
        count(error) AS errors,
        avg(CASE WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END) AS pass_rate,
        avg(accuracy) AS accuracy_mean,
        avg(completeness) AS completeness_mean,
        avg(attribution) AS attribution_mean,
        sum(cost_usd) AS cost_usd
    FROM results
    GROUP BY run_id
)
SELECT
    r.run_id,
    r.name,
    r.status,
    r.started_at,
    r.finished_at,
    r.iterations,
    coalesce(s.samples, 0) AS samples,
    coalesce(s.errors, 0) AS errors,
    s.pass_rate,
    s.accuracy_mean,
    s.completeness_mean,
    s.attribution_mean,
    coalesce(s.cost_usd, 0) AS cost_usd
FROM runs AS r
LEFT JOIN per_run AS s USING (run_id);
