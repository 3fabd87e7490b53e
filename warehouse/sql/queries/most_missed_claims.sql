-- Claims: the expected claims not found most often across the latest $max_runs runs
-- (optionally one domain), with the latest run and sample that missed each, to open it on
-- the Sample page. Archived runs (view run_labels_current) are left out, and do not count
-- among the latest runs, unless $include_archived. The last miss is the one of the latest
-- run (greatest run id) that missed the claim, and in it the greatest (iteration, sample id).
-- A claim the answer contradicted is not found but not missing either: it is counted in
-- contradicted, apart from missed (the answer said otherwise, a different fix).
WITH recent AS (
    SELECT r.run_id
    FROM runs AS r
    LEFT JOIN run_labels_current AS l USING (run_id)
    WHERE $include_archived OR NOT coalesce(l.archived, false)
    ORDER BY r.started_at DESC, r.run_id DESC
    LIMIT $max_runs
),
sample_domain AS (
    SELECT run_id, sample_id, any_value(domain) AS domain
    FROM results
    WHERE ($domain IS NULL OR domain = $domain) AND run_id IN (SELECT run_id FROM recent)
    GROUP BY run_id, sample_id
),
per_run AS (
    -- one row per run, domain and claim text first: the final aggregate is then small
    SELECT d.domain, c.claim_text, c.run_id,
           count(*) FILTER (
               WHERE NOT c.found AND coalesce(c.status, 'missing') <> 'contradicted'
           ) AS missed,
           count(*) FILTER (WHERE c.status = 'contradicted') AS contradicted,
           count(*) AS checked,
           max({'iteration': c.iteration, 'sample_id': c.sample_id}) FILTER (WHERE NOT c.found) AS last_miss
    FROM claims AS c
    JOIN sample_domain AS d USING (run_id, sample_id)
    WHERE c.run_id IN (SELECT run_id FROM recent)
    GROUP BY d.domain, c.claim_text, c.run_id
),
totals AS (
    SELECT
        domain,
        claim_text,
        sum(missed)::BIGINT AS missed,
        sum(contradicted)::BIGINT AS contradicted,
        sum(checked)::BIGINT AS checked,
        count(*) AS runs,
        max(run_id) FILTER (WHERE missed + contradicted > 0) AS last_run_id,
        arg_max(last_miss, run_id) FILTER (WHERE missed + contradicted > 0) AS last_miss
    FROM per_run
    GROUP BY domain, claim_text
    HAVING sum(missed) + sum(contradicted) > 0
)
SELECT
    domain,
    claim_text,
    missed,
    contradicted,
    checked,
    100.0 * (missed + contradicted) / checked AS missed_percent,
    runs,
    last_run_id,
    last_miss.sample_id AS last_sample_id,
    last_miss.iteration AS last_iteration
FROM totals
ORDER BY missed + contradicted DESC, missed_percent DESC, domain, claim_text
LIMIT $limit;
