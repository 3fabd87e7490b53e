-- The worst samples of one run (optionally one candidate), for check's summary: per sample
-- and candidate, its result rows, the failed ones (sample errors), the graders that failed
-- on it (null scores), the rows its rubric failed, and its mean accuracy (0-100) and mean
-- grader score (0-1). Worst first: errors, then grader failures, then rubric failures,
-- then the lowest accuracy, then the lowest grader mean; the first error or grader failure
-- says why.
WITH r AS (
    SELECT
        sample_id,
        coalesce(candidate, '') AS candidate,
        count(*) AS rows_,
        count(*) FILTER (WHERE error IS NOT NULL) AS errors,
        count(*) FILTER (WHERE passed = false) AS failed,
        avg(accuracy) AS accuracy,
        min(error) AS error
    FROM results
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY ALL
), g AS (
    SELECT
        sample_id,
        coalesce(candidate, '') AS candidate,
        count(*) FILTER (WHERE score IS NULL) AS grader_errors,
        avg(score) AS grader_mean,
        min(grader || ': ' || reason) FILTER (WHERE score IS NULL) AS grader_error
    FROM grader_scores
    WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
    GROUP BY ALL
)
SELECT
    r.sample_id,
    r.candidate,
    r.rows_ AS result_rows,
    r.errors,
    coalesce(g.grader_errors, 0) AS grader_errors,
    r.failed,
    r.accuracy,
    g.grader_mean,
    coalesce(r.error, g.grader_error) AS why
FROM r
LEFT JOIN g USING (sample_id, candidate)
ORDER BY
    r.errors DESC,
    coalesce(g.grader_errors, 0) DESC,
    r.failed DESC,
    r.accuracy ASC NULLS LAST,
    g.grader_mean ASC NULLS LAST,
    r.sample_id,
    r.candidate
LIMIT $limit;
