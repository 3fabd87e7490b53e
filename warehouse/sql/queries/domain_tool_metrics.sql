-- Overview, agent tool calls: per domain and tool-call metric (view tool_scores, 0-100; the
-- redundant-calls count has no 0-100 form and is left to check and SQL), the mean of a run
-- and of a baseline under the Overview filters, and the delta (its noise interval:
-- tool_sample_deltas_all, as domain_retrieval_metrics). Only agent cases (with expected
-- tools) have rows. Metrics in the order of engine.models.metrics.TOOL_METRICS.
-- Filters: $candidate, $providers, $tag.
WITH filtered AS (
    SELECT run_id, sample_id, domain, metric, score
    FROM tool_scores
    WHERE run_id IN ($run_id, $baseline_run_id) AND score IS NOT NULL
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
    list_position(['tool_precision', 'tool_recall', 'tool_f1', 'argument_correctness',
                   'order_exact', 'order_subsequence', 'task_completion'], cur.metric);
