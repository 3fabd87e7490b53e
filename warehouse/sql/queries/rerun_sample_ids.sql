-- Sample ids of a run to evaluate again: the failed ones ($failed_only) or one domain's.
SELECT DISTINCT sample_id
FROM results
WHERE run_id = $run_id
  AND (NOT $failed_only OR error IS NOT NULL)
  AND ($domain IS NULL OR domain = $domain)
ORDER BY sample_id;
