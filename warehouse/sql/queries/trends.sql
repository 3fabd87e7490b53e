-- Trends: per run and domain, each analyzer metric's mean, with the run's name, start and
-- the sample count (long form: one row per metric). $domains null = every domain.
WITH per_run AS (
    SELECT run_id, domain, count(DISTINCT sample_id) AS samples,
           avg(accuracy) AS accuracy, avg(completeness) AS completeness,
           avg(attribution) AS attribution
    FROM results
    WHERE $domains IS NULL OR list_contains($domains, domain)
    GROUP BY run_id, domain
)
SELECT p.run_id, r.name AS run_name, r.started_at, p.domain, p.samples, u.metric, u.score
FROM per_run AS p
JOIN runs AS r USING (run_id)
CROSS JOIN LATERAL (
    VALUES ('accuracy', p.accuracy), ('completeness', p.completeness),
           ('attribution', p.attribution)
) AS u(metric, score)
WHERE u.score IS NOT NULL
ORDER BY p.domain, u.metric, r.started_at, p.run_id;
