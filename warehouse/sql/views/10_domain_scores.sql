-- Per run and domain: query count and, for each analyzer metric, mean, median, min and max
-- over the result rows (every iteration) and the number of queries in each tier. A query
-- run several times counts once: each tier gets the share of the query's scored iterations
-- in it (a query good in 1 of 3 iterations and poor in 2 adds 1/3 and 2/3), so the tier
-- counts add up to the queries scored, never to queries x iterations. Error rows (null
-- scores) are left out of the stats but counted in query_count.
CREATE OR REPLACE VIEW domain_scores AS
WITH per_query AS (
    SELECT
        run_id,
        domain,
        sample_id,
        avg(CASE WHEN accuracy_tier IS NULL THEN NULL WHEN accuracy_tier = 'excellent' THEN 1.0 ELSE 0.0 END)
            AS accuracy_excellent,
        avg(CASE WHEN accuracy_tier IS NULL THEN NULL WHEN accuracy_tier = 'good' THEN 1.0 ELSE 0.0 END)
            AS accuracy_good,
        avg(CASE WHEN accuracy_tier IS NULL THEN NULL WHEN accuracy_tier = 'fair' THEN 1.0 ELSE 0.0 END)
            AS accuracy_fair,
        avg(CASE WHEN accuracy_tier IS NULL THEN NULL WHEN accuracy_tier = 'poor' THEN 1.0 ELSE 0.0 END)
            AS accuracy_poor,
        avg(CASE WHEN completeness_tier IS NULL THEN NULL WHEN completeness_tier = 'excellent' THEN 1.0 ELSE 0.0 END)
            AS completeness_excellent,
        avg(CASE WHEN completeness_tier IS NULL THEN NULL WHEN completeness_tier = 'good' THEN 1.0 ELSE 0.0 END)
            AS completeness_good,
        avg(CASE WHEN completeness_tier IS NULL THEN NULL WHEN completeness_tier = 'fair' THEN 1.0 ELSE 0.0 END)
            AS completeness_fair,
        avg(CASE WHEN completeness_tier IS NULL THEN NULL WHEN completeness_tier = 'poor' THEN 1.0 ELSE 0.0 END)
            AS completeness_poor,
        avg(CASE WHEN attribution_tier IS NULL THEN NULL WHEN attribution_tier = 'excellent' THEN 1.0 ELSE 0.0 END)
            AS attribution_excellent,
        avg(CASE WHEN attribution_tier IS NULL THEN NULL WHEN attribution_tier = 'good' THEN 1.0 ELSE 0.0 END)
            AS attribution_good,
        avg(CASE WHEN attribution_tier IS NULL THEN NULL WHEN attribution_tier = 'fair' THEN 1.0 ELSE 0.0 END)
            AS attribution_fair,
        avg(CASE WHEN attribution_tier IS NULL THEN NULL WHEN attribution_tier = 'poor' THEN 1.0 ELSE 0.0 END)
            AS attribution_poor
    FROM results
    GROUP BY run_id, domain, sample_id
),
tiers AS (
    SELECT
        run_id,
        domain,
        coalesce(sum(accuracy_excellent), 0) AS accuracy_excellent,
        coalesce(sum(accuracy_good), 0) AS accuracy_good,
        coalesce(sum(accuracy_fair), 0) AS accuracy_fair,
        coalesce(sum(accuracy_poor), 0) AS accuracy_poor,
        coalesce(sum(completeness_excellent), 0) AS completeness_excellent,
        coalesce(sum(completeness_good), 0) AS completeness_good,
        coalesce(sum(completeness_fair), 0) AS completeness_fair,
        coalesce(sum(completeness_poor), 0) AS completeness_poor,
        coalesce(sum(attribution_excellent), 0) AS attribution_excellent,
        coalesce(sum(attribution_good), 0) AS attribution_good,
        coalesce(sum(attribution_fair), 0) AS attribution_fair,
        coalesce(sum(attribution_poor), 0) AS attribution_poor
    FROM per_query
    GROUP BY run_id, domain
),
stats AS (
    SELECT
        run_id,
        domain,
        count(DISTINCT sample_id) AS query_count,
        avg(accuracy) AS accuracy_mean,
        median(accuracy) AS accuracy_median,
        min(accuracy) AS accuracy_min,
        max(accuracy) AS accuracy_max,
        avg(completeness) AS completeness_mean,
        median(completeness) AS completeness_median,
        min(completeness) AS completeness_min,
        max(completeness) AS completeness_max,
        avg(attribution) AS attribution_mean,
        median(attribution) AS attribution_median,
        min(attribution) AS attribution_min,
        max(attribution) AS attribution_max
    FROM results
    GROUP BY run_id, domain
)
SELECT
    s.run_id,
    s.domain,
    s.query_count,
    s.accuracy_mean,
    s.accuracy_median,
    s.accuracy_min,
    s.accuracy_max,
    t.accuracy_excellent,
    t.accuracy_good,
    t.accuracy_fair,
    t.accuracy_poor,
    s.completeness_mean,
    s.completeness_median,
    s.completeness_min,
    s.completeness_max,
    t.completeness_excellent,
    t.completeness_good,
    t.completeness_fair,
    t.completeness_poor,
    s.attribution_mean,
    s.attribution_median,
    s.attribution_min,
    s.attribution_max,
    t.attribution_excellent,
    t.attribution_good,
    t.attribution_fair,
    t.attribution_poor
FROM stats AS s
JOIN tiers AS t USING (run_id, domain);
