-- The cases a run scored, as it read them (table cases), for `evalhouse export`.
SELECT sample_id, case_json
FROM cases
WHERE run_id = $run_id
ORDER BY sample_id;
