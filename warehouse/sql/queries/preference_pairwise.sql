-- Head-to-head judgments that involve $run_id (as run A, run B, or the comparison itself)
-- and that name a winner the same way in both orders (position-consistent, no error), with
-- the question and both answers: the pairwise half of `evalhouse export RUN --format dpo`.
SELECT
    p.comparison_id, p.run_a, p.run_b, p.iteration, p.sample_id, p.winner, p.judge,
    p.score_a, p.score_b, a.query, a.response AS response_a, b.response AS response_b
FROM pairwise AS p
JOIN results AS a
    ON a.run_id = p.run_a AND a.iteration = p.iteration AND a.sample_id = p.sample_id
    AND a.candidate = coalesce(p.candidate, '')
JOIN results AS b
    ON b.run_id = p.run_b AND b.iteration = p.iteration AND b.sample_id = p.sample_id
    AND b.candidate = coalesce(p.candidate_b, p.candidate, '')
WHERE $run_id IN (p.comparison_id, p.run_a, p.run_b)
  AND p.consistent
  AND p.winner IN ('a', 'b')
  AND p.error IS NULL
  AND trim(coalesce(a.response, '')) <> ''
  AND trim(coalesce(b.response, '')) <> ''
ORDER BY p.comparison_id, p.sample_id, p.iteration
