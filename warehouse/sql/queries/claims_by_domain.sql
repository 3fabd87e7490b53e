-- Claims: per domain of one run, expected claims checked, found and missing (claim rows
-- over every iteration), and the share found.
WITH sample_domain AS (
    SELECT sample_id, any_value(domain) AS domain
    FROM results WHERE run_id = $run_id GROUP BY sample_id
)
SELECT
    d.domain,
    count(DISTINCT c.sample_id) AS samples,
    count(*) AS claims,
    count(*) FILTER (WHERE c.found) AS found,
    count(*) FILTER (WHERE NOT c.found) AS missing,
    100.0 * avg(CASE WHEN c.found THEN 1.0 ELSE 0.0 END) AS found_percent
FROM claims AS c
JOIN sample_domain AS d USING (sample_id)
WHERE c.run_id = $run_id
GROUP BY d.domain
ORDER BY d.domain;
