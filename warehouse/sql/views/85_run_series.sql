-- The series of every run and its baseline: the one definition the pages, `check` and
-- domain_trends use. A run's series is the one given on the Runs page (lake table
-- run_labels), else the one named with `--series`, else its name without
-- a trailing date or week ("nightly 2026-11-02", "acme week 3", "eval 2026-W45" give
-- "nightly", "acme", "eval"), else (a name that is only a date or week) its test set's file
-- name without one ("demo-week-2.jsonl" gives "demo"); the name is the one the run started
-- with (a rename on the Runs page does not move it). Its baseline is the latest *completed*
-- run of the same series that started before it and is not archived: partial, cancelled
-- and failed runs are never a default baseline. Null for the first run of a series.
CREATE OR REPLACE VIEW run_series AS
WITH suffix AS (
    SELECT '(?i)[\s_.,:-]*(\d{4}-?W\d{1,2}|(19|20)\d{2}[-_./]?\d{2}[-_./]?\d{2}([T\s_]\d{2}:?\d{2}(:?\d{2})?Z?)?|(week|wk|w)[\s_-]?\d{1,3})$' AS pattern
),
original AS (
    -- The name the run was started with: a rename on the Runs page does not move it to
    -- another series.
    SELECT run_id, arg_max(name, updated_at) AS name
    FROM runs_log
    GROUP BY run_id
),
named AS (
    SELECT
        r.run_id,
        r.status,
        r.started_at,
        coalesce(
            nullif(trim(l.series), ''),
            nullif(trim(r.series), ''),
            nullif(trim(regexp_replace(coalesce(o.name, r.name), suffix.pattern, '')), ''),
            nullif(
                trim(
                    regexp_replace(
                        regexp_extract(r.test_set, '([^/\\]+?)(\.[A-Za-z0-9]+)?$', 1),
                        suffix.pattern,
                        ''
                    )
                ),
                ''
            ),
            coalesce(o.name, r.name)
        ) AS series,
        coalesce(l.archived, false) AS archived
    FROM runs AS r
    CROSS JOIN suffix
    LEFT JOIN original AS o USING (run_id)
    LEFT JOIN run_labels_current AS l USING (run_id)
)
SELECT
    a.run_id,
    a.series,
    a.status,
    a.started_at,
    (
        SELECT b.run_id
        FROM named AS b
        WHERE b.series = a.series
          AND b.status = 'completed'
          AND NOT b.archived
          AND (b.started_at < a.started_at
               OR (b.started_at = a.started_at AND b.run_id < a.run_id))
        ORDER BY b.started_at DESC, b.run_id DESC
        LIMIT 1
    ) AS baseline_run_id
FROM named AS a;
