-- The cases two runs both scored with the same content (same id and case hash): what
-- Compare's "shared cases only" keeps when the runs scored different test-set versions.
SELECT c.sample_id
FROM cases AS c
JOIN cases AS b ON b.sample_id = c.sample_id AND b.sample_hash = c.sample_hash
WHERE c.run_id = $run_id AND b.run_id = $baseline_run_id
ORDER BY c.sample_id;
