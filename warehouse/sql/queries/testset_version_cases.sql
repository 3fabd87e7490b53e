-- The cases of version $version of the test set $test_set (view testset_version_cases).
SELECT sample_id, sample_hash, case_json
FROM testset_version_cases
WHERE test_set_name = $test_set AND version = $version
ORDER BY sample_id;
