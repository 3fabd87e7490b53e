-- The test-set name, version and cases hash of each of the runs $run_ids (view
-- run_testset_versions); Compare warns when two runs scored different versions.
SELECT run_id, test_set_name, test_set_version, test_set_cases_hash
FROM run_testset_versions
WHERE run_id IN (SELECT unnest($run_ids))
ORDER BY run_id;
