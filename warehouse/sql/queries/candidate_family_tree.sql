-- One run's candidates as a family tree (depth-first: each parent, then its variants),
-- with each candidate's weighted grader score (view candidate_scores), its parent's score
-- in the same run and the difference. A candidate whose parent did not answer in the run
-- is a root. The depth limit stops a hand-written cycle of parents.
WITH RECURSIVE lineage AS (
    SELECT DISTINCT candidate, family, parent, edit, variant_label, name
    FROM candidate_lineage
    WHERE run_id = $run_id
),
scored AS (
    SELECT lineage.*, s.weighted_score, s.equal_weight_score
    FROM lineage
    LEFT JOIN candidate_scores AS s ON s.run_id = $run_id AND s.candidate = lineage.candidate
),
tree AS (
    SELECT candidate, 0 AS depth, candidate AS path
    FROM lineage
    WHERE parent IS NULL OR parent NOT IN (SELECT candidate FROM lineage)
    UNION ALL
    SELECT child.candidate, tree.depth + 1, tree.path || chr(1) || child.candidate
    FROM tree
    JOIN lineage AS child ON child.parent = tree.candidate
    WHERE tree.depth < 50
)
SELECT
    tree.depth,
    s.candidate,
    s.parent,
    s.edit,
    s.variant_label,
    s.name,
    s.weighted_score AS score,
    p.weighted_score AS parent_score,
    s.weighted_score - p.weighted_score AS delta
FROM tree
JOIN scored AS s ON s.candidate = tree.candidate
LEFT JOIN scored AS p ON p.candidate = s.parent
ORDER BY tree.path;
