-- The (iteration, candidate) pairs a sample of a run was scored in.
SELECT iteration, candidate
FROM results
WHERE run_id = $run_id AND sample_id = $sample_id
ORDER BY iteration, candidate;
