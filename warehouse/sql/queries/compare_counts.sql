-- Compare: per domain, how many paired samples improved, regressed or stayed unchanged
-- (same pairing and tolerance as compare_samples), most regressions first.
WITH scored AS (
    -- the chosen metric of both sides, in its 0-100 form (view result_scores:
    -- <metric>_100 for the metrics not on 0-100 already), or the
    -- grader named by $metric = 'grader:<id>'
    SELECT run_id, candidate, sample_id, domain, query, iteration,
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
    SELECT r.run_id, r.candidate, r.sample_id, r.domain, r.query, r.iteration, g.score * 100
    FROM result_scores AS r
    LEFT JOIN grader_scores AS g
        ON g.run_id = r.run_id AND g.iteration = r.iteration AND g.sample_id = r.sample_id
        AND g.candidate = r.candidate AND g.grader = substr($metric, 8)
    WHERE r.run_id IN ($run_id, $baseline_run_id) AND starts_with($metric, 'grader:')
),
base AS (
    SELECT sample_id, avg(score) AS score
    FROM scored
    WHERE run_id = $baseline_run_id
      AND ($baseline_candidate IS NULL OR candidate = $baseline_candidate)
    GROUP BY sample_id
),
chal AS (
    SELECT sample_id, any_value(domain) AS domain, avg(score) AS score
    FROM scored
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY sample_id
),
paired AS (
    SELECT chal.domain, chal.score - base.score AS delta
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
SELECT
    domain,
    count(*) AS samples,
    count(*) FILTER (WHERE delta > $tolerance) AS improved,
    count(*) FILTER (WHERE delta < -$tolerance) AS regressed,
    count(*) FILTER (WHERE abs(delta) <= $tolerance) AS unchanged,
    count(*) FILTER (WHERE delta IS NULL) AS not_scored,
    avg(delta) AS mean_delta,
    min(delta) AS worst_delta,
    -- the box of the per-sample changes (Compare's distribution chart)
    quantile_cont(delta, 0.25) AS q1_delta,
    median(delta) AS median_delta,
    quantile_cont(delta, 0.75) AS q3_delta,
    max(delta) AS best_delta
FROM paired
GROUP BY domain
ORDER BY regressed DESC, worst_delta ASC NULLS LAST, domain;
