-- The runs of one series, newest first, with their baselines and judges (judge@prompt
-- version): what `evalhouse drift --series` picks its old and new judge from.
SELECT s.run_id, s.status, s.started_at, s.baseline_run_id,
       r.judge || '@' || coalesce(nullif(r.judge_prompt_version, ''), '-') AS judge
FROM run_series AS s
JOIN runs AS r USING (run_id)
WHERE s.series = $series
ORDER BY s.started_at DESC, s.run_id DESC;
