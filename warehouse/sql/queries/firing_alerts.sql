-- The alert rules of a run's series whose latest state is firing: rule, domain ('' for the
-- whole run), metric, what the rule tests, its value and threshold, since when, and the run that set it off.
WITH target AS (
    SELECT series FROM run_series WHERE run_id = $run_id
),
latest AS (
    SELECT
        rule,
        coalesce(domain, '') AS domain,
        arg_max(state, evaluated_at) AS state,
        arg_max(metric, evaluated_at) AS metric,
        arg_max(value, evaluated_at) AS value,
        arg_max(threshold, evaluated_at) AS threshold,
        arg_max(kind, evaluated_at) AS kind,
        arg_max(run_id, evaluated_at) AS fired_in,
        max(evaluated_at) AS since
    FROM alerts
    WHERE series = (SELECT series FROM target)
    GROUP BY 1, 2
)
SELECT rule, domain, metric, kind, value, threshold, since, fired_in
FROM latest
WHERE state = 'firing'
ORDER BY since DESC, rule
