-- One page of a run's result rows (optionally one domain, or ids/queries containing
-- $search), with the total row count for the pager; `answer` from the view result_scores
-- (answered, abstained, no answer, error).
SELECT
    sample_id, iteration, candidate, domain, ai_provider, query, answer,
    accuracy, completeness, attribution, error,
    count(*) OVER () AS total_rows
FROM result_scores
WHERE run_id = $run_id
  AND ($domain IS NULL OR domain = $domain)
  AND ($search IS NULL OR contains(lower(sample_id), lower($search))
       OR contains(lower(query), lower($search)))
ORDER BY sample_id, iteration, candidate
LIMIT $limit OFFSET $offset;
