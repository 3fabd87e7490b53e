-- Compare: per domain, how many paired samples improved, regressed or stayed unchanged
-- (same pairing and tolerance as compare_samples), most regressions first.
WITH base AS (
    SELECT sample_id,
           avg(CASE $metric WHEN 'accuracy' THEN accuracy WHEN 'completeness' THEN completeness
                            WHEN 'attribution' THEN attribution END) AS score
    FROM results
    WHERE run_id = $baseline_run_id
      AND ($baseline_candidate IS NULL OR candidate = $baseline_candidate)
    GROUP BY sample_id
),
chal AS (
    SELECT sample_id, any_value(domain) AS domain,
           avg(CASE $metric WHEN 'accuracy' THEN accuracy WHEN 'completeness' THEN completeness
                            WHEN 'attribution' THEN attribution END) AS score
    FROM results
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY sample_id
),
paired AS (
    SELECT chal.domain, chal.score - base.score AS delta
    FROM chal JOIN base USING (sample_id)
)
SELECT
    domain,
    count(*) AS samples,
    count(*) FILTER (WHERE delta > $tolerance) AS improved,
    count(*) FILTER (WHERE delta < -$tolerance) AS regressed,
    count(*) FILTER (WHERE abs(delta) <= $tolerance) AS unchanged,
    count(*) FILTER (WHERE delta IS NULL) AS not_scored,
    avg(delta) AS mean_delta,
    min(delta) AS worst_delta
FROM paired
GROUP BY domain
ORDER BY regressed DESC, worst_delta ASC NULLS LAST, domain;
