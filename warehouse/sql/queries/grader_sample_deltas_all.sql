-- grader_sample_deltas of EVERY domain at once: per domain, grader and sample, the grader
-- delta (challenger minus baseline, 0-100, each the mean over iterations and candidates) of
-- samples both runs graded in that domain. Same filters as domain_grader_metrics.
WITH per_sample AS (
    SELECT g.run_id, r.domain, g.sample_id, g.grader, avg(g.score) * 100 AS score
    FROM grader_scores AS g
    JOIN results AS r USING (run_id, iteration, sample_id, candidate)
    WHERE g.run_id IN ($run_id, $baseline_run_id)
      AND ($candidate IS NULL OR r.candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, r.ai_provider))
      AND ($tag IS NULL OR list_contains(r.tags, $tag))
    GROUP BY g.run_id, r.domain, g.sample_id, g.grader
)
SELECT cur.domain, cur.sample_id, cur.grader, cur.score - base.score AS delta
FROM per_sample AS cur
JOIN per_sample AS base
    ON base.run_id = $baseline_run_id AND base.domain = cur.domain
    AND base.sample_id = cur.sample_id
    AND base.grader = cur.grader
WHERE cur.run_id = $run_id
ORDER BY cur.domain, cur.grader, cur.sample_id;
