-- Runs page: every run, newest first, with its state, timing, headline numbers and what
-- scored it (judge, embedder, prompt version, threshold, test set, its hash and version, evalhouse version),
-- its series (view run_series), and its tags and archived flag (view run_labels_current).
SELECT
    s.run_id, s.name, s.status, s.started_at, s.finished_at,
    date_diff('second', s.started_at, s.finished_at) AS duration_s,
    s.iterations, s.samples, s.errors,
    s.pass_rate * 100 AS pass_rate_percent,
    s.accuracy_mean, s.completeness_mean, s.attribution_mean,
    s.cost_usd,
    r.judge, r.embedder, r.judge_prompt_version, r.claim_threshold,
    r.test_set, r.test_set_hash, r.version, r.git_commit, r.config,
    tv.test_set_name, tv.test_set_version,
    rs.series,
    coalesce(l.tags, []::VARCHAR[]) AS tags, coalesce(l.archived, false) AS archived,
    l.labelled_by, l.labelled_at
FROM run_summary AS s
JOIN runs AS r USING (run_id)
LEFT JOIN run_labels_current AS l USING (run_id)
LEFT JOIN run_series AS rs USING (run_id)
LEFT JOIN run_testset_versions AS tv USING (run_id)
ORDER BY s.started_at DESC, s.run_id DESC;
