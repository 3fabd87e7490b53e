-- Overview: per-domain means of a run and of a baseline under the same filters and the
-- deltas (the noise interval of each delta is the paired bootstrap over samples of
-- sample_deltas_all, engine/noise.py). abstention_rate: the share (0-100) of the domain's
-- scored rows (errors left out) whose response gave no answer (empty or abstained), shown
-- beside the pass rate, which counts those rows as not passed.
-- Filters: $candidate (null = all), $providers (list, null = all), $tag (null = all).
-- Every metric in its 0-100 form, from the view result_scores.
WITH filtered AS (
    SELECT run_id, iteration, sample_id, domain, error, answer,
           accuracy, completeness, attribution,
           -- the 0-100 forms (every <metric>_100 column of result_scores), under the
           -- metric names the dashboard keys them by
           COLUMNS('^(\w+)_100$') AS '\1'
    FROM result_scores
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
           avg(CASE WHEN answer IN ('no answer', 'abstained') THEN 100.0
                    WHEN answer = 'answered' THEN 0.0 END) AS abstention_rate,
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
    GROUP BY run_id, domain
)
SELECT
    cur.domain,
    cur.samples,
    cur.iterations,
    cur.errors,
    cur.abstention_rate,
    base.abstention_rate AS baseline_abstention_rate,
    cur.accuracy AS accuracy_mean,
    cur.completeness AS completeness_mean,
    cur.attribution AS attribution_mean,
    cur.judge_faithfulness AS judge_faithfulness_mean,
    cur.judge_completeness AS judge_completeness_mean,
    cur.pass_rate AS pass_rate_mean,
    cur.claim_faithfulness AS claim_faithfulness_mean,
    cur.rag_correctness AS rag_correctness_mean,
    cur.rag_faithfulness AS rag_faithfulness_mean,
    cur.rag_precision AS rag_precision_mean,
    cur.rag_recall AS rag_recall_mean,
    cur.rag_relevance AS rag_relevance_mean,
    cur.rag_overall AS rag_overall_mean,
    base.accuracy AS baseline_accuracy_mean,
    base.completeness AS baseline_completeness_mean,
    base.attribution AS baseline_attribution_mean,
    base.judge_faithfulness AS baseline_judge_faithfulness_mean,
    base.judge_completeness AS baseline_judge_completeness_mean,
    base.pass_rate AS baseline_pass_rate_mean,
    base.claim_faithfulness AS baseline_claim_faithfulness_mean,
    base.rag_correctness AS baseline_rag_correctness_mean,
    base.rag_faithfulness AS baseline_rag_faithfulness_mean,
    base.rag_precision AS baseline_rag_precision_mean,
    base.rag_recall AS baseline_rag_recall_mean,
    base.rag_relevance AS baseline_rag_relevance_mean,
    base.rag_overall AS baseline_rag_overall_mean,
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
FROM per_domain AS cur
LEFT JOIN per_domain AS base ON base.run_id = $baseline_run_id AND base.domain = cur.domain
WHERE cur.run_id = $run_id
ORDER BY cur.domain;
