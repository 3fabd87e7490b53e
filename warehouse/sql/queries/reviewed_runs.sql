-- The runs with reviewed samples (Judge agreement's run filter), newest first: name, start
-- and how many (review, metric) pairs each has in view review_pairs.
SELECT p.run_id, any_value(r.name) AS name, min(r.started_at) AS started_at, count(*) AS pairs
FROM review_pairs AS p
JOIN runs AS r USING (run_id)
GROUP BY p.run_id
ORDER BY started_at DESC, p.run_id;
