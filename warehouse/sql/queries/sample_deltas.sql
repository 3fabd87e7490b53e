-- Per-sample deltas (challenger minus baseline, each the mean over iterations and
-- candidates) of ONE domain, for samples present in both runs: the input of the paired
-- bootstrap. Same filters as domain_metrics.
-- Every metric in its 0-100 form, from the view result_scores.
WITH filtered AS (
    SELECT run_id, sample_id,
           accuracy, completeness, attribution,
           -- the 0-100 forms (every <metric>_100 column of result_scores), under the
           -- metric names the dashboard keys them by
           COLUMNS('^(\w+)_100$') AS '\1'
    FROM result_scores
    WHERE run_id IN ($run_id, $baseline_run_id)
      AND domain = $domain
      AND ($candidate IS NULL OR candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, ai_provider))
      AND ($tag IS NULL OR list_contains(tags, $tag))
),
per_sample AS (
    SELECT run_id, sample_id,
           avg(accuracy) AS accuracy,
           avg(completeness) AS completeness,
           avg(attribution) AS attribution,
           avg(judge_faithfulness) AS judge_faithfulness,
           avg(judge_completeness) AS judge_completeness,
           avg(pass_rate) AS pass_rate,
           avg(claim_faithfulness) AS claim_faithfulness,
           avg(rag_correctness) AS rag_correctness,
           avg(rag_faithfulness) AS rag_faithfulness,
           avg(rag_precision) AS rag_precision,
           avg(rag_recall) AS rag_recall,
           avg(rag_relevance) AS rag_relevance,
           avg(rag_overall) AS rag_overall
    FROM filtered
    GROUP BY run_id, sample_id
)
SELECT
    cur.sample_id,
    cur.accuracy - base.accuracy AS accuracy_delta,
    cur.completeness - base.completeness AS completeness_delta,
    cur.attribution - base.attribution AS attribution_delta,
    cur.judge_faithfulness - base.judge_faithfulness AS judge_faithfulness_delta,
    cur.judge_completeness - base.judge_completeness AS judge_completeness_delta,
    cur.pass_rate - base.pass_rate AS pass_rate_delta,
    cur.claim_faithfulness - base.claim_faithfulness AS claim_faithfulness_delta,
    cur.rag_correctness - base.rag_correctness AS rag_correctness_delta,
    cur.rag_faithfulness - base.rag_faithfulness AS rag_faithfulness_delta,
    cur.rag_precision - base.rag_precision AS rag_precision_delta,
    cur.rag_recall - base.rag_recall AS rag_recall_delta,
    cur.rag_relevance - base.rag_relevance AS rag_relevance_delta,
    cur.rag_overall - base.rag_overall AS rag_overall_delta
FROM per_sample AS cur
JOIN per_sample AS base ON base.sample_id = cur.sample_id AND base.run_id = $baseline_run_id
WHERE cur.run_id = $run_id
ORDER BY cur.sample_id;
