-- Elo ratings of every system that took part in a comparison: a run (player = run id) or
-- one candidate of a run (player = run_id:candidate). Each judged pair of the latest
-- comparison of each pair of players is one game (win 1, tie 0.5, loss 0), played in order of
-- comparison time, comparison, iteration, sample and candidate; every run starts at 1000
-- and K = 32. Pairs the judge failed on are not games. Elo depends on the order of games:
-- the fixed order above makes the view deterministic.
CREATE OR REPLACE VIEW ratings AS
WITH RECURSIVE sides AS (
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
),
games AS (
    SELECT
        row_number() OVER (
            ORDER BY compared_at, comparison_id, iteration, sample_id, candidate
        ) AS game,
        player_a AS run_a,
        player_b AS run_b,
        CASE winner WHEN 'a' THEN 1.0 WHEN 'b' THEN 0.0 ELSE 0.5 END AS score_a
    FROM latest
),
players AS (
    SELECT run_a AS run_id FROM games
    UNION
    SELECT run_b FROM games
),
elo(game, rating) AS (
    SELECT
        0::BIGINT,
        MAP(list(run_id ORDER BY run_id), list(1000.0::DOUBLE ORDER BY run_id))
    FROM players
    HAVING count(*) > 0
    UNION ALL
    SELECT
        e.game + 1,
        map_concat(e.rating, MAP([g.run_a, g.run_b], [
            e.rating[g.run_a] + 32 * (g.score_a
                - 1 / (1 + pow(10, (e.rating[g.run_b] - e.rating[g.run_a]) / 400))),
            e.rating[g.run_b] + 32 * ((1 - g.score_a)
                - 1 / (1 + pow(10, (e.rating[g.run_a] - e.rating[g.run_b]) / 400)))
        ]))
    FROM elo AS e
    JOIN games AS g ON g.game = e.game + 1
),
final AS (
    SELECT unnest(map_keys(rating)) AS run_id, unnest(map_values(rating)) AS rating
    FROM elo
    WHERE game = (SELECT max(game) FROM elo)
),
record AS (
    SELECT run_id, sum(won) AS wins, sum(tied) AS ties, sum(lost) AS losses
    FROM (
        SELECT run_a AS run_id, (score_a = 1)::INT AS won, (score_a = 0.5)::INT AS tied,
               (score_a = 0)::INT AS lost FROM games
        UNION ALL
        SELECT run_b, (score_a = 0)::INT, (score_a = 0.5)::INT, (score_a = 1)::INT FROM games
    )
    GROUP BY run_id
)
SELECT
    rank() OVER (ORDER BY f.rating DESC) AS rank,
    f.run_id AS player,
    split_part(f.run_id, ':', 1) AS run_id,
    CASE WHEN f.run_id LIKE '%:%' THEN substr(f.run_id, strpos(f.run_id, ':') + 1) ELSE '' END
        AS candidate,
    r.name,
    f.rating,
    rec.wins + rec.ties + rec.losses AS games,
    rec.wins,
    rec.ties,
    rec.losses
FROM final AS f
JOIN record AS rec USING (run_id)
LEFT JOIN runs AS r ON r.run_id = split_part(f.run_id, ':', 1);
