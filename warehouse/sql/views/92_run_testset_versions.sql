-- The test-set version every run scored (view testset_versions); null for runs written
-- before test sets had versions.
CREATE OR REPLACE VIEW run_testset_versions AS
SELECT
    r.run_id,
    nullif(r.test_set_name, '') AS test_set_name,
    v.version AS test_set_version,
    nullif(r.test_set_cases_hash, '') AS test_set_cases_hash
FROM runs AS r
LEFT JOIN testset_versions AS v
    ON v.test_set_name = r.test_set_name AND v.cases_hash = r.test_set_cases_hash;
