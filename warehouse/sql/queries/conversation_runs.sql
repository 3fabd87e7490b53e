-- Runs with conversation scores (multi-turn test sets), newest first.
SELECT r.run_id, r.name, r.started_at, r.status,
       count(DISTINCT c.sample_id) AS conversations
FROM runs r
JOIN conversation_scores c USING (run_id)
GROUP BY r.run_id, r.name, r.started_at, r.status
ORDER BY r.started_at DESC, r.run_id DESC;
