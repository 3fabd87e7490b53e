-- Overview, retrieval: per domain and retrieval metric (view retrieval_scores, 0-100), the
-- mean of a run and of a baseline under the Overview filters, and the delta (its noise
-- interval: retrieval_sample_deltas_all, as domain_grader_metrics). Metrics are ordered as
-- people read them: MRR, then Hit, NDCG, precision and recall, each by k.
-- Filters: $candidate, $providers, $tag.
WITH filtered AS (
    SELECT run_id, sample_id, domain, metric, score
    FROM retrieval_scores
    WHERE run_id IN ($run_id, $baseline_run_id)
      AND ($candidate IS NULL OR candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, ai_provider))
      AND ($tag IS NULL OR list_contains(tags, $tag))
),
per_domain AS (
    SELECT run_id, domain, metric, avg(score) AS mean
    FROM filtered
    GROUP BY run_id, domain, metric
)
SELECT
    cur.domain,
    cur.metric,
    cur.mean,
    base.mean AS baseline_mean,
    cur.mean - base.mean AS delta
FROM per_domain AS cur
LEFT JOIN per_domain AS base
    ON base.run_id = $baseline_run_id AND base.domain = cur.domain AND base.metric = cur.metric
WHERE cur.run_id = $run_id
ORDER BY cur.domain,
    list_position(['mrr', 'hit', 'ndcg', 'precision', 'recall'], split_part(cur.metric, '@', 1)),
    try_cast(nullif(split_part(cur.metric, '@', 2), '') AS INTEGER) NULLS FIRST;
