-- Run header cards' noise: per sample present in both runs, the change (run minus baseline)
-- of each card's per-sample value, each the mean over the sample's iterations and
-- candidates: the input of the paired bootstrap (engine/noise.py), as sample_deltas_all is
-- the Overview's. Rates are 0-1 shares per sample; a null (no verdict, no latency) leaves
-- the sample out of that card's deltas.
WITH per_sample AS (
    SELECT run_id, sample_id,
           avg(CASE WHEN error IS NULL THEN 0.0 ELSE 1.0 END) AS error_rate,
           avg(CASE WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END) AS pass_rate,
           avg(CASE WHEN answer IN ('no answer', 'abstained') THEN 1.0
                    WHEN answer = 'answered' THEN 0.0 END) AS abstention_rate,
           avg(overall) AS overall,
           avg(latency_ms) AS latency_mean
    FROM result_scores
    WHERE run_id IN ($run_id, $baseline_run_id)
    GROUP BY run_id, sample_id
)
SELECT
    cur.sample_id,
    cur.error_rate - base.error_rate AS error_rate,
    cur.pass_rate - base.pass_rate AS pass_rate,
    cur.abstention_rate - base.abstention_rate AS abstention_rate,
    cur.overall - base.overall AS overall,
    cur.latency_mean - base.latency_mean AS latency_mean
FROM per_sample AS cur
JOIN per_sample AS base ON base.sample_id = cur.sample_id AND base.run_id = $baseline_run_id
WHERE cur.run_id = $run_id
ORDER BY cur.sample_id;
