-- Runs whose candidates have a lineage (some candidate derives from another), newest first.
SELECT
    l.run_id,
    any_value(r.name) AS name,
    any_value(r.started_at) AS started_at,
    count(DISTINCT l.candidate) AS candidates
FROM candidate_lineage AS l
JOIN runs AS r USING (run_id)
GROUP BY l.run_id
HAVING count(l.parent) > 0
ORDER BY started_at DESC, l.run_id DESC;
