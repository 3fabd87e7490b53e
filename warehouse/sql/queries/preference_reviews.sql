-- Two reviewed answers to the same question (same sample id and query text), one graded
-- higher than the other, at least one of them from $run_id: the reviews half of
-- `evalhouse export RUN --format dpo`. An answer's grade is the mean of its reviewers'
-- latest labels (view review_latest): correct 1, partly 0.5, incorrect 0.
WITH graded AS (
    SELECT
        run_id, iteration, sample_id, coalesce(candidate, '') AS candidate,
        avg(CASE label WHEN 'correct' THEN 1.0 WHEN 'partly' THEN 0.5 ELSE 0.0 END) AS grade,
        string_agg(DISTINCT trim(reviewer), ', ' ORDER BY trim(reviewer)) AS reviewers
    FROM review_latest
    WHERE item = 'response'
    GROUP BY run_id, iteration, sample_id, coalesce(candidate, '')
),
answered AS (
    SELECT g.*, r.query, r.response
    FROM graded AS g
    JOIN results AS r
        ON r.run_id = g.run_id AND r.iteration = g.iteration AND r.sample_id = g.sample_id
        AND r.candidate = g.candidate
    WHERE r.error IS NULL AND trim(coalesce(r.response, '')) <> ''
)
SELECT
    c.sample_id, c.query, c.response AS chosen, x.response AS rejected,
    c.grade - x.grade AS margin, c.reviewers AS chosen_by, x.reviewers AS rejected_by,
    c.run_id AS chosen_run, x.run_id AS rejected_run
FROM answered AS c
JOIN answered AS x
    ON c.sample_id = x.sample_id AND c.query = x.query AND c.grade > x.grade
    AND c.response <> x.response
WHERE $run_id IN (c.run_id, x.run_id)
ORDER BY c.sample_id, c.run_id, c.iteration, c.candidate, x.run_id, x.iteration, x.candidate
