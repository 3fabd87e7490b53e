-- The default baseline of a run: the latest earlier run of the same test set; failing that,
-- the latest earlier run of the same name. Archived runs (view run_labels_current) are
-- skipped: the next earlier one is taken instead. Null when neither exists (a run on
-- another test set is no baseline: its scores measure different questions).
WITH me AS (
    SELECT started_at, test_set, name FROM runs WHERE run_id = $run_id
)
SELECT r.run_id
FROM runs AS r
CROSS JOIN me
LEFT JOIN run_labels_current AS l ON l.run_id = r.run_id
WHERE r.run_id <> $run_id
  AND r.started_at < me.started_at
  AND (r.test_set = me.test_set OR r.name = me.name)
  AND NOT coalesce(l.archived, false)
ORDER BY (r.test_set = me.test_set) DESC, r.started_at DESC, r.run_id DESC
LIMIT 1;
