-- The versions of the test set $test_set (every test set's when null), oldest first, with how
-- many cases each holds and how many runs scored it (view testset_versions).
SELECT test_set_name, version, cases_hash, cases, first_run_id, first_run_at, runs
FROM testset_versions
WHERE $test_set IS NULL OR test_set_name = $test_set
ORDER BY test_set_name, version;
