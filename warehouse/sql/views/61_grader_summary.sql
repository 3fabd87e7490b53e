-- Per run, candidate and grader: how many results, how many failed to score,
-- the mean score (null scores left out), the pass rate (a failed result counts as not
-- passed) and the weight the grader had in the candidate's weighted score.
CREATE OR REPLACE VIEW grader_summary AS
SELECT
    run_id,
    candidate,
    grader,
    count(*) AS results,
    count(*) - count(score) AS errors,
    avg(score) AS mean_score,
    avg(CASE WHEN passed THEN 1.0 ELSE 0.0 END) AS pass_rate,
    max(weight) AS weight
FROM grader_scores
GROUP BY run_id, candidate, grader;
