-- Confusion matrices of judge agreement: per judge and label metric, how many reviewed
-- items got each (judge label, reviewer label) pair (view review_pairs), of the runs in
-- $run_ids (list, null = all).
SELECT judge, metric, judge_label, human_label, count(*) AS n
FROM review_pairs
WHERE kind = 'label' AND ($run_ids IS NULL OR list_contains($run_ids, run_id))
GROUP BY judge, metric, judge_label, human_label
ORDER BY judge, metric, judge_label, human_label;
