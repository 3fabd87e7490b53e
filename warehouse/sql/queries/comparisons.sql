-- Every head-to-head comparison (compare-runs), newest first, with both sides' run names
-- and the all-domain win/tie/loss and Wilson 95% intervals of pairwise_summary. Optionally
-- only those between two runs (either way round).
SELECT
    s.comparison_id,
    s.run_a,
    s.candidate_a,
    ra.name AS name_a,
    s.run_b,
    s.candidate_b,
    rb.name AS name_b,
    s.judge,
    s.wins_a,
    s.ties,
    s.wins_b,
    s.inconsistent,
    s.errors,
    s.judged,
    s.a_win_rate,
    s.a_win_low,
    s.a_win_high,
    s.b_win_rate,
    s.b_win_low,
    s.b_win_high,
    s.compared_at
FROM pairwise_summary AS s
LEFT JOIN runs AS ra ON ra.run_id = s.run_a
LEFT JOIN runs AS rb ON rb.run_id = s.run_b
WHERE s.domain = '(all)'
  AND ($run_x IS NULL OR (s.run_a = $run_x AND s.run_b = $run_y)
       OR (s.run_a = $run_y AND s.run_b = $run_x))
ORDER BY s.compared_at DESC, s.comparison_id DESC;
