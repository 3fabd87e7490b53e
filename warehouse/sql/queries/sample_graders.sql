-- Grader verdicts on one sample's output.
SELECT grader, score, passed, weight, reason
FROM grader_scores
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate
ORDER BY grader;
