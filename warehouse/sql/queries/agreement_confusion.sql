-- Confusion matrices of judge agreement: per judge and label metric, how many reviewed
-- items got each (judge label, reviewer label) pair (view review_pairs).
SELECT judge, metric, judge_label, human_label, count(*) AS n
FROM review_pairs
WHERE kind = 'label'
GROUP BY judge, metric, judge_label, human_label
ORDER BY judge, metric, judge_label, human_label;
