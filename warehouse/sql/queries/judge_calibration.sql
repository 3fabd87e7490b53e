-- Calibration of a judge score against people: reviewed responses (view review_pairs,
-- kind 'score', metric $metric) in five bins of the judge's 0-100 score (0-20, ..., 80-100;
-- 100 falls in the last). Per judge and bin: reviews, the mean judge score, and the share
-- of reviews that called the response correct (partly counts as not correct), with the mean
-- reviewer score (correct 100, partly 50, incorrect 0). A calibrated judge's bins lie on
-- the diagonal: a score of 80 is right about 80% of the time.
-- $run_ids (list, null = all) keeps the reviews of those runs.
WITH binned AS (
    SELECT judge, judge_score, human_score,
           least(floor(judge_score / 20), 4)::INTEGER AS bin
    FROM review_pairs
    WHERE kind = 'score' AND metric = $metric AND judge_score IS NOT NULL
      AND ($run_ids IS NULL OR list_contains($run_ids, run_id))
)
SELECT judge, bin,
       bin * 20.0 AS bin_low,
       bin * 20.0 + 20.0 AS bin_high,
       count(*) AS reviews,
       avg(judge_score) AS judge_mean,
       avg(CASE WHEN human_score = 100 THEN 1.0 ELSE 0.0 END) AS share_correct,
       avg(human_score) AS reviewer_mean
FROM binned
GROUP BY judge, bin
ORDER BY judge, bin;
