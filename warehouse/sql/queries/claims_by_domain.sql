-- Claims: per domain of one run, expected claims checked, found, contradicted (the response
-- states the opposite) and missing (not stated at all), and the share found. Like the
-- per-query table (claims_by_query.sql) it counts each query's first iteration, so a
-- domain's counts are the sum of its queries' rows there and never grow with iterations.
WITH sample_info AS (
    SELECT sample_id, any_value(domain) AS domain, min(iteration) AS iteration
    FROM results WHERE run_id = $run_id GROUP BY sample_id
)
SELECT
    d.domain,
    count(DISTINCT c.sample_id) AS samples,
    count(*) AS claims,
    count(*) FILTER (WHERE c.found) AS found,
    count(*) FILTER (WHERE c.status = 'contradicted') AS contradicted,
    count(*) FILTER (
        WHERE NOT c.found AND c.status IS DISTINCT FROM 'contradicted'
    ) AS missing,
    100.0 * avg(CASE WHEN c.found THEN 1.0 ELSE 0.0 END) AS found_percent
FROM claims AS c
JOIN sample_info AS d ON d.sample_id = c.sample_id AND d.iteration = c.iteration
WHERE c.run_id = $run_id
GROUP BY d.domain
ORDER BY d.domain;
