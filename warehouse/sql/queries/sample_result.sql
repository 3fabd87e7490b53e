-- Everything the results table holds about one sample in one iteration of a run.
SELECT *
FROM results
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate;
