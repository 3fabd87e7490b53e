-- Judge agreement: per judge and metric, how far evalhouse agrees with people (view
-- review_pairs). Labels: reviewed items n, reviewers, accuracy (share of equal labels) and
-- Cohen's kappa = (p_o - p_e) / (1 - p_e), p_e from both sides' label shares (null when
-- p_e = 1: one label only, kappa undefined). Scores: Pearson r of the judge's 0-100 score
-- with the reviewer's (correct 100, partly 50, incorrect 0), Spearman rho (Pearson r of the
-- ranks, ties taking their average rank), mean absolute gap; r and rho are null when one
-- side never varies. $run_ids (list, null = all) keeps the reviews of those runs.
WITH pairs AS MATERIALIZED (
    -- the view once, not once per use below
    SELECT judge, metric, kind, reviewer, judge_label, human_label, judge_score, human_score
    FROM review_pairs
    WHERE $run_ids IS NULL OR list_contains($run_ids, run_id)
),
labels AS (
    SELECT judge, metric, reviewer, judge_label, human_label
    FROM pairs
    WHERE kind = 'label'
),
label_totals AS (
    SELECT judge, metric, count(*) AS n, count(DISTINCT lower(trim(reviewer))) AS reviewers,
           avg(CASE WHEN judge_label = human_label THEN 1.0 ELSE 0.0 END) AS accuracy
    FROM labels
    GROUP BY judge, metric
),
marginals AS (
    SELECT judge, metric, label, sum(from_judge) AS n_judge, sum(from_human) AS n_human
    FROM (
        SELECT judge, metric, judge_label AS label, 1 AS from_judge, 0 AS from_human
        FROM labels
        UNION ALL
        SELECT judge, metric, human_label, 0, 1 FROM labels
    )
    GROUP BY judge, metric, label
),
chance AS (
    SELECT m.judge, m.metric,
           sum(m.n_judge * m.n_human) / (any_value(t.n) * any_value(t.n)) AS expected
    FROM marginals AS m
    JOIN label_totals AS t USING (judge, metric)
    GROUP BY m.judge, m.metric
),
scores AS (
    SELECT judge, metric, reviewer, judge_score, human_score,
           rank() OVER (PARTITION BY judge, metric ORDER BY judge_score)
               + (count(*) OVER (PARTITION BY judge, metric, judge_score) - 1) / 2.0
               AS judge_rank,
           rank() OVER (PARTITION BY judge, metric ORDER BY human_score)
               + (count(*) OVER (PARTITION BY judge, metric, human_score) - 1) / 2.0
               AS human_rank
    FROM pairs
    WHERE kind = 'score'
),
score_totals AS (
    SELECT judge, metric, count(*) AS n, count(DISTINCT lower(trim(reviewer))) AS reviewers,
           CASE WHEN stddev_pop(judge_score) > 0 AND stddev_pop(human_score) > 0
                THEN corr(judge_score, human_score) END AS pearson,
           CASE WHEN stddev_pop(judge_rank) > 0 AND stddev_pop(human_rank) > 0
                THEN corr(judge_rank, human_rank) END AS spearman,
           avg(abs(judge_score - human_score)) AS mean_abs_gap
    FROM scores
    GROUP BY judge, metric
)
SELECT t.judge, t.metric, 'label' AS kind, t.n, t.reviewers, t.accuracy,
       CASE WHEN c.expected < 1 THEN (t.accuracy - c.expected) / (1 - c.expected) END AS kappa,
       NULL::DOUBLE AS pearson, NULL::DOUBLE AS spearman, NULL::DOUBLE AS mean_abs_gap
FROM label_totals AS t
JOIN chance AS c USING (judge, metric)
UNION ALL
SELECT judge, metric, 'score', n, reviewers, NULL, NULL, pearson, spearman, mean_abs_gap
FROM score_totals
ORDER BY kind, judge, metric;
