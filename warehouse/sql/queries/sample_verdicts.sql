-- The judge's verdict on every claim of one sample's response.
SELECT claim_index, claim_text, verdict, evidence, similarity, rule,
       response_start, response_end
FROM verdicts
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate
ORDER BY claim_index;
