-- The review queue: reviewed samples, those where judge and reviewers disagree most first
-- (label disagreements, then the mean gap between the judge's 0-100 scores and the
-- reviewers' 100 / 50 / 0), at most $limit rows; domain and query joined for those only.
-- $run_ids (list, null = all) keeps the reviews of those runs. comments: every reviewer's
-- comment that still counts (view review_latest), newest first, as "reviewer: comment".
WITH per_sample AS (
    SELECT run_id, iteration, sample_id, candidate,
           count(*) FILTER (WHERE kind = 'label') AS labels,
           count(*) FILTER (WHERE kind = 'label' AND judge_label <> human_label)
               AS disagreements,
           avg(abs(judge_score - human_score)) FILTER (WHERE kind = 'score') AS score_gap,
           count(DISTINCT lower(trim(reviewer))) AS reviewers,
           max(reviewed_at) AS last_reviewed_at
    FROM review_pairs
    WHERE $run_ids IS NULL OR list_contains($run_ids, run_id)
    GROUP BY run_id, iteration, sample_id, candidate
),
top AS MATERIALIZED (
    SELECT *
    FROM per_sample
    ORDER BY disagreements DESC, score_gap DESC NULLS LAST, last_reviewed_at DESC,
             run_id, sample_id
    LIMIT $limit
),
-- A save puts its comment on every item it marks: one line per (reviewer, comment).
said AS (
    SELECT l.run_id, l.iteration, l.sample_id, l.candidate, l.reviewer, l.comment,
           max(l.reviewed_at) AS said_at
    FROM review_latest AS l
    SEMI JOIN top AS t USING (run_id, iteration, sample_id, candidate)
    WHERE trim(coalesce(l.comment, '')) <> ''
    GROUP BY ALL
),
comments AS (
    SELECT run_id, iteration, sample_id, candidate,
           string_agg(trim(reviewer) || ': ' || trim(comment), ' · ' ORDER BY said_at DESC)
               AS comments
    FROM said
    GROUP BY ALL
)
SELECT p.run_id, p.iteration, p.sample_id, p.candidate, r.domain, r.query,
       p.disagreements, p.labels, p.score_gap, p.reviewers, p.last_reviewed_at, c.comments
FROM top AS p
JOIN results AS r USING (run_id, iteration, sample_id, candidate)
LEFT JOIN comments AS c USING (run_id, iteration, sample_id, candidate)
ORDER BY p.disagreements DESC, p.score_gap DESC NULLS LAST, p.last_reviewed_at DESC,
         p.run_id, p.sample_id;
