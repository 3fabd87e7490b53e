-- Compare: per sample, baseline vs challenger score of one metric (mean over iterations;
-- a null candidate means every candidate of that run), classified with a tolerance, and
-- the same against the baseline for every run of $added (columns beside the challenger).
-- One page, sorted by the challenger's largest regression first; total_rows is for the
-- pager. The baseline and the challenger may be the same run with two different candidates.
-- Each side's `answer` (answered, abstained, no answer, error) is its first iteration's.
-- $group names what `group_value` is: domain, provider, tag (the sample's tags, joined) or
-- meta:<field> (that field of the case's metadata, from the challenger's cases);
-- $group_value keeps one group. $different_only keeps the samples whose score moved beyond
-- the tolerance, or whose answer or scoredness differs, in any compared run.
WITH scored AS (
    -- the chosen metric of every side, in its 0-100 form (view result_scores:
    -- <metric>_100 for the metrics not on 0-100 already), or the
    -- grader named by $metric = 'grader:<id>'
    -- the provider and the tags only when grouped by them (carrying lists costs time)
    SELECT run_id, candidate, sample_id, domain,
           CASE WHEN $group = 'provider' THEN ai_provider END AS ai_provider,
           CASE WHEN $group = 'tag' THEN tags END AS tags, query, iteration, answer,
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
    WHERE (run_id IN ($run_id, $baseline_run_id) OR list_contains($added, run_id))
      AND NOT starts_with($metric, 'grader:')
    UNION ALL
    -- a grader's score (0-1) x 100; a sample the grader did not score counts as not scored
    SELECT r.run_id, r.candidate, r.sample_id, r.domain,
           CASE WHEN $group = 'provider' THEN r.ai_provider END,
           CASE WHEN $group = 'tag' THEN r.tags END, r.query, r.iteration, r.answer,
           g.score * 100
    FROM result_scores AS r
    LEFT JOIN grader_scores AS g
        ON g.run_id = r.run_id AND g.iteration = r.iteration AND g.sample_id = r.sample_id
        AND g.candidate = r.candidate AND g.grader = substr($metric, 8)
    WHERE (r.run_id IN ($run_id, $baseline_run_id) OR list_contains($added, r.run_id))
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
    WHERE (run_id = $run_id AND ($candidate IS NULL OR candidate = $candidate))
       OR (list_contains($added, run_id) AND run_id NOT IN ($run_id, $baseline_run_id))
    GROUP BY run_id, sample_id
),
classified AS (
    SELECT
        sides.*, base.score AS baseline_score, base.answer AS baseline_answer,
        sides.score - base.score AS delta,
        CASE
            WHEN base.score IS NULL OR sides.score IS NULL THEN 'not scored'
            WHEN sides.score - base.score > $tolerance THEN 'improved'
            WHEN sides.score - base.score < -$tolerance THEN 'regressed'
            ELSE 'unchanged'
        END AS status,
        status IN ('improved', 'regressed')
            OR (base.score IS NULL) <> (sides.score IS NULL)
            OR base.answer IS DISTINCT FROM sides.answer AS differs
    FROM sides JOIN base USING (sample_id)
),
added AS (
    SELECT sample_id,
           list({'run_id': run_id, 'score': score, 'delta': delta, 'status': status}
                ORDER BY list_position($added, run_id)) AS added,
           bool_or(differs) AS added_differs
    FROM classified
    WHERE run_id <> $run_id
    GROUP BY sample_id
),
meta AS (
    -- a JSON pointer, so that no field name is read as a path ('~' and '/' escaped)
    SELECT sample_id,
           any_value(json_extract_string(case_json, '/metadata/'
               || replace(replace(substr($group, 6), '~', '~0'), '/', '~1'))) AS value
    FROM cases
    WHERE run_id = $run_id AND starts_with($group, 'meta:')
    GROUP BY sample_id
),
paired AS (
    SELECT
        chal.sample_id, chal.domain, chal.query, chal.iteration, chal.tags,
        chal.baseline_answer, chal.answer AS challenger_answer,
        chal.baseline_score, chal.score AS challenger_score, chal.delta, chal.status,
        coalesce(added.added, []) AS added,
        chal.differs OR coalesce(added.added_differs, false) AS differs,
        CASE
            WHEN $group = 'domain' THEN chal.domain
            WHEN $group = 'provider' THEN chal.provider
            WHEN $group = 'tag' THEN nullif(array_to_string(chal.tags, ', '), '')
            ELSE meta.value
        END AS group_value
    FROM classified AS chal
    LEFT JOIN added USING (sample_id)
    LEFT JOIN meta USING (sample_id)
    WHERE chal.run_id = $run_id
      -- with $shared_only, only the cases both runs scored with the same content (the two
      -- runs may have scored different versions of the test set)
      AND (NOT $shared_only OR chal.sample_id IN (
          SELECT c.sample_id
          FROM cases AS c
          JOIN cases AS b ON b.sample_id = c.sample_id AND b.sample_hash = c.sample_hash
          WHERE c.run_id = $run_id AND b.run_id = $baseline_run_id
      ))
)
SELECT sample_id, domain, query, baseline_score, challenger_score, delta, status,
       baseline_answer, challenger_answer, iteration, added, group_value,
       count(*) OVER () AS total_rows
FROM paired
WHERE ($status IS NULL OR status = $status) AND ($domain IS NULL OR domain = $domain)
  AND (NOT $different_only OR differs)
  AND ($group_value IS NULL
       OR CASE WHEN $group = 'tag' THEN list_contains(tags, $group_value)
               ELSE group_value = $group_value END)
ORDER BY delta ASC NULLS LAST, sample_id
LIMIT $limit OFFSET $offset;
