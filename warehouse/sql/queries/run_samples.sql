-- One page of a run's result rows with the total row count for the pager; `answer` from the
-- view result_scores (answered, abstained, no answer, error). Filters, each optional:
-- $domain; $search in the sample id, query, response or an expected claim's text; $outcome
-- passed / failed (the rubric's fail, or a required claim missing while the run requires
-- them all: flag missing_required_claim, engine.scoring.completeness) / error; $flag one review flag (abstained, low_confidence,
-- contradicted_claim...); $metric (an analyzer metric, 0-100) between $low and $high.
-- With $flag low_confidence the rows come least sure first: `lowest_confidence`, the lowest
-- confidence among the row's claim verdicts (the flag marks a row with one below the bar),
-- ascending; otherwise by sample, iteration and candidate.
WITH sure AS (
    SELECT iteration, sample_id, candidate, min(confidence) AS lowest_confidence
    FROM verdicts
    WHERE run_id = $run_id AND $flag = 'low_confidence'
    GROUP BY ALL
)
SELECT
    s.sample_id, s.iteration, s.candidate, s.domain, s.ai_provider, s.query, s.answer,
    s.accuracy, s.completeness, s.attribution, s.error, u.lowest_confidence,
    count(*) OVER () AS total_rows
FROM result_scores s
JOIN results r USING (run_id, iteration, sample_id, candidate)
LEFT JOIN sure u USING (iteration, sample_id, candidate)
WHERE s.run_id = $run_id
  AND ($domain IS NULL OR s.domain = $domain)
  AND ($search IS NULL
       OR contains(lower(s.sample_id), lower($search))
       OR contains(lower(s.query), lower($search))
       OR contains(lower(coalesce(r.response, '')), lower($search))
       OR EXISTS (
           SELECT 1 FROM claims c
           WHERE c.run_id = s.run_id AND c.iteration = s.iteration
             AND c.sample_id = s.sample_id AND c.candidate = s.candidate
             AND contains(lower(c.claim_text), lower($search))))
  AND ($outcome IS NULL
       OR ($outcome = 'passed' AND r.passed)
       OR ($outcome = 'failed'
           AND (NOT r.passed OR list_contains(r.flags, 'missing_required_claim')))
       OR ($outcome = 'error' AND s.error IS NOT NULL))
  AND ($flag IS NULL OR list_contains(r.flags, $flag))
  AND ($metric IS NULL OR (CASE $metric
        WHEN 'accuracy' THEN s.accuracy
        WHEN 'completeness' THEN s.completeness
        WHEN 'attribution' THEN s.attribution
    END) BETWEEN $low AND $high)
ORDER BY CASE WHEN $flag = 'low_confidence' THEN u.lowest_confidence END ASC NULLS LAST,
         s.sample_id, s.iteration, s.candidate
LIMIT $limit OFFSET $offset;
