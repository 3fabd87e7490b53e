-- The answer-synthesis low-faithfulness analysis of each iteration (and candidate) of a run:
-- the latest iteration_metrics record of each, its JSON as stored (categories with counts
-- and examples, insight text), in iteration order.
SELECT iteration, candidate, samples, judge_faithfulness_mean, judge_completeness_mean,
       pass_rate, low_faithfulness
FROM iteration_metrics
WHERE run_id = $run_id
QUALIFY row_number() OVER (
    PARTITION BY iteration, candidate ORDER BY finished_at DESC
) = 1
ORDER BY iteration, candidate;
