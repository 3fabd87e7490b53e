-- Attribution over runs: per run and domain (null $domain = every domain), the share of
-- scored responses with each mention type, long form for the chart.
WITH scored AS (
    SELECT run_id, iteration, sample_id, candidate, domain
    FROM results
    WHERE error IS NULL AND ($domain IS NULL OR domain = $domain)
),
mentions AS (
    SELECT run_id, iteration, sample_id, candidate,
           bool_or(type = 'url') AS url, bool_or(type = 'domain') AS dom,
           bool_or(type = 'brand') AS brand
    FROM attributions
    GROUP BY run_id, iteration, sample_id, candidate
),
per_run AS (
    SELECT
        s.run_id, s.domain, count(*) AS responses,
        100.0 * avg(CASE WHEN m.url THEN 1.0 ELSE 0.0 END) AS url,
        100.0 * avg(CASE WHEN m.dom THEN 1.0 ELSE 0.0 END) AS domain_name,
        100.0 * avg(CASE WHEN m.brand THEN 1.0 ELSE 0.0 END) AS brand
    FROM scored AS s
    LEFT JOIN mentions AS m USING (run_id, iteration, sample_id, candidate)
    GROUP BY s.run_id, s.domain
)
SELECT p.run_id, r.name AS run_name, r.started_at, p.domain, p.responses, u.mention, u.percent
FROM per_run AS p
JOIN runs AS r USING (run_id)
CROSS JOIN LATERAL (
    VALUES ('url', p.url), ('domain', p.domain_name), ('brand', p.brand)
) AS u(mention, percent)
ORDER BY p.domain, u.mention, r.started_at, p.run_id;
