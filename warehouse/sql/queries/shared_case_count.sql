-- How many cases the runs $run_id and $baseline_run_id both scored with the same content
-- (same id and case hash), and how many each scored in all.
SELECT
    (SELECT count(*) FROM cases WHERE run_id = $run_id) AS run_cases,
    (SELECT count(*) FROM cases WHERE run_id = $baseline_run_id) AS baseline_cases,
    (
        SELECT count(*)
        FROM cases AS c
        JOIN cases AS b ON b.sample_id = c.sample_id AND b.sample_hash = c.sample_hash
        WHERE c.run_id = $run_id AND b.run_id = $baseline_run_id
    ) AS shared;
