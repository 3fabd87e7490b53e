-- The expected claims of every sample of a run (first iteration, one candidate), in order.
SELECT sample_id, claim_id, claim_text, importance, found
FROM claims
WHERE run_id = $run_id
  AND candidate = $candidate
  AND iteration = (SELECT min(iteration) FROM claims WHERE run_id = $run_id AND candidate = $candidate)
ORDER BY sample_id, claim_id
