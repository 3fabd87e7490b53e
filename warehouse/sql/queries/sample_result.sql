-- Everything the results table holds about one sample in one iteration of a run, and its
-- `answer` (answered, abstained, no answer, error) from the view result_scores.
SELECT r.*, s.answer
FROM results AS r
JOIN result_scores AS s USING (run_id, iteration, sample_id, candidate)
WHERE r.run_id = $run_id AND r.sample_id = $sample_id AND r.iteration = $iteration
  AND r.candidate = $candidate;
