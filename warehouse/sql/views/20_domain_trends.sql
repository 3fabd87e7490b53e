-- Per run and domain: the change of each metric's mean since the previous run, where
-- previous = the latest run that started earlier and has the same domain (null for the first).
CREATE OR REPLACE VIEW domain_trends AS
WITH scored AS (
    SELECT d.run_id, d.domain, r.started_at,
           d.accuracy_mean, d.completeness_mean, d.attribution_mean
    FROM domain_scores AS d
    JOIN runs AS r USING (run_id)
),
ordered AS (
    SELECT *,
        lag(run_id) OVER w AS previous_run_id,
        lag(accuracy_mean) OVER w AS prev_accuracy,
        lag(completeness_mean) OVER w AS prev_completeness,
        lag(attribution_mean) OVER w AS prev_attribution
    FROM scored
    WINDOW w AS (PARTITION BY domain ORDER BY started_at, run_id)
)
SELECT
    run_id,
    domain,
    previous_run_id,
    accuracy_mean - prev_accuracy AS accuracy_delta,
    completeness_mean - prev_completeness AS completeness_delta,
    attribution_mean - prev_attribution AS attribution_delta
FROM ordered;
