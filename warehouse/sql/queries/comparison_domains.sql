-- One comparison's win/tie/loss per domain, then '(all)', with each side's win rate and
-- its Wilson 95% interval (pairwise_summary).
SELECT
    domain, wins_a, ties, wins_b, inconsistent, errors, judged,
    a_win_rate, a_win_low, a_win_high, b_win_rate, b_win_low, b_win_high
FROM pairwise_summary
WHERE comparison_id = $comparison_id
ORDER BY domain = '(all)', domain;
