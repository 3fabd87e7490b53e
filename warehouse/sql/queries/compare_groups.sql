-- Compare, grouped: per group of samples and per compared run ($runs: the challenger, then
-- the added runs), the paired samples' mean score, the baseline's mean over the same
-- samples, the mean change and how many improved, regressed or stayed within $tolerance.
-- $group is domain, provider, tag (a sample counts in each of its tags' groups) or
-- meta:<field> (that field of the case's metadata, from the challenger's cases); a sample
-- without a value is in the null group. Same pairing as compare_samples.
WITH scored AS (
    -- the chosen metric of every side, in its 0-100 form (view result_scores:
    -- <metric>_100 for the metrics not on 0-100 already), or the
    -- grader named by $metric = 'grader:<id>'
    SELECT run_id, candidate, sample_id, domain, ai_provider, tags, query, iteration, answer,
           CASE $metric
               WHEN 'accuracy' THEN accuracy
               WHEN 'completeness' THEN completeness
               WHEN 'attribution' THEN attribution
               WHEN 'judge_faithfulness' THEN judge_faithfulness_100
               WHEN 'judge_completeness' THEN judge_completeness_100
               WHEN 'pass_rate' THEN pass_rate_100
               WHEN 'claim_faithfulness' THEN claim_faithfulness_100
               WHEN 'rag_correctness' THEN rag_correctness_100
               WHEN 'rag_faithfulness' THEN rag_faithfulness_100
               WHEN 'rag_precision' THEN rag_precision_100
               WHEN 'rag_recall' THEN rag_recall_100
               WHEN 'rag_relevance' THEN rag_relevance_100
               WHEN 'rag_overall' THEN rag_overall_100
           END AS score
    FROM result_scores
    WHERE (run_id = $baseline_run_id OR list_contains($runs, run_id))
      AND NOT starts_with($metric, 'grader:')
    UNION ALL
    -- a grader's score (0-1) x 100; a sample the grader did not score counts as not scored
    SELECT r.run_id, r.candidate, r.sample_id, r.domain, r.ai_provider, r.tags, r.query,
           r.iteration, r.answer, g.score * 100
    FROM result_scores AS r
    LEFT JOIN grader_scores AS g
        ON g.run_id = r.run_id AND g.iteration = r.iteration AND g.sample_id = r.sample_id
        AND g.candidate = r.candidate AND g.grader = substr($metric, 8)
    WHERE (r.run_id = $baseline_run_id OR list_contains($runs, r.run_id))
      AND starts_with($metric, 'grader:')
),
base AS (
    SELECT sample_id, avg(score) AS score, arg_min(answer, iteration) AS answer
    FROM scored
    WHERE run_id = $baseline_run_id
      AND ($baseline_candidate IS NULL OR candidate = $baseline_candidate)
    GROUP BY sample_id
),
sides AS (
    SELECT run_id, sample_id, any_value(domain) AS domain, any_value(ai_provider) AS provider,
           any_value(tags) AS tags, any_value(query) AS query,
           min(iteration) AS iteration, avg(score) AS score,
           arg_min(answer, iteration) AS answer
    FROM scored
    WHERE list_contains($runs, run_id) AND ($candidate IS NULL OR candidate = $candidate)
      -- a run is its own baseline only with two candidates
      AND (run_id <> $baseline_run_id OR $candidate IS NOT NULL)
    GROUP BY run_id, sample_id
),
meta AS (
    -- a JSON pointer, so that no field name is read as a path ('~' and '/' escaped)
    SELECT sample_id,
           any_value(json_extract_string(case_json, '/metadata/'
               || replace(replace(substr($group, 6), '~', '~0'), '/', '~1'))) AS value
    FROM cases
    WHERE run_id = $runs[1] AND starts_with($group, 'meta:')
    GROUP BY sample_id
),
keyed AS (
    SELECT
        sides.run_id, sides.score, base.score AS baseline_score,
        sides.score - base.score AS delta,
        CASE
            WHEN $group = 'domain' THEN [sides.domain]
            WHEN $group = 'provider' THEN [sides.provider]
            WHEN $group = 'tag' THEN
                CASE WHEN len(sides.tags) > 0 THEN sides.tags ELSE [NULL] END
            ELSE [meta.value]
        END AS group_values
    FROM sides
    JOIN base USING (sample_id)
    LEFT JOIN meta USING (sample_id)
),
grouped AS (
    SELECT run_id, score, baseline_score, delta, unnest(group_values) AS group_value
    FROM keyed
)
SELECT
    group_value,
    run_id,
    count(*) AS samples,
    avg(score) AS mean,
    avg(baseline_score) FILTER (WHERE score IS NOT NULL) AS baseline_mean,
    avg(delta) AS mean_delta,
    min(delta) AS worst_delta,
    count(*) FILTER (WHERE delta > $tolerance) AS improved,
    count(*) FILTER (WHERE delta < -$tolerance) AS regressed,
    count(*) FILTER (WHERE abs(delta) <= $tolerance) AS unchanged,
    count(*) FILTER (WHERE delta IS NULL) AS not_scored
FROM grouped
GROUP BY group_value, run_id
ORDER BY group_value NULLS LAST, list_position($runs, run_id);
