-- Response spans of one sample and the ground-truth passage each matches (null: none).
SELECT response_start, response_end, chunk_id, page_url, matched_text, similarity
FROM highlights
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate
ORDER BY response_start, response_end;
