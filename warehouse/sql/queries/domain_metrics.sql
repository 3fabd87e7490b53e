-- Overview: per-domain means of a run and of a baseline under the same filters, the deltas,
-- and the spread of the per-iteration means (iterations, standard deviation) of both runs,
-- from which the dashboard draws the 95% noise interval when a run has several iterations.
-- Filters: $candidate (null = all), $providers (list, null = all), $tag (null = all).
WITH filtered AS (
    SELECT run_id, iteration, sample_id, domain, accuracy, completeness, attribution, error
    FROM results
    WHERE run_id IN ($run_id, $baseline_run_id)
      AND ($candidate IS NULL OR candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, ai_provider))
      AND ($tag IS NULL OR list_contains(tags, $tag))
),
per_domain AS (
    SELECT run_id, domain,
           count(DISTINCT sample_id) AS samples,
           count(DISTINCT iteration) AS iterations,
           count(error) AS errors,
           avg(accuracy) AS accuracy, avg(completeness) AS completeness,
           avg(attribution) AS attribution
    FROM filtered
    GROUP BY run_id, domain
),
per_iteration AS (
    SELECT run_id, domain, iteration,
           avg(accuracy) AS accuracy, avg(completeness) AS completeness,
           avg(attribution) AS attribution
    FROM filtered
    GROUP BY run_id, domain, iteration
),
spread AS (
    SELECT run_id, domain,
           stddev_samp(accuracy) AS accuracy_sd, stddev_samp(completeness) AS completeness_sd,
           stddev_samp(attribution) AS attribution_sd
    FROM per_iteration
    GROUP BY run_id, domain
)
SELECT
    cur.domain,
    cur.samples,
    cur.iterations,
    cur.errors,
    cur.accuracy AS accuracy_mean,
    cur.completeness AS completeness_mean,
    cur.attribution AS attribution_mean,
    base.accuracy AS baseline_accuracy_mean,
    base.completeness AS baseline_completeness_mean,
    base.attribution AS baseline_attribution_mean,
    cur.accuracy - base.accuracy AS accuracy_delta,
    cur.completeness - base.completeness AS completeness_delta,
    cur.attribution - base.attribution AS attribution_delta,
    cs.accuracy_sd, cs.completeness_sd, cs.attribution_sd,
    base.iterations AS baseline_iterations,
    bs.accuracy_sd AS baseline_accuracy_sd,
    bs.completeness_sd AS baseline_completeness_sd,
    bs.attribution_sd AS baseline_attribution_sd
FROM per_domain AS cur
LEFT JOIN spread AS cs ON cs.run_id = cur.run_id AND cs.domain = cur.domain
LEFT JOIN per_domain AS base ON base.run_id = $baseline_run_id AND base.domain = cur.domain
LEFT JOIN spread AS bs ON bs.run_id = base.run_id AND bs.domain = base.domain
WHERE cur.run_id = $run_id
ORDER BY cur.domain;
