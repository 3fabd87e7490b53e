-- One metric's value per (run, domain, sample) of the given runs, in its 0-100 form, each the
-- mean over the sample's iterations (and candidates, or the one $candidate): what a paired
-- bootstrap between two of these runs resamples (engine/noise.py), for check --baseline and
-- the steps of Trends. Built-in metrics come from the view result_scores (accuracy,
-- completeness, attribution and every <metric>_100 column, unpivoted so a new 0-100 column
-- is picked up by name), 'grader:<id>' from grader_scores (x 100) and 'retrieval:<metric>'
-- from retrieval_scores. A sample without a value for the metric has no row.
WITH builtin AS (
    SELECT run_id, domain, sample_id, regexp_replace(name, '_100$', '') AS metric, value
    FROM (
        UNPIVOT (
            SELECT run_id, domain, sample_id,
                   COLUMNS('^(accuracy|completeness|attribution|\w+_100)$')
            FROM result_scores
            WHERE list_contains($run_ids, run_id)
              AND ($candidate IS NULL OR candidate = $candidate)
              AND NOT starts_with($metric, 'grader:') AND NOT starts_with($metric, 'retrieval:')
        )
        ON COLUMNS(* EXCLUDE (run_id, domain, sample_id))
        INTO NAME name VALUE value
    )
),
scored AS (
    SELECT run_id, domain, sample_id, value FROM builtin WHERE metric = $metric
    UNION ALL
    SELECT g.run_id, r.domain, g.sample_id, g.score * 100
    FROM grader_scores AS g
    JOIN results AS r USING (run_id, iteration, sample_id, candidate)
    WHERE list_contains($run_ids, g.run_id) AND starts_with($metric, 'grader:')
      AND g.grader = substr($metric, 8) AND g.score IS NOT NULL
      AND ($candidate IS NULL OR g.candidate = $candidate)
    UNION ALL
    SELECT run_id, domain, sample_id, score
    FROM retrieval_scores
    WHERE list_contains($run_ids, run_id) AND starts_with($metric, 'retrieval:')
      AND metric = substr($metric, 11) AND value IS NOT NULL
      AND ($candidate IS NULL OR candidate = $candidate)
)
SELECT run_id, any_value(domain) AS domain, sample_id, avg(value) AS value
FROM scored
WHERE value IS NOT NULL
GROUP BY run_id, sample_id
ORDER BY run_id, sample_id;
