-- Claims: one page of the queries of one run (optionally one domain), with claims found
-- and missing and the texts of the missing ones, most missing first; `answer` (answered,
-- abstained, no answer, error) of the first iteration, from the view result_scores.
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
        count(*) FILTER (WHERE NOT c.found) AS missing,
        string_agg(DISTINCT c.claim_text, ' | ' ORDER BY c.claim_text) FILTER (WHERE NOT c.found)
            AS missing_claims
    FROM claims AS c
    WHERE c.run_id = $run_id
    GROUP BY c.sample_id
)
SELECT s.domain, s.sample_id, s.query, s.answer, p.claims, p.found, p.missing, p.missing_claims,
       s.iteration, count(*) OVER () AS total_rows
FROM per_sample AS p
JOIN sample_info AS s USING (sample_id)
ORDER BY p.missing DESC, s.domain, s.sample_id
LIMIT $limit OFFSET $offset;
