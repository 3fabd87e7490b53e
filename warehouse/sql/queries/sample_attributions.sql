-- Mentions of the source (URL, domain, brand) in one sample's response.
SELECT type, matched_text, response_start, response_end, context
FROM attributions
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate
ORDER BY response_start;
