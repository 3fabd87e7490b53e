-- Every result row with each metric in its 0-100 form (DESIGN.md): 1-5 scores map to
-- (s - 1) * 25, 0-1 ratios to x * 100, the rubric pass to 0 or 100; the analyzer metrics
-- are 0-100 already and keep their names. A converted metric is named <metric>_100: a
-- column named after a metric always holds it on the metric's own scale
-- (engine.models.metrics). The one place this conversion is written in SQL: the
-- dashboard's queries and analysts read it instead of repeating it. `answer` says whether
-- the response answered at all: error (not scored), no answer (empty response), abstained
-- (declined, deflected, said it does not know) or answered; every list of samples shows it.
-- `passed`, `overall`, `latency_ms` and `cost_usd` are the results' own (what the run header
-- cards read beside `answer`).
CREATE OR REPLACE VIEW result_scores AS
SELECT
    run_id, iteration, sample_id, candidate, domain, ai_provider, query, tags, error,
    CASE
        WHEN error IS NOT NULL THEN 'error'
        WHEN trim(coalesce(response, '')) = '' THEN 'no answer'
        WHEN abstained THEN 'abstained'
        ELSE 'answered'
    END AS answer,
    accuracy,
    completeness,
    attribution,
    (judge_faithfulness - 1) * 25 AS judge_faithfulness_100,
    (judge_completeness - 1) * 25 AS judge_completeness_100,
    CASE WHEN passed THEN 100.0 WHEN NOT passed THEN 0.0 END AS pass_rate_100,
    claim_faithfulness * 100 AS claim_faithfulness_100,
    (rag_correctness - 1) * 25 AS rag_correctness_100,
    (rag_faithfulness - 1) * 25 AS rag_faithfulness_100,
    (rag_precision - 1) * 25 AS rag_precision_100,
    (rag_recall - 1) * 25 AS rag_recall_100,
    (rag_relevance - 1) * 25 AS rag_relevance_100,
    (rag_overall - 1) * 25 AS rag_overall_100,
    passed,
    overall,
    latency_ms,
    cost_usd
FROM results;
