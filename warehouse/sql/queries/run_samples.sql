-- One page of a run's result rows (optionally one domain, or ids/queries containing
-- $search), with the total row count for the pager.
SELECT
    sample_id, iteration, candidate, domain, ai_provider, query,
    accuracy, completeness, attribution, error,
    count(*) OVER () AS total_rows
FROM results
WHERE run_id = $run_id
  AND ($domain IS NULL OR domain = $domain)
  AND ($search IS NULL OR contains(lower(sample_id), lower($search))
       OR contains(lower(query), lower($search)))
ORDER BY sample_id, iteration, candidate
LIMIT $limit OFFSET $offset;
