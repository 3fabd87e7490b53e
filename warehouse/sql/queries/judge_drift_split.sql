-- A run's observed change against $baseline_run_id per judge metric (0-100, view
-- result_scores: run mean - baseline mean), beside the judge drift of the run's latest
-- drift check against that baseline (engine.drift.split_delta takes the drift out).
WITH latest AS (
    SELECT check_id
    FROM judge_drift
    WHERE run_id = $run_id AND baseline_run_id = $baseline_run_id
    ORDER BY checked_at DESC, check_id DESC
    LIMIT 1
),
means AS (
    SELECT run_id,
           -- every <metric>_100 column of result_scores, under the metric's name
           avg(COLUMNS('^(\w+)_100$')) AS '\1'
    FROM result_scores
    WHERE run_id IN ($run_id, $baseline_run_id) AND candidate = ''
    GROUP BY run_id
),
long AS (
    SELECT m.run_id, u.metric, u.score
    FROM means AS m
    CROSS JOIN LATERAL (
        VALUES ('judge_faithfulness', m.judge_faithfulness),
               ('judge_completeness', m.judge_completeness), ('pass_rate', m.pass_rate),
               ('claim_faithfulness', m.claim_faithfulness),
               ('rag_correctness', m.rag_correctness), ('rag_faithfulness', m.rag_faithfulness),
               ('rag_precision', m.rag_precision), ('rag_recall', m.rag_recall),
               ('rag_relevance', m.rag_relevance), ('rag_overall', m.rag_overall)
    ) AS u(metric, score)
)
SELECT d.metric, d.old_judge, d.new_judge, d.n,
       n.score - o.score AS observed_delta,
       d.mean_shift, d.ci_low, d.ci_high
FROM judge_drift AS d
JOIN latest USING (check_id)
LEFT JOIN long AS n ON n.run_id = $run_id AND n.metric = d.metric
LEFT JOIN long AS o ON o.run_id = $baseline_run_id AND o.metric = d.metric
ORDER BY d.metric;
