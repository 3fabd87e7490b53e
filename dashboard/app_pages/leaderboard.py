"""Leaderboard: head-to-head ratings of every run and candidate compared with
``evalhouse compare-runs`` (Elo from the ``ratings`` view, Bradley–Terry from the same
games), and one comparison's win/tie/loss per domain with Wilson 95% intervals."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import charts, data, formats
from dashboard.components import pickers, tables
from dashboard.components.downloads import download_csv
from dashboard.components.safe import safe_text
from warehouse import queries as q

st.title("Leaderboard")

lineage_runs = data.query(q.lineage_runs)
if not lineage_runs.is_empty():
    st.subheader("Prompt families")
    family_run = pickers.pick_run(lineage_runs, key="leaderboard_family_run")
    tree = data.query(q.candidate_family_tree, family_run)
    st.caption(
        "Each variant under the candidate it was derived from (evalhouse candidates vary), "
        "with its weighted grader score in this run and the change against its parent."
    )
    family = tree.select(
        pl.concat_str(
            pl.lit("\u2003").repeat_by(pl.col("depth")).list.join(""),
            pl.when(pl.col("depth") > 0).then(pl.lit("└ ")).otherwise(pl.lit("")),
            pl.col("candidate"),
        ).alias("Candidate"),
        pl.col("parent").alias("Parent"),
        pl.col("variant_label").alias("Variant"),
        # the score before the (long) edit, so it stays in sight on a 1024 px screen
        pl.col("score").alias("Score"),
        pl.col("delta").alias("Δ vs parent"),
        pl.col("edit").alias("Edit"),
    )
    tables.grid(
        family,
        column_config={
            "Candidate": st.column_config.TextColumn("Candidate", width="medium"),
            "Edit": st.column_config.TextColumn("Edit", width="large"),
            # grader scores are 0-1: the one format of that scale
            "Score": st.column_config.NumberColumn("Score", format=formats.score_printf(0, 1)),
            "Δ vs parent": st.column_config.NumberColumn("Δ vs parent", format="%+.2f"),
        },
    )
    download_csv(family, f"{family_run}-family.csv", key="leaderboard_family_csv")

board = data.query(q.leaderboard)
if board.is_empty():
    st.info(
        "No head-to-head comparison yet. Pick a baseline and a challenger on the Compare "
        "page and use Judge head to head, or run evalhouse compare-runs RUN_A RUN_B."
    )
    st.stop()

ratings, game_count = data.query(data.leaderboard_ratings)
st.caption(
    f"{ratings.height} players (a run, or run:candidate), {game_count} games: each judged "
    "pair of the latest comparison of two players. Elo plays the games in order (K = 32, "
    "start 1000); Bradley–Terry fits them all at once, so it does not depend on the order. "
    "400 points apart means 10-to-1 odds."
)
long = ratings.select(
    "label",
    pl.lit(charts.RATING_METHODS[0]).alias("method"),
    pl.col("rating"),
).vstack(
    ratings.select(
        "label", pl.lit(charts.RATING_METHODS[1]).alias("method"), pl.col("bt").alias("rating")
    )
)
st.altair_chart(charts.leaderboard_chart(long), width="stretch")

shown = ratings.select(
    pl.col("rank").alias("Rank"),
    pl.col("label").alias("Player"),
    pl.col("rating").alias("Elo"),
    pl.col("bt").alias("Bradley–Terry"),
    pl.col("games").alias("Games"),
    pl.col("wins").alias("Wins"),
    pl.col("ties").alias("Ties"),
    pl.col("losses").alias("Losses"),
)
tables.grid(
    shown,
    column_config={
        "Player": st.column_config.TextColumn("Player", width="large"),
        "Elo": st.column_config.NumberColumn("Elo", format="%.1f"),
        "Bradley–Terry": st.column_config.NumberColumn("Bradley–Terry", format="%.1f"),
    },
)
download_csv(shown, "leaderboard.csv", key="leaderboard_csv")

st.subheader("Win / tie / loss per domain")
found = data.query(q.comparisons)


def _side(row: dict[str, object], side: str) -> str:
    run, name = row[f"run_{side}"], row[f"name_{side}"]
    candidate = row[f"candidate_{side}"]
    return f"{name or run}" + (f" · {candidate}" if candidate else "") + f" ({run})"


labels = {
    str(
        r["comparison_id"]
    ): f"{_side(r, 'a')} vs {_side(r, 'b')} · {formats.judge_name(r['judge'])} · "
    f"{r['compared_at']:%Y-%m-%d %H:%M}"
    for r in found.iter_rows(named=True)
}
picked = str(
    st.selectbox(
        "Comparison",
        list(labels),
        format_func=lambda c: labels.get(c, c),
        key="leaderboard_comparison",
    )
)
row = found.filter(pl.col("comparison_id") == picked).row(0, named=True)
label_a, label_b = _side(row, "a"), _side(row, "b")
m1, m2, m3, m4 = st.columns(4)
m1.metric("A wins", row["wins_a"])
m2.metric("Ties", row["ties"])
m3.metric("B wins", row["wins_b"])
m4.metric("Inconsistent orders", row["inconsistent"], help="Recorded as ties (position bias)")
st.caption(
    safe_text(
        f"A = {label_a}, B = {label_b}; judge {formats.judge_name(row['judge'])}; "
        f"comparison {picked}."
    )
    + " Intervals are Wilson 95% intervals of a side's win rate (ties count as not won)."
)
domains = data.query(q.comparison_domains, picked)
st.altair_chart(charts.win_tie_loss_chart(domains, label_a, label_b), width="stretch")


def _interval(low: float | None, high: float | None) -> str | None:
    return None if low is None or high is None else f"{low:.0%} – {high:.0%}"


table = domains.select(
    pl.col("domain").alias("Domain"),
    pl.col("wins_a").alias("A wins"),
    pl.col("ties").alias("Ties"),
    pl.col("wins_b").alias("B wins"),
    pl.col("inconsistent").alias("Inconsistent"),
    pl.col("errors").alias("Errors"),
    pl.col("a_win_rate").alias("A win rate"),
    pl.struct("a_win_low", "a_win_high")
    .map_elements(lambda s: _interval(s["a_win_low"], s["a_win_high"]), return_dtype=pl.String)
    .alias("A 95% interval"),
    pl.col("b_win_rate").alias("B win rate"),
    pl.struct("b_win_low", "b_win_high")
    .map_elements(lambda s: _interval(s["b_win_low"], s["b_win_high"]), return_dtype=pl.String)
    .alias("B 95% interval"),
)
tables.grid(
    table,
    column_config={
        "A win rate": st.column_config.NumberColumn("A win rate", format="percent"),
        "B win rate": st.column_config.NumberColumn("B win rate", format="percent"),
    },
)
download_csv(table, f"{picked}-domains.csv", key="leaderboard_domains_csv")
