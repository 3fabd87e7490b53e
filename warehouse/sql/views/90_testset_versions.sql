-- The versions of every test set: each distinct content of a test set with one name
-- (runs.test_set_cases_hash per runs.test_set_name: the ids and contents of its cases, not
-- the file's layout) is numbered 1, 2, 3... in the order it was first run. Runs written
-- before test sets had versions (no cases hash) have none.
CREATE OR REPLACE VIEW testset_versions AS
WITH firsts AS (
    SELECT
        test_set_name,
        test_set_cases_hash AS cases_hash,
        min(started_at) AS first_run_at,
        arg_min(run_id, started_at) AS first_run_id,
        count(*) AS runs
    FROM runs
    WHERE test_set_name <> '' AND test_set_cases_hash <> ''
    GROUP BY test_set_name, test_set_cases_hash
),
sizes AS (
    SELECT test_set_name, cases_hash, count(DISTINCT sample_id) AS cases
    FROM testset_cases
    GROUP BY test_set_name, cases_hash
)
SELECT
    f.test_set_name,
    row_number() OVER (
        PARTITION BY f.test_set_name ORDER BY f.first_run_at, f.first_run_id
    ) AS version,
    f.cases_hash,
    coalesce(s.cases, 0) AS cases,
    f.first_run_id,
    f.first_run_at,
    f.runs
FROM firsts AS f
LEFT JOIN sizes AS s USING (test_set_name, cases_hash);
