-- Claims: one page of the queries of one run (optionally one domain), with claims found,
-- contradicted (the response states the opposite) and missing (not stated at all), and the
-- texts of the missing ones, most missing first; `answer` (answered, abstained, no answer,
-- error) of the first iteration, from the view result_scores. Every count is that of the
-- iteration the row names (the query's first), never a sum over iterations.
-- Counts are aggregated for every query of the run; the texts of the missing claims only
-- for the page's queries (an ordered string_agg over a whole run is the slow part).
WITH sample_info AS (
    SELECT sample_id, any_value(domain) AS domain, any_value(query) AS query,
           min(iteration) AS iteration, arg_min(answer, iteration) AS answer
    FROM result_scores
    WHERE run_id = $run_id AND ($domain IS NULL OR domain = $domain)
    GROUP BY sample_id
),
per_sample AS (
    SELECT
        c.sample_id,
        count(*) AS claims,
        count(*) FILTER (WHERE c.found) AS found,
        count(*) FILTER (WHERE c.status = 'contradicted') AS contradicted,
        count(*) FILTER (
            WHERE NOT c.found AND c.status IS DISTINCT FROM 'contradicted'
        ) AS missing
    FROM claims AS c
    JOIN sample_info AS s ON s.sample_id = c.sample_id AND s.iteration = c.iteration
    WHERE c.run_id = $run_id
    GROUP BY c.sample_id
),
page AS MATERIALIZED (
    SELECT s.domain, s.sample_id, s.query, s.answer, p.claims, p.found, p.contradicted,
           p.missing, s.iteration, count(*) OVER () AS total_rows
    FROM per_sample AS p
    JOIN sample_info AS s USING (sample_id)
    ORDER BY p.missing DESC, s.domain, s.sample_id
    LIMIT $limit OFFSET $offset
),
missing_texts AS (
    SELECT c.sample_id,
           string_agg(DISTINCT c.claim_text, ' | ' ORDER BY c.claim_text) AS missing_claims
    FROM claims AS c
    JOIN page AS p ON p.sample_id = c.sample_id AND p.iteration = c.iteration
    WHERE c.run_id = $run_id AND NOT c.found AND c.status IS DISTINCT FROM 'contradicted'
    GROUP BY c.sample_id
)
SELECT p.domain, p.sample_id, p.query, p.answer, p.claims, p.found, p.contradicted,
       p.missing, m.missing_claims, p.iteration, p.total_rows
FROM page AS p
LEFT JOIN missing_texts AS m USING (sample_id)
ORDER BY p.missing DESC, p.domain, p.sample_id;
