-- The candidate lanes of one run ('' is the recorded or target lane), for --candidate checks.
SELECT DISTINCT candidate FROM results WHERE run_id = $run_id ORDER BY candidate;
