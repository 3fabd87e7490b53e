-- A run's series and baseline (view run_series, the one definition) with both runs' judges
-- as judge@prompt-version: a drift check runs when the two differ.
SELECT s.run_id, s.series, s.baseline_run_id,
       r.judge || '@' || coalesce(nullif(r.judge_prompt_version, ''), '-') AS judge,
       b.judge || '@' || coalesce(nullif(b.judge_prompt_version, ''), '-') AS baseline_judge
FROM run_series AS s
JOIN runs AS r USING (run_id)
LEFT JOIN runs AS b ON b.run_id = s.baseline_run_id
WHERE s.run_id = $run_id;
