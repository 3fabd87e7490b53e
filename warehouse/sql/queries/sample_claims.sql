-- Expected claims of one sample: found (with evidence) or missing, and the status
-- (found / contradicted / missing; null in parts written before it existed).
SELECT claim_id, claim_text, importance, found, evidence, similarity,
       response_start, response_end,
       status
FROM claims
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate
ORDER BY found, claim_id;
