-- The latest state of one run: where its test set was and what it hashed to.
SELECT run_id, name, test_set, test_set_hash, config
FROM runs
WHERE run_id = $run_id
