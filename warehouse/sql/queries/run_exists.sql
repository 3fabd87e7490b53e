-- Whether a run id is known to the warehouse (in runs or results).
SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = $run_id)
    OR EXISTS (SELECT 1 FROM results WHERE run_id = $run_id) AS known;
