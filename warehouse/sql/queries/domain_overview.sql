-- One run's per-domain scores next to a baseline run's (null baseline: no deltas).
SELECT
    cur.domain,
    cur.query_count,
    cur.accuracy_mean, cur.completeness_mean, cur.attribution_mean,
    base.accuracy_mean AS baseline_accuracy_mean,
    base.completeness_mean AS baseline_completeness_mean,
    base.attribution_mean AS baseline_attribution_mean,
    cur.accuracy_mean - base.accuracy_mean AS accuracy_delta,
    cur.completeness_mean - base.completeness_mean AS completeness_delta,
    cur.attribution_mean - base.attribution_mean AS attribution_delta
FROM domain_scores AS cur
LEFT JOIN domain_scores AS base
    ON base.domain = cur.domain AND base.run_id = $baseline_run_id
WHERE cur.run_id = $run_id
ORDER BY cur.domain;
