-- Per comparison (evalhouse compare-runs A B), pair of systems compared (run and candidate
-- on each side) and domain, plus a '(all)' row per pair: run A's wins,
-- ties, run B's wins, pairs the two orders judged differently (recorded as ties: position
-- bias), pairs the judge failed on, and each run's win rate with its Wilson 95% interval
-- (ties count as not won; errors are left out of the rates).
CREATE OR REPLACE VIEW pairwise_summary AS
WITH sides AS (
    SELECT *, coalesce(candidate_b, candidate) AS candidate_b_ FROM pairwise
),
counted AS (
    SELECT
        comparison_id,
        run_a,
        candidate AS candidate_a,
        run_b,
        candidate_b_ AS candidate_b,
        judge,
        CASE WHEN grouping(domain) = 1 THEN '(all)' ELSE coalesce(domain, '(none)') END AS domain,
        count(*) FILTER (WHERE winner = 'a') AS wins_a,
        count(*) FILTER (WHERE winner = 'tie') AS ties,
        count(*) FILTER (WHERE winner = 'b') AS wins_b,
        count(*) FILTER (WHERE consistent = false) AS inconsistent,
        count(*) FILTER (WHERE winner IS NULL) AS errors,
        count(winner) AS judged,
        max(compared_at) AS compared_at
    FROM sides
    GROUP BY GROUPING SETS (
        (comparison_id, run_a, candidate, run_b, candidate_b_, judge, domain),
        (comparison_id, run_a, candidate, run_b, candidate_b_, judge)
    )
),
rated AS (
    SELECT
        *,
        CASE WHEN judged > 0 THEN wins_a / judged END AS a_win_rate,
        CASE WHEN judged > 0 THEN wins_b / judged END AS b_win_rate,
        CASE WHEN judged > 0 THEN ties / judged END AS tie_rate,
        1.96 AS z
    FROM counted
)
SELECT
    comparison_id, run_a, candidate_a, run_b, candidate_b, judge, domain, wins_a, ties, wins_b, inconsistent, errors,
    judged, a_win_rate, b_win_rate, tie_rate,
    (a_win_rate + z * z / (2 * judged)
        - z * sqrt(a_win_rate * (1 - a_win_rate) / judged + z * z / (4 * judged * judged)))
        / (1 + z * z / judged) AS a_win_low,
    (a_win_rate + z * z / (2 * judged)
        + z * sqrt(a_win_rate * (1 - a_win_rate) / judged + z * z / (4 * judged * judged)))
        / (1 + z * z / judged) AS a_win_high,
    (b_win_rate + z * z / (2 * judged)
        - z * sqrt(b_win_rate * (1 - b_win_rate) / judged + z * z / (4 * judged * judged)))
        / (1 + z * z / judged) AS b_win_low,
    (b_win_rate + z * z / (2 * judged)
        + z * sqrt(b_win_rate * (1 - b_win_rate) / judged + z * z / (4 * judged * judged)))
        / (1 + z * z / judged) AS b_win_high,
    compared_at
FROM rated;
