-- Every metric in its 0-100 form (DESIGN.md): 1-5 scores map to (s - 1) * 25, 0-1 ratios to
-- x * 100, the rubric pass to 0 or 100; the analyzer metrics are 0-100 already.
-- Compare: per domain, how many paired samples improved, regressed or stayed unchanged
-- (same pairing and tolerance as compare_samples), most regressions first.
WITH base AS (
    SELECT sample_id,
           avg(CASE $metric
               WHEN 'accuracy' THEN accuracy
               WHEN 'completeness' THEN completeness
               WHEN 'attribution' THEN attribution
               WHEN 'judge_faithfulness' THEN (judge_faithfulness - 1) * 25
               WHEN 'judge_completeness' THEN (judge_completeness - 1) * 25
               WHEN 'pass_rate' THEN CASE WHEN passed THEN 100.0 WHEN NOT passed THEN 0.0 END
               WHEN 'claim_faithfulness' THEN claim_faithfulness * 100
               WHEN 'rag_correctness' THEN (rag_correctness - 1) * 25
               WHEN 'rag_faithfulness' THEN (rag_faithfulness - 1) * 25
               WHEN 'rag_precision' THEN (rag_precision - 1) * 25
               WHEN 'rag_recall' THEN (rag_recall - 1) * 25
               WHEN 'rag_relevance' THEN (rag_relevance - 1) * 25
               WHEN 'rag_overall' THEN (rag_overall - 1) * 25
           END) AS score
    FROM results
    WHERE run_id = $baseline_run_id
      AND ($baseline_candidate IS NULL OR candidate = $baseline_candidate)
    GROUP BY sample_id
),
chal AS (
    SELECT sample_id, any_value(domain) AS domain,
           avg(CASE $metric
               WHEN 'accuracy' THEN accuracy
               WHEN 'completeness' THEN completeness
               WHEN 'attribution' THEN attribution
               WHEN 'judge_faithfulness' THEN (judge_faithfulness - 1) * 25
               WHEN 'judge_completeness' THEN (judge_completeness - 1) * 25
               WHEN 'pass_rate' THEN CASE WHEN passed THEN 100.0 WHEN NOT passed THEN 0.0 END
               WHEN 'claim_faithfulness' THEN claim_faithfulness * 100
               WHEN 'rag_correctness' THEN (rag_correctness - 1) * 25
               WHEN 'rag_faithfulness' THEN (rag_faithfulness - 1) * 25
               WHEN 'rag_precision' THEN (rag_precision - 1) * 25
               WHEN 'rag_recall' THEN (rag_recall - 1) * 25
               WHEN 'rag_relevance' THEN (rag_relevance - 1) * 25
               WHEN 'rag_overall' THEN (rag_overall - 1) * 25
           END) AS score
    FROM results
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY sample_id
),
paired AS (
    SELECT chal.domain, chal.score - base.score AS delta
    FROM chal JOIN base USING (sample_id)
)
SELECT
    domain,
    count(*) AS samples,
    count(*) FILTER (WHERE delta > $tolerance) AS improved,
    count(*) FILTER (WHERE delta < -$tolerance) AS regressed,
    count(*) FILTER (WHERE abs(delta) <= $tolerance) AS unchanged,
    count(*) FILTER (WHERE delta IS NULL) AS not_scored,
    avg(delta) AS mean_delta,
    min(delta) AS worst_delta
FROM paired
GROUP BY domain
ORDER BY regressed DESC, worst_delta ASC NULLS LAST, domain;
