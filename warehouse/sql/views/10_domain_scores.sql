-- Per run and domain: query count and, for each analyzer metric, mean, median, min, max
-- and the count of rows in each tier. Error rows (null scores) are left out of the stats.
CREATE OR REPLACE VIEW domain_scores AS
SELECT
    run_id,
    domain,
    count(DISTINCT sample_id) AS query_count,
    avg(accuracy) AS accuracy_mean,
    median(accuracy) AS accuracy_median,
    min(accuracy) AS accuracy_min,
    max(accuracy) AS accuracy_max,
    count(*) FILTER (WHERE accuracy_tier = 'excellent') AS accuracy_excellent,
    count(*) FILTER (WHERE accuracy_tier = 'good') AS accuracy_good,
    count(*) FILTER (WHERE accuracy_tier = 'fair') AS accuracy_fair,
    count(*) FILTER (WHERE accuracy_tier = 'poor') AS accuracy_poor,
    avg(completeness) AS completeness_mean,
    median(completeness) AS completeness_median,
    min(completeness) AS completeness_min,
    max(completeness) AS completeness_max,
    count(*) FILTER (WHERE completeness_tier = 'excellent') AS completeness_excellent,
    count(*) FILTER (WHERE completeness_tier = 'good') AS completeness_good,
    count(*) FILTER (WHERE completeness_tier = 'fair') AS completeness_fair,
    count(*) FILTER (WHERE completeness_tier = 'poor') AS completeness_poor,
    avg(attribution) AS attribution_mean,
    median(attribution) AS attribution_median,
    min(attribution) AS attribution_min,
    max(attribution) AS attribution_max,
    count(*) FILTER (WHERE attribution_tier = 'excellent') AS attribution_excellent,
    count(*) FILTER (WHERE attribution_tier = 'good') AS attribution_good,
    count(*) FILTER (WHERE attribution_tier = 'fair') AS attribution_fair,
    count(*) FILTER (WHERE attribution_tier = 'poor') AS attribution_poor
FROM results
GROUP BY run_id, domain;
