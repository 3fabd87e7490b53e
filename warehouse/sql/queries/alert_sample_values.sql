-- Per sample (and candidate), a run's mean of one per-sample metric over its iterations,
-- in one domain or all: what a "worse than baseline beyond noise" alert pairs between a
-- run and its baseline. Error rows carry no score and are left out.
SELECT
    sample_id,
    coalesce(candidate, '') AS candidate,
    avg(CASE $metric
        WHEN 'accuracy' THEN accuracy
        WHEN 'completeness' THEN completeness
        WHEN 'attribution' THEN attribution
        WHEN 'judge_faithfulness' THEN judge_faithfulness
        WHEN 'judge_completeness' THEN judge_completeness
        WHEN 'claim_faithfulness' THEN claim_faithfulness
        WHEN 'rag_overall' THEN rag_overall
        WHEN 'overall' THEN overall
    END) AS value
FROM results
WHERE run_id = $run_id AND ($domain = '' OR domain = $domain) AND error IS NULL
GROUP BY 1, 2
