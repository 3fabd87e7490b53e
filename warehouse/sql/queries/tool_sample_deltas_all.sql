-- Per domain, tool-call metric and sample: the change (challenger minus baseline, 0-100,
-- each the mean over iterations and candidates) of samples both runs scored in that
-- domain, for the Overview's paired bootstrap. Same filters as domain_tool_metrics.
WITH per_sample AS (
    SELECT run_id, domain, sample_id, metric, avg(score) AS score
    FROM tool_scores
    WHERE run_id IN ($run_id, $baseline_run_id) AND score IS NOT NULL
      AND ($candidate IS NULL OR candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, ai_provider))
      AND ($tag IS NULL OR list_contains(tags, $tag))
    GROUP BY run_id, domain, sample_id, metric
)
SELECT cur.domain, cur.sample_id, cur.metric, cur.score - base.score AS delta
FROM per_sample AS cur
JOIN per_sample AS base
    ON base.run_id = $baseline_run_id AND base.domain = cur.domain
    AND base.sample_id = cur.sample_id
    AND base.metric = cur.metric
WHERE cur.run_id = $run_id
ORDER BY cur.domain, cur.metric, cur.sample_id;
