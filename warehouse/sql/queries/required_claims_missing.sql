-- Samples of one run (optionally one candidate) that miss a claim of importance `required`:
-- not found, or contradicted (the analyzer's own rule for `require_all_required`), counted
-- per result row (sample, iteration, candidate), beside the rows that have a required
-- claim at all. Read from the claims rows, so it holds whether or not the run itself set
-- `require_all_required`.
SELECT
    count(DISTINCT (iteration, sample_id, candidate))
        FILTER (WHERE NOT found) AS missing,
    count(DISTINCT (iteration, sample_id, candidate)) AS with_required
FROM claims
WHERE run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate)
  AND importance = 'required';
