-- Per-sample deltas (challenger minus baseline, each the mean over iterations and
-- candidates) of ONE domain, for samples present in both runs: the input of the paired
-- bootstrap. Same filters as domain_metrics.
WITH filtered AS (
    SELECT run_id, sample_id, accuracy, completeness, attribution
    FROM results
    WHERE run_id IN ($run_id, $baseline_run_id)
      AND domain = $domain
      AND ($candidate IS NULL OR candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, ai_provider))
      AND ($tag IS NULL OR list_contains(tags, $tag))
),
per_sample AS (
    SELECT run_id, sample_id,
           avg(accuracy) AS accuracy, avg(completeness) AS completeness,
           avg(attribution) AS attribution
    FROM filtered
    GROUP BY run_id, sample_id
)
SELECT
    cur.sample_id,
    cur.accuracy - base.accuracy AS accuracy_delta,
    cur.completeness - base.completeness AS completeness_delta,
    cur.attribution - base.attribution AS attribution_delta
FROM per_sample AS cur
JOIN per_sample AS base ON base.sample_id = cur.sample_id AND base.run_id = $baseline_run_id
WHERE cur.run_id = $run_id
ORDER BY cur.sample_id;
