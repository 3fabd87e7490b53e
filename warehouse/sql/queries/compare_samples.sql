-- Compare: per sample, baseline vs challenger score of one metric (mean over iterations;
-- a null candidate means every candidate of that run), classified with a tolerance.
-- One page, sorted by the largest regression first; total_rows is for the pager.
-- The baseline and the challenger may be the same run with two different candidates.
-- Each side's `answer` (answered, abstained, no answer, error) is its first iteration's.
WITH scored AS (
    -- the chosen metric of both sides, in its 0-100 form (view result_scores:
    -- <metric>_100 for the metrics not on 0-100 already), or the
    -- grader named by $metric = 'grader:<id>'
    SELECT run_id, candidate, sample_id, domain, query, iteration, answer,
           CASE $metric
               WHEN 'accuracy' THEN accuracy
               WHEN 'completeness' THEN completeness
               WHEN 'attribution' THEN attribution
               WHEN 'judge_faithfulness' THEN judge_faithfulness_100
               WHEN 'judge_completeness' THEN judge_completeness_100
               WHEN 'pass_rate' THEN pass_rate_100
               WHEN 'claim_faithfulness' THEN claim_faithfulness_100
               WHEN 'rag_correctness' THEN rag_correctness_100
               WHEN 'rag_faithfulness' THEN rag_faithfulness_100
               WHEN 'rag_precision' THEN rag_precision_100
               WHEN 'rag_recall' THEN rag_recall_100
               WHEN 'rag_relevance' THEN rag_relevance_100
               WHEN 'rag_overall' THEN rag_overall_100
           END AS score
    FROM result_scores
    WHERE run_id IN ($run_id, $baseline_run_id) AND NOT starts_with($metric, 'grader:')
    UNION ALL
    -- a grader's score (0-1) x 100; a sample the grader did not score counts as not scored
    SELECT r.run_id, r.candidate, r.sample_id, r.domain, r.query, r.iteration, r.answer, g.score * 100
    FROM result_scores AS r
    LEFT JOIN grader_scores AS g
        ON g.run_id = r.run_id AND g.iteration = r.iteration AND g.sample_id = r.sample_id
        AND g.candidate = r.candidate AND g.grader = substr($metric, 8)
    WHERE r.run_id IN ($run_id, $baseline_run_id) AND starts_with($metric, 'grader:')
),
base AS (
    SELECT sample_id, avg(score) AS score, arg_min(answer, iteration) AS answer
    FROM scored
    WHERE run_id = $baseline_run_id
      AND ($baseline_candidate IS NULL OR candidate = $baseline_candidate)
    GROUP BY sample_id
),
chal AS (
    SELECT sample_id, any_value(domain) AS domain, any_value(query) AS query,
           min(iteration) AS iteration, avg(score) AS score,
           arg_min(answer, iteration) AS answer
    FROM scored
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY sample_id
),
paired AS (
    SELECT
        chal.sample_id, chal.domain, chal.query, chal.iteration,
        base.answer AS baseline_answer, chal.answer AS challenger_answer,
        base.score AS baseline_score, chal.score AS challenger_score,
        chal.score - base.score AS delta,
        CASE
            WHEN base.score IS NULL OR chal.score IS NULL THEN 'not scored'
            WHEN chal.score - base.score > $tolerance THEN 'improved'
            WHEN chal.score - base.score < -$tolerance THEN 'regressed'
            ELSE 'unchanged'
        END AS status
    FROM chal JOIN base USING (sample_id)
    -- with $shared_only, only the cases both runs scored with the same content (the two
    -- runs may have scored different versions of the test set)
    WHERE NOT $shared_only OR sample_id IN (
        SELECT c.sample_id
        FROM cases AS c
        JOIN cases AS b ON b.sample_id = c.sample_id AND b.sample_hash = c.sample_hash
        WHERE c.run_id = $run_id AND b.run_id = $baseline_run_id
    )
)
SELECT sample_id, domain, query, baseline_score, challenger_score, delta, status,
       baseline_answer, challenger_answer, iteration,
       count(*) OVER () AS total_rows
FROM paired
WHERE ($status IS NULL OR status = $status) AND ($domain IS NULL OR domain = $domain)
ORDER BY delta ASC NULLS LAST, sample_id
LIMIT $limit OFFSET $offset;
