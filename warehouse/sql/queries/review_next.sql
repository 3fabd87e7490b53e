-- What to review next in a run: its scored samples nobody has reviewed, those where the
-- machines disagree first (the analyzer's accuracy is good, at least $good, while the judge's
-- rubric failed it, or the other way round), then those with the least sure claim verdict
-- (verdicts.confidence), at most $limit rows.
WITH sure AS (
    SELECT iteration, sample_id, candidate,
           min(confidence) AS lowest_confidence,
           count(*) FILTER (WHERE confidence < $unsure_below) AS unsure_verdicts
    FROM verdicts
    WHERE run_id = $run_id
    GROUP BY ALL
),
reviewed AS (
    SELECT DISTINCT iteration, sample_id, candidate FROM reviews WHERE run_id = $run_id
)
SELECT
    r.sample_id, r.iteration, r.candidate, r.domain, r.query,
    (r.passed IS NOT NULL AND r.accuracy IS NOT NULL AND r.passed <> (r.accuracy >= $good))
        AS machines_disagree,
    s.lowest_confidence,
    coalesce(s.unsure_verdicts, 0) AS unsure_verdicts,
    r.accuracy,
    r.passed
FROM results AS r
LEFT JOIN sure AS s USING (iteration, sample_id, candidate)
WHERE r.run_id = $run_id
  AND r.error IS NULL
  AND NOT EXISTS (
      SELECT 1 FROM reviewed AS v
      WHERE v.iteration = r.iteration AND v.sample_id = r.sample_id
        AND v.candidate = r.candidate
  )
ORDER BY machines_disagree DESC, s.lowest_confidence ASC NULLS LAST, r.sample_id, r.iteration
LIMIT $limit
