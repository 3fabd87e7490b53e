-- Every run whose judge (judge@prompt version) differs from its baseline's: the events
-- Trends marks. A run's judge change is an event even before any drift check ran.
SELECT s.run_id, s.series, s.baseline_run_id, r.started_at, r.name AS run_name,
       b.judge || '@' || coalesce(nullif(b.judge_prompt_version, ''), '-') AS old_judge,
       r.judge || '@' || coalesce(nullif(r.judge_prompt_version, ''), '-') AS new_judge
FROM run_series AS s
JOIN runs AS r USING (run_id)
JOIN runs AS b ON b.run_id = s.baseline_run_id
WHERE r.judge IS DISTINCT FROM b.judge
   OR coalesce(r.judge_prompt_version, '') IS DISTINCT FROM coalesce(b.judge_prompt_version, '')
ORDER BY r.started_at;
