-- The latest state (firing or cleared) of every alert rule of a series, per domain ('' for
-- the whole run): what decides whether the next run's breach is news.
SELECT rule, coalesce(domain, '') AS domain, state
FROM alerts
WHERE series = $series
QUALIFY row_number() OVER (
    PARTITION BY rule, coalesce(domain, '') ORDER BY evaluated_at DESC, alert_id DESC
) = 1
