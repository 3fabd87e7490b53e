-- Per run and domain: the change of each metric's mean since the run's baseline (view
-- run_series: the previous completed run of the same series). previous_run_id is null for
-- the first run of a series, and where the baseline did not score the domain.
CREATE OR REPLACE VIEW domain_trends AS
SELECT
    d.run_id,
    d.domain,
    p.run_id AS previous_run_id,
    d.accuracy_mean - p.accuracy_mean AS accuracy_delta,
    d.completeness_mean - p.completeness_mean AS completeness_delta,
    d.attribution_mean - p.attribution_mean AS attribution_delta
FROM domain_scores AS d
JOIN run_series AS s USING (run_id)
LEFT JOIN domain_scores AS p ON p.run_id = s.baseline_run_id AND p.domain = d.domain;
