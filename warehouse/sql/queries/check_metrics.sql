-- Every gateable metric of one run (optionally one candidate), in long form, each on its
-- own scale (engine.models.metrics: GATE_METRICS, listed all, null when the run has no
-- value): means of the per-sample metrics, pass_rate and error_rate as 0-1 shares, the
-- run's cost in dollars and its result rows. A row counts as an error when the sample
-- failed or a grader failed on it (a null grader score: grader errors are errors).
WITH r AS (
    SELECT results.*, f.sample_id IS NOT NULL AS grader_failed
    FROM results
    LEFT JOIN (
        SELECT DISTINCT iteration, sample_id, candidate
        FROM grader_scores
        WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
          AND score IS NULL
    ) AS f USING (iteration, sample_id, candidate)
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
)
SELECT metric, value FROM (
    SELECT
        avg(accuracy) AS accuracy,
        avg(completeness) AS completeness,
        avg(attribution) AS attribution,
        avg(coverage_percent) AS coverage_percent,
        avg(judge_faithfulness) AS judge_faithfulness,
        avg(judge_completeness) AS judge_completeness,
        avg(overall) AS overall,
        avg(CASE WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END) AS pass_rate,
        avg(claim_faithfulness) AS claim_faithfulness,
        avg(rag_correctness) AS rag_correctness,
        avg(rag_faithfulness) AS rag_faithfulness,
        avg(rag_precision) AS rag_precision,
        avg(rag_recall) AS rag_recall,
        avg(rag_relevance) AS rag_relevance,
        avg(rag_overall) AS rag_overall,
        avg(CASE WHEN error IS NULL AND NOT grader_failed THEN 0.0 ELSE 1.0 END) AS error_rate,
        count(*)::DOUBLE AS samples,
        sum(cost_usd) AS cost_usd
    FROM r
) UNPIVOT INCLUDE NULLS (value FOR metric IN (COLUMNS(*)))
UNION ALL
-- Conversations (one row each in conversation_scores): present only when the run has some.
SELECT 'conversation:' || metric AS metric, value FROM (
    SELECT
        avg(expectation_mean) AS expectation_mean,
        avg(expectation_pass_rate) AS expectation_pass_rate,
        avg(relevancy) AS relevancy,
        avg(knowledge_retention) AS knowledge_retention,
        avg(completeness) AS completeness,
        avg(role_adherence) AS role_adherence
    FROM conversation_scores
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    HAVING count(*) > 0
) UNPIVOT (value FOR metric IN (COLUMNS(*)))
UNION ALL
SELECT 'grader:' || grader AS metric, avg(score) AS value
FROM grader_scores
WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
GROUP BY grader
UNION ALL
SELECT 'retrieval:' || metric AS metric, avg(value) AS value
FROM retrieval_scores
WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
GROUP BY metric
UNION ALL
-- Tool-call metrics: means over the agent cases (a null order metric is left out).
SELECT 'tools:' || metric AS metric, avg(value) AS value
FROM tool_scores
WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
GROUP BY metric
ORDER BY metric;
