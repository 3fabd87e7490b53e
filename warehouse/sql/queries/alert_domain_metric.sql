-- One domain's mean of one analyzer metric in a run (view domain_scores), for an alert
-- rule with a domain.
SELECT CASE $metric
    WHEN 'accuracy' THEN accuracy_mean
    WHEN 'completeness' THEN completeness_mean
    WHEN 'attribution' THEN attribution_mean
END AS value
FROM domain_scores
WHERE run_id = $run_id AND domain = $domain
