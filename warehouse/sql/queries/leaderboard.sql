-- The Leaderboard: every player of the ratings view (a run, or run:candidate) with its Elo
-- rating, rank and record, best first.
SELECT rank, player, run_id, candidate, name, rating, games, wins, ties, losses
FROM ratings
ORDER BY rank, player;
