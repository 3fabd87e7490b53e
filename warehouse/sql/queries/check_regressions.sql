-- Samples of a run whose analyzer metrics fell by more than $tolerance points against a
-- baseline run (per-sample means over iterations; samples present in both runs only).
WITH cur AS (
    SELECT sample_id, any_value(domain) AS domain,
           avg(accuracy) AS accuracy, avg(completeness) AS completeness,
           avg(attribution) AS attribution
    FROM results
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY sample_id
),
base AS (
    SELECT sample_id,
           avg(accuracy) AS accuracy, avg(completeness) AS completeness,
           avg(attribution) AS attribution
    FROM results
    WHERE run_id = $baseline_run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY sample_id
)
SELECT
    cur.sample_id,
    cur.domain,
    cur.accuracy - base.accuracy AS accuracy_delta,
    cur.completeness - base.completeness AS completeness_delta,
    cur.attribution - base.attribution AS attribution_delta
FROM cur JOIN base USING (sample_id)
WHERE cur.accuracy - base.accuracy < -$tolerance
   OR cur.completeness - base.completeness < -$tolerance
   OR cur.attribution - base.attribution < -$tolerance
ORDER BY least(
    coalesce(cur.accuracy - base.accuracy, 0),
    coalesce(cur.completeness - base.completeness, 0),
    coalesce(cur.attribution - base.attribution, 0)
), cur.sample_id;
