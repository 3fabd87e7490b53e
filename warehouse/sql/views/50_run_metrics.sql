-- Per run (and candidate) and metric: the spread of the per-iteration aggregates across
-- iterations. One row per (run_id, candidate, metric) with n (iterations that have a
-- value), mean, sample standard deviation and a 95% confidence interval of the mean using
-- Student's t with n - 1 degrees of freedom (table for 1..30, Cornish-Fisher expansion
-- beyond, as engine/stats.py). sd and the CI are null for a single iteration. The CI is
-- across iterations only (the repeats' noise, zero with a deterministic judge), not the
-- samples': whether two runs differ beyond noise is engine/noise.py's paired bootstrap.
-- Metrics: accuracy, completeness, attribution (0-100), judge_faithfulness,
-- judge_completeness, rag_overall (1-5), claim_faithfulness, faithfulness_pass_rate,
-- completeness_pass_rate, pass_rate, error_rate (0-1), cost_usd.
CREATE OR REPLACE VIEW run_metrics AS
WITH latest AS (
    SELECT *
    FROM iteration_metrics
    QUALIFY row_number() OVER (
        PARTITION BY run_id, candidate, iteration ORDER BY finished_at DESC
    ) = 1
),
long AS (
    SELECT run_id, candidate, iteration, 'accuracy' AS metric, accuracy_mean AS value FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'completeness', completeness_mean FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'attribution', attribution_mean FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'judge_faithfulness', judge_faithfulness_mean
        FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'judge_completeness', judge_completeness_mean
        FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'faithfulness_pass_rate',
        faithfulness_pass_rate FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'completeness_pass_rate',
        completeness_pass_rate FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'pass_rate', pass_rate FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'claim_faithfulness', claim_faithfulness_mean
        FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'rag_overall', rag_overall_mean FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'error_rate',
        CASE WHEN samples > 0 THEN errors::DOUBLE / samples END FROM latest
    UNION ALL SELECT run_id, candidate, iteration, 'cost_usd', cost_usd FROM latest
),
stats AS (
    SELECT
        run_id,
        candidate,
        metric,
        count(value) AS n,
        avg(value) AS mean,
        stddev_samp(value) AS sd
    FROM long
    WHERE value IS NOT NULL AND NOT isnan(value)
    GROUP BY run_id, candidate, metric
),
t_table(df, t) AS (
    VALUES (1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (5, 2.5706), (6, 2.4469),
        (7, 2.3646), (8, 2.3060), (9, 2.2622), (10, 2.2281), (11, 2.2010), (12, 2.1788),
        (13, 2.1604), (14, 2.1448), (15, 2.1314), (16, 2.1199), (17, 2.1098), (18, 2.1009),
        (19, 2.0930), (20, 2.0860), (21, 2.0796), (22, 2.0739), (23, 2.0687), (24, 2.0639),
        (25, 2.0595), (26, 2.0555), (27, 2.0518), (28, 2.0484), (29, 2.0452), (30, 2.0423)
),
with_t AS (
    SELECT
        s.*,
        CASE
            WHEN s.n < 2 THEN NULL
            WHEN s.n - 1 <= 30 THEN t.t
            ELSE 1.959963984540054
                + (1.959963984540054 ^ 3 + 1.959963984540054) / 4 / (s.n - 1)
                + (5 * 1.959963984540054 ^ 5 + 16 * 1.959963984540054 ^ 3
                    + 3 * 1.959963984540054) / 96 / (s.n - 1) ^ 2
                + (3 * 1.959963984540054 ^ 7 + 19 * 1.959963984540054 ^ 5
                    + 17 * 1.959963984540054 ^ 3 - 15 * 1.959963984540054) / 384 / (s.n - 1) ^ 3
        END AS t_crit
    FROM stats AS s
    LEFT JOIN t_table AS t ON t.df = s.n - 1
)
SELECT
    run_id,
    candidate,
    metric,
    n AS iterations,
    mean,
    sd,
    mean - t_crit * sd / sqrt(n) AS ci_low,
    mean + t_crit * sd / sqrt(n) AS ci_high
FROM with_t;
