-- Where each ground-truth passage of one sample was retrieved: the 'rank:<passage>' rows of
-- scorer 'retrieval' (rank null: not retrieved), how it was matched and why; found passages
-- first, by rank.
SELECT substr(metric, length('rank:') + 1) AS passage, value::INTEGER AS rank,
       label AS matched_by, reason
FROM sample_scores
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate AND scorer = 'retrieval' AND starts_with(metric, 'rank:')
ORDER BY rank NULLS LAST, passage;
