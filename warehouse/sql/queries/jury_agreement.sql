-- Jury agreement of run $run_id: view jury_agreement.
SELECT judge, metric, answers, agreement, mean_gap_100
FROM jury_agreement
WHERE run_id = $run_id
ORDER BY metric, judge;
