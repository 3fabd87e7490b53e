-- The graders that scored any of the runs $run_ids (Compare offers each as a metric).
SELECT DISTINCT grader
FROM grader_scores
WHERE run_id IN (SELECT unnest($run_ids))
ORDER BY grader;
