-- The test case a run scored for one sample, as the run read it (table cases): the whole
-- case as JSON, so the page never needs the test-set file. Empty for runs of versions
-- that did not keep their cases.
SELECT case_json
FROM cases
WHERE run_id = $run_id AND sample_id = $sample_id
LIMIT 1;
