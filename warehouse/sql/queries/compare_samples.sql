-- Every metric in its 0-100 form (DESIGN.md): 1-5 scores map to (s - 1) * 25, 0-1 ratios to
-- x * 100, the rubric pass to 0 or 100; the analyzer metrics are 0-100 already.
-- Compare: per sample, baseline vs challenger score of one metric (mean over iterations;
-- a null candidate means every candidate of that run), classified with a tolerance.
-- One page, sorted by the largest regression first; total_rows is for the pager.
-- The baseline and the challenger may be the same run with two different candidates.
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
    SELECT sample_id, any_value(domain) AS domain, any_value(query) AS query,
           min(iteration) AS iteration,
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
    SELECT
        chal.sample_id, chal.domain, chal.query, chal.iteration,
        base.score AS baseline_score, chal.score AS challenger_score,
        chal.score - base.score AS delta,
        CASE
            WHEN base.score IS NULL OR chal.score IS NULL THEN 'not scored'
            WHEN chal.score - base.score > $tolerance THEN 'improved'
            WHEN chal.score - base.score < -$tolerance THEN 'regressed'
            ELSE 'unchanged'
        END AS status
    FROM chal JOIN base USING (sample_id)
)
SELECT sample_id, domain, query, baseline_score, challenger_score, delta, status, iteration,
       count(*) OVER () AS total_rows
FROM paired
WHERE ($status IS NULL OR status = $status) AND ($domain IS NULL OR domain = $domain)
ORDER BY delta ASC NULLS LAST, sample_id
LIMIT $limit OFFSET $offset;
