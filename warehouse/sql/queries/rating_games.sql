-- The games the ratings view plays (judged pairs of the latest comparison of each pair of
-- players, as (player_a, player_b, score_a)), for ratings that do not depend on game order
-- (Bradley-Terry, engine/ratings.py). Must stay the ratings view's sides/latest/games.
WITH sides AS (
    SELECT
        *,
        CASE WHEN candidate = '' THEN run_a ELSE run_a || ':' || candidate END AS player_a,
        CASE WHEN coalesce(candidate_b, candidate) = '' THEN run_b
             ELSE run_b || ':' || coalesce(candidate_b, candidate) END AS player_b
    FROM pairwise
    WHERE winner IS NOT NULL
),
latest AS (
    SELECT *
    FROM sides
    QUALIFY comparison_id = max(comparison_id)
        OVER (PARTITION BY least(player_a, player_b), greatest(player_a, player_b))
)
SELECT
    player_a,
    player_b,
    CASE winner WHEN 'a' THEN 1.0 WHEN 'b' THEN 0.0 ELSE 0.5 END AS score_a
FROM latest
ORDER BY compared_at, comparison_id, iteration, sample_id, candidate;
