-- Every run, newest first, with its headline numbers, tags and whether it is archived
-- (view run_labels_current; the dashboard hides archived runs unless asked).
SELECT s.run_id, s.name, s.status, s.started_at, s.finished_at, s.iterations, s.samples,
       s.errors, s.pass_rate, s.accuracy_mean, s.completeness_mean, s.attribution_mean,
       s.cost_usd, coalesce(l.archived, false) AS archived,
       coalesce(l.tags, []::VARCHAR[]) AS tags
FROM run_summary AS s
LEFT JOIN run_labels_current AS l USING (run_id)
ORDER BY s.started_at DESC, s.run_id DESC;
