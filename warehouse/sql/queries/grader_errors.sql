-- Per grader of a run (optionally one candidate): its results and the ones it failed on
-- (null scores), from the view grader_summary; `check` names the graders that failed.
SELECT grader, sum(results)::BIGINT AS results, sum(errors)::BIGINT AS errors
FROM grader_summary
WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
GROUP BY grader
ORDER BY grader;
