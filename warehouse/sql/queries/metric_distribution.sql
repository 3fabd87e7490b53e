-- Per domain and analyzer metric (0-100), the five numbers of a box plot over a run's
-- scored samples: lowest, first quartile, median, third quartile, highest.
SELECT
    domain,
    metric,
    count(*) AS samples,
    min(value) AS low,
    quantile_cont(value, 0.25) AS q1,
    median(value) AS median,
    quantile_cont(value, 0.75) AS q3,
    max(value) AS high
FROM (
    UNPIVOT (
        SELECT domain, accuracy, completeness, attribution
        FROM result_scores
        WHERE run_id = $run_id
    )
    ON accuracy, completeness, attribution
    INTO NAME metric VALUE value
)
GROUP BY domain, metric
ORDER BY metric, domain
