-- Overview, retrieval: per domain and retrieval metric (view retrieval_scores, 0-100), the
-- mean of a run and of a baseline under the Overview filters, the delta, and the spread of
-- the per-iteration means of both runs (as domain_grader_metrics). Metrics are ordered as
-- people read them: MRR, then Hit, NDCG, precision and recall, each by k.
-- Filters: $candidate, $providers, $tag.
WITH filtered AS (
    SELECT run_id, iteration, sample_id, domain, metric, score
    FROM retrieval_scores
    WHERE run_id IN ($run_id, $baseline_run_id)
      AND ($candidate IS NULL OR candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, ai_provider))
      AND ($tag IS NULL OR list_contains(tags, $tag))
),
per_domain AS (
    SELECT run_id, domain, metric, count(DISTINCT iteration) AS iterations, avg(score) AS mean
    FROM filtered
    GROUP BY run_id, domain, metric
),
spread AS (
    SELECT run_id, domain, metric, stddev_samp(score) AS sd
    FROM (
        SELECT run_id, domain, metric, iteration, avg(score) AS score
        FROM filtered
        GROUP BY run_id, domain, metric, iteration
    )
    GROUP BY run_id, domain, metric
)
SELECT
    cur.domain,
    cur.metric,
    cur.mean,
    base.mean AS baseline_mean,
    cur.mean - base.mean AS delta,
    cs.sd,
    base.iterations AS baseline_iterations,
    bs.sd AS baseline_sd
FROM per_domain AS cur
LEFT JOIN spread AS cs USING (run_id, domain, metric)
LEFT JOIN per_domain AS base
    ON base.run_id = $baseline_run_id AND base.domain = cur.domain AND base.metric = cur.metric
LEFT JOIN spread AS bs
    ON bs.run_id = base.run_id AND bs.domain = base.domain AND bs.metric = base.metric
WHERE cur.run_id = $run_id
ORDER BY cur.domain,
    list_position(['mrr', 'hit', 'ndcg', 'precision', 'recall'], split_part(cur.metric, '@', 1)),
    try_cast(nullif(split_part(cur.metric, '@', 2), '') AS INTEGER) NULLS FIRST;
