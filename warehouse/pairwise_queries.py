"""The queries of head-to-head comparisons and ratings: the leaderboard, its games, the
comparisons with their per-domain results, and candidate lineage."""

from __future__ import annotations

import polars as pl

from warehouse.reader import Warehouse, named_query


@named_query
def leaderboard(wh: Warehouse) -> pl.DataFrame:
    """Every rated player (run or run:candidate), best Elo first (the ``ratings`` view)."""
    return wh.named("leaderboard")


@named_query
def rating_games(wh: Warehouse) -> pl.DataFrame:
    """The games behind ``ratings``: player_a, player_b, score_a (1 / 0.5 / 0), in order."""
    return wh.named("rating_games")


@named_query
def comparisons(wh: Warehouse, run_x: str | None = None, run_y: str | None = None) -> pl.DataFrame:
    """Head-to-head comparisons, newest first, with all-domain win/tie/loss and intervals;
    only those between ``run_x`` and ``run_y`` (either way round) when both are given."""
    if (run_x is None) != (run_y is None):
        raise ValueError("comparisons: give both runs or neither")
    return wh.named("comparisons", run_x=run_x, run_y=run_y)


@named_query
def comparison_domains(wh: Warehouse, comparison_id: str) -> pl.DataFrame:
    """One comparison's win/tie/loss per domain and ``(all)``, with Wilson intervals."""
    return wh.named("comparison_domains", comparison_id=comparison_id)


@named_query
def lineage_runs(wh: Warehouse) -> pl.DataFrame:
    """Runs whose candidates have a lineage (one derives from another), newest first."""
    return wh.named("lineage_runs")


@named_query
def candidate_family_tree(wh: Warehouse, run_id: str) -> pl.DataFrame:
    """One run's candidates depth-first (``depth``), each with parent, edit, weighted
    score, the parent's score in the run and the difference (``delta``)."""
    return wh.named("candidate_family_tree", run_id=run_id)
