-- The runs whose judges were asked about an answer more than once, or that a jury scored
-- (table judge_asks), newest first: name, start and their judges.
SELECT a.run_id, any_value(r.name) AS name, min(r.started_at) AS started_at,
       string_agg(DISTINCT a.judge, ', ' ORDER BY a.judge) AS judges
FROM judge_asks AS a
JOIN runs AS r USING (run_id)
GROUP BY a.run_id
ORDER BY started_at DESC, a.run_id;
