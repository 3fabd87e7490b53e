-- What reviewers wrote: one row per saved review (review_id) that still counts (view
-- review_latest) and carries a comment, newest first, at most $limit rows; with how many
-- of its labelled items disagree with evalhouse (view review_pairs) and the sample's domain.
-- $run_ids (list, null = all) keeps the reviews of those runs.
WITH said AS (
    SELECT review_id, run_id, iteration, sample_id, candidate, trim(reviewer) AS reviewer,
           trim(comment) AS comment, max(reviewed_at) AS reviewed_at, count(*) AS items
    FROM review_latest
    WHERE trim(coalesce(comment, '')) <> ''
      AND ($run_ids IS NULL OR list_contains($run_ids, run_id))
    GROUP BY ALL
),
disputed AS (
    SELECT review_id,
           count(*) FILTER (WHERE kind = 'label' AND judge_label <> human_label)
               AS disagreements
    FROM review_pairs
    WHERE review_id IN (SELECT review_id FROM said)
    GROUP BY review_id
),
newest AS MATERIALIZED (
    SELECT * FROM said ORDER BY reviewed_at DESC, review_id LIMIT $limit
)
SELECT s.run_id, s.iteration, s.sample_id, s.candidate, r.domain, s.reviewer, s.reviewed_at,
       s.comment, s.items, coalesce(d.disagreements, 0) AS disagreements
FROM newest AS s
JOIN results AS r USING (run_id, iteration, sample_id, candidate)
LEFT JOIN disputed AS d USING (review_id)
ORDER BY s.reviewed_at DESC, s.review_id;
