-- Every run, newest first: what the run pickers of every page need (name, status, start,
-- whether it is archived, its tags) and nothing aggregated over its results, so a page's
-- first visit after an ingest does not scan every result (runs has the headline numbers).
SELECT r.run_id, r.name, r.status, r.started_at, r.finished_at, r.iterations,
       coalesce(l.archived, false) AS archived,
       coalesce(l.tags, []::VARCHAR[]) AS tags
FROM runs AS r
LEFT JOIN run_labels_current AS l USING (run_id)
ORDER BY r.started_at DESC, r.run_id DESC;
