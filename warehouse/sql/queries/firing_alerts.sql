-- The alert rules of a run's series that were firing as of that run: rule, domain ('' for
-- the whole run), metric, what the rule tests, its value and threshold, since when, and
-- the run that set it off. Only evaluations of this run and the series' runs that started
-- before it count, so an older run's page never shows what a later run set off.
WITH target AS (
    SELECT series, started_at FROM run_series WHERE run_id = $run_id
),
latest AS (
    SELECT
        a.rule,
        coalesce(a.domain, '') AS domain,
        arg_max(a.state, a.evaluated_at) AS state,
        arg_max(a.metric, a.evaluated_at) AS metric,
        arg_max(a.value, a.evaluated_at) AS value,
        arg_max(a.threshold, a.evaluated_at) AS threshold,
        arg_max(a.kind, a.evaluated_at) AS kind,
        arg_max(a.run_id, a.evaluated_at) AS fired_in,
        max(a.evaluated_at) AS since
    FROM alerts AS a
    JOIN run_series AS s ON s.run_id = a.run_id
    CROSS JOIN target AS t
    WHERE a.series = t.series
      AND (s.started_at < t.started_at OR (s.started_at = t.started_at AND a.run_id <= $run_id))
    GROUP BY 1, 2
)
SELECT rule, domain, metric, kind, value, threshold, since, fired_in
FROM latest
WHERE state = 'firing'
ORDER BY since DESC, rule
