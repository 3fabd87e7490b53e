-- Overview, graders: per domain and grader, the mean score of a run and of a baseline under
-- the Overview filters (0-100: a grader's 0-1 score x 100), and the delta
-- (its noise interval: grader_sample_deltas_all, as domain_metrics).
-- A failed grader (null score) is left out of the mean. Filters: $candidate, $providers, $tag.
WITH filtered AS (
    SELECT g.run_id, g.sample_id, r.domain, g.grader, g.score * 100 AS score
    FROM grader_scores AS g
    JOIN results AS r USING (run_id, iteration, sample_id, candidate)
    WHERE g.run_id IN ($run_id, $baseline_run_id)
      AND ($candidate IS NULL OR r.candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, r.ai_provider))
      AND ($tag IS NULL OR list_contains(r.tags, $tag))
),
per_domain AS (
    SELECT run_id, domain, grader, avg(score) AS mean
    FROM filtered
    GROUP BY run_id, domain, grader
)
SELECT
    cur.domain,
    cur.grader,
    cur.mean,
    base.mean AS baseline_mean,
    cur.mean - base.mean AS delta
FROM per_domain AS cur
LEFT JOIN per_domain AS base
    ON base.run_id = $baseline_run_id AND base.domain = cur.domain AND base.grader = cur.grader
WHERE cur.run_id = $run_id
ORDER BY cur.domain, cur.grader;
