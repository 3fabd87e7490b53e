-- Attribution: per domain and AI provider of one run, the share (0-100) of scored
-- responses that cite a URL, name the domain, name a brand, or do any of these. A response
-- whose attribution is null (its case names no brand and its domain is no host name: there
-- is nothing to attribute) is not counted: it is n/a, not 0%.
WITH scored AS (
    SELECT iteration, sample_id, candidate, domain, ai_provider
    FROM results
    WHERE run_id = $run_id AND error IS NULL AND attribution IS NOT NULL
),
mentions AS (
    SELECT iteration, sample_id, candidate,
           bool_or(type = 'url') AS url, bool_or(type = 'domain') AS dom,
           bool_or(type = 'brand') AS brand
    FROM attributions
    WHERE run_id = $run_id
    GROUP BY iteration, sample_id, candidate
)
SELECT
    s.domain,
    s.ai_provider,
    count(*) AS responses,
    100.0 * avg(CASE WHEN m.url THEN 1.0 ELSE 0.0 END) AS url_percent,
    100.0 * avg(CASE WHEN m.dom THEN 1.0 ELSE 0.0 END) AS domain_percent,
    100.0 * avg(CASE WHEN m.brand THEN 1.0 ELSE 0.0 END) AS brand_percent,
    100.0 * avg(CASE WHEN m.url OR m.dom OR m.brand THEN 1.0 ELSE 0.0 END) AS any_percent
FROM scored AS s
LEFT JOIN mentions AS m USING (iteration, sample_id, candidate)
GROUP BY s.domain, s.ai_provider
ORDER BY s.domain, s.ai_provider;
