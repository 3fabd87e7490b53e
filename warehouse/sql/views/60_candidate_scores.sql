-- Per run and candidate: samples graded, the equal-weight average (mean of the
-- per-grader mean scores) and the weighted score sum(w * mean) / sum(w) over graders that
-- have a mean and a weight above 0 (the eval-harness write-up's formula; w is the weight
-- written on the rows), plus the share of samples that passed every grader.
-- A null score (the grader failed on that output) is left out of the means and counts
-- as not passed. engine/weighted.py computes the same numbers; a test checks they agree.
CREATE OR REPLACE VIEW candidate_scores AS
WITH per_grader AS (
    SELECT
        run_id,
        candidate,
        grader,
        avg(score) AS mean_score,
        max(weight) AS weight,
        count(*) - count(score) AS errors
    FROM grader_scores
    GROUP BY run_id, candidate, grader
),
per_candidate AS (
    SELECT
        run_id,
        candidate,
        count(*) AS graders,
        CAST(sum(errors) AS BIGINT) AS errors,
        avg(mean_score) AS equal_weight_score,
        sum(weight * mean_score) FILTER (WHERE mean_score IS NOT NULL AND weight > 0)
            / nullif(sum(weight) FILTER (WHERE mean_score IS NOT NULL AND weight > 0), 0)
            AS weighted_score
    FROM per_grader
    GROUP BY run_id, candidate
),
per_sample AS (
    SELECT
        run_id,
        candidate,
        iteration,
        sample_id,
        bool_and(coalesce(passed, false)) AS passed_all
    FROM grader_scores
    GROUP BY run_id, candidate, iteration, sample_id
),
per_run_candidate AS (
    SELECT
        run_id,
        candidate,
        count(*) AS samples,
        avg(CASE WHEN passed_all THEN 1.0 ELSE 0.0 END) AS pass_rate
    FROM per_sample
    GROUP BY run_id, candidate
)
SELECT
    c.run_id,
    c.candidate,
    s.samples,
    c.graders,
    c.errors,
    c.equal_weight_score,
    c.weighted_score,
    s.pass_rate
FROM per_candidate AS c
JOIN per_run_candidate AS s USING (run_id, candidate);
