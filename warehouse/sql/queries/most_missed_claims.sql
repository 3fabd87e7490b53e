-- Claims: the expected claims missed most often across the latest $max_runs runs
-- (optionally one domain), with the latest run and sample that missed each, to open it on
-- the Sample page.
WITH recent AS (
    SELECT run_id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT $max_runs
),
sample_domain AS (
    SELECT run_id, sample_id, any_value(domain) AS domain
    FROM results
    WHERE ($domain IS NULL OR domain = $domain) AND run_id IN (SELECT run_id FROM recent)
    GROUP BY run_id, sample_id
),
checked AS (
    SELECT d.domain, c.run_id, c.sample_id, c.iteration, c.claim_text, c.found
    FROM claims AS c
    JOIN sample_domain AS d USING (run_id, sample_id)
    WHERE c.run_id IN (SELECT run_id FROM recent)
)
SELECT
    domain,
    claim_text,
    count(*) FILTER (WHERE NOT found) AS missed,
    count(*) AS checked,
    100.0 * count(*) FILTER (WHERE NOT found) / count(*) AS missed_percent,
    count(DISTINCT run_id) AS runs,
    max(run_id) FILTER (WHERE NOT found) AS last_run_id,
    arg_max(sample_id, run_id) FILTER (WHERE NOT found) AS last_sample_id,
    arg_max(iteration, run_id) FILTER (WHERE NOT found) AS last_iteration
FROM checked
GROUP BY domain, claim_text
HAVING count(*) FILTER (WHERE NOT found) > 0
ORDER BY missed DESC, missed_percent DESC, domain, claim_text
LIMIT $limit;
