-- The cases of every test-set version (view testset_versions), one row per case id: every
-- run of a version loaded the same cases, so any of them gives the content.
CREATE OR REPLACE VIEW testset_version_cases AS
WITH cases AS (
    SELECT
        test_set_name,
        cases_hash,
        sample_id,
        arg_min(sample_hash, run_id) AS sample_hash,
        arg_min(case_json, run_id) AS case_json
    FROM testset_cases
    GROUP BY test_set_name, cases_hash, sample_id
)
SELECT v.test_set_name, v.version, v.cases_hash, c.sample_id, c.sample_hash, c.case_json
FROM testset_versions AS v
JOIN cases AS c USING (test_set_name, cases_hash);
