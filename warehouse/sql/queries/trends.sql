-- Trends: per run and domain, each metric's mean in its 0-100 form (view result_scores),
-- with the run's name, series (view run_series), status, start and the sample count (long
-- form: one row per metric that has a value).
-- Grader scores (0-1) join as metric 'grader:<grader id>', x 100, and retrieval metrics (view
-- retrieval_scores) as 'retrieval:<metric>', x 100. $domains null = every domain.
WITH per_run AS (
    SELECT run_id, domain, count(DISTINCT sample_id) AS samples,
           avg(accuracy) AS accuracy, avg(completeness) AS completeness,
           avg(attribution) AS attribution,
           -- every <metric>_100 column of result_scores, under the metric's name
           avg(COLUMNS('^(\w+)_100$')) AS '\1'
    FROM result_scores
    WHERE $domains IS NULL OR list_contains($domains, domain)
    GROUP BY run_id, domain
)
SELECT p.run_id, r.name AS run_name, r.started_at, s.series, r.status, p.domain, p.samples,
       u.metric, u.score
FROM per_run AS p
JOIN runs AS r USING (run_id)
JOIN run_series AS s USING (run_id)
CROSS JOIN LATERAL (
    VALUES ('accuracy', p.accuracy), ('completeness', p.completeness),
           ('attribution', p.attribution), ('judge_faithfulness', p.judge_faithfulness),
           ('judge_completeness', p.judge_completeness), ('pass_rate', p.pass_rate),
           ('claim_faithfulness', p.claim_faithfulness), ('rag_correctness', p.rag_correctness),
           ('rag_faithfulness', p.rag_faithfulness), ('rag_precision', p.rag_precision),
           ('rag_recall', p.rag_recall), ('rag_relevance', p.rag_relevance),
           ('rag_overall', p.rag_overall)
) AS u(metric, score)
WHERE u.score IS NOT NULL
UNION ALL
SELECT g.run_id, any_value(r.name), any_value(r.started_at), any_value(s.series),
       any_value(r.status), res.domain, count(DISTINCT g.sample_id), 'grader:' || g.grader,
       avg(g.score) * 100
FROM grader_scores AS g
JOIN results AS res USING (run_id, iteration, sample_id, candidate)
JOIN runs AS r ON r.run_id = g.run_id
JOIN run_series AS s ON s.run_id = g.run_id
WHERE g.score IS NOT NULL AND ($domains IS NULL OR list_contains($domains, res.domain))
GROUP BY g.run_id, res.domain, g.grader
UNION ALL
SELECT t.run_id, any_value(r.name), any_value(r.started_at), any_value(s.series),
       any_value(r.status), t.domain, count(DISTINCT t.sample_id), 'retrieval:' || t.metric,
       avg(t.score)
FROM retrieval_scores AS t
JOIN runs AS r ON r.run_id = t.run_id
JOIN run_series AS s ON s.run_id = t.run_id
WHERE t.value IS NOT NULL AND ($domains IS NULL OR list_contains($domains, t.domain))
GROUP BY t.run_id, t.domain, t.metric
ORDER BY domain, metric, started_at, run_id;
