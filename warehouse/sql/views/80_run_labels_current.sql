-- The labels people gave each run from the dashboard's Runs page (lake table run_labels):
-- the latest non-null name, tags, series and archived flag per run (a change that leaves a field
-- null keeps its earlier value). Ingest applies the name to runs.name; the original name
-- stays in runs_log. Runs never labelled have no row (not archived, no tags).
CREATE OR REPLACE VIEW run_labels_current AS
SELECT
    run_id,
    arg_max(name, (labelled_at, label_id)) FILTER (WHERE name IS NOT NULL) AS name,
    arg_max(tags, (labelled_at, label_id)) FILTER (WHERE tags IS NOT NULL) AS tags,
    arg_max(series, (labelled_at, label_id)) FILTER (WHERE series IS NOT NULL) AS series,
    coalesce(
        arg_max(archived, (labelled_at, label_id)) FILTER (WHERE archived IS NOT NULL), false
    ) AS archived,
    arg_max(labelled_by, (labelled_at, label_id)) AS labelled_by,
    max(labelled_at) AS labelled_at
FROM run_labels
GROUP BY run_id;
