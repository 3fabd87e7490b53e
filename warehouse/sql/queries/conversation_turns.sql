-- Every turn of one conversation in one iteration and lane, in order, with the grading of
-- its assistant turns.
SELECT turn, role, content, expected, generated, window_start, expectation_score,
       expectation_passed, relevant, in_role, attrition, reason, latency_ms, cost_usd
FROM turns
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate
ORDER BY turn;
