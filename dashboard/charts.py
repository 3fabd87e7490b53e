"""Altair charts: pure functions from a polars frame to an ``alt.Chart`` (no Streamlit)."""

from __future__ import annotations

import altair as alt
import polars as pl


def turn_scores_chart(frame: pl.DataFrame) -> alt.LayerChart:
    """Bars: each assistant turn's expectation score (0-1), coloured by whether it met its
    expectation, with the pass mark as a rule.

    ``frame``: turn, expectation_score, expectation_passed (``queries.conversation_turns``
    rows of assistant turns that have an expectation).
    """
    data = frame.with_columns(
        pl.when(pl.col("expectation_passed"))
        .then(pl.lit("met"))
        .otherwise(pl.lit("missed"))
        .alias("expectation")
    )
    bars = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("turn:O", title="turn", axis=alt.Axis(labelAngle=0)),
            y=alt.Y(
                "expectation_score:Q", title="expectation score", scale=alt.Scale(domain=[0, 1])
            ),
            color=alt.Color(
                "expectation:N",
                scale=alt.Scale(domain=["met", "missed"], range=["#2e7d32", "#c62828"]),
                title="expectation",
            ),
            tooltip=["turn:O", alt.Tooltip("expectation_score:Q", format=".2f"), "expectation:N"],
        )
    )
    mark = (
        alt.Chart(pl.DataFrame({"pass_mark": [0.5]}))
        .mark_rule(strokeDash=[4, 4])
        .encode(y="pass_mark:Q")
    )
    chart: alt.LayerChart = (bars + mark).properties(height=220)
    return chart


RATING_METHODS = ("Elo", "Bradley–Terry")
"""The rating columns of the Leaderboard, in legend order."""


def leaderboard_chart(frame: pl.DataFrame) -> alt.LayerChart:
    """Each player's rating by method, as bars from 1000 (the average player), best first.

    ``frame``: label, method, rating (one row per player and method). Bars start at 1000
    rather than 0: ratings differ by tens of points around 1000, invisible from zero.
    """
    order = list(
        frame.filter(pl.col("method") == RATING_METHODS[0]).sort("rating", descending=True)["label"]
    )
    base = alt.Chart(frame).encode(
        y=alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelLimit=360)),
        yOffset=alt.YOffset("method:N", sort=list(RATING_METHODS)),
    )
    bars = base.mark_bar().encode(
        x=alt.X("rating:Q", title="rating (1000 = average player)", scale=alt.Scale(zero=False)),
        x2=alt.X2(datum=1000),
        color=alt.Color(
            "method:N",
            scale=alt.Scale(domain=list(RATING_METHODS), range=["#4c78a8", "#f58518"]),
            legend=alt.Legend(title="rating", orient="top"),
        ),
        tooltip=[
            alt.Tooltip("label:N", title="player"),
            "method:N",
            alt.Tooltip("rating:Q", format=".1f"),
        ],
    )
    centre = alt.Chart(pl.DataFrame({"x": [1000.0]})).mark_rule(color="#555").encode(x="x:Q")
    layered = alt.LayerChart(layer=[bars, centre])
    chart: alt.LayerChart = layered.properties(height=alt.Step(16))
    return chart


WTL_ORDER = ("A wins", "tie", "B wins")
"""Outcomes of a head-to-head comparison, left to right."""


def win_tie_loss_chart(frame: pl.DataFrame, label_a: str, label_b: str) -> alt.LayerChart:
    """Share of A wins / ties / B wins per domain (stacked to 100%), with A's win rate and
    its Wilson 95% interval drawn over the A segment.

    ``frame``: domain, wins_a, ties, wins_b, judged, a_win_rate, a_win_low, a_win_high
    (``queries.comparison_domains``).
    """
    judged = frame.filter(pl.col("judged") > 0)
    long = judged.unpivot(
        index=["domain", "judged"],
        on=["wins_a", "ties", "wins_b"],
        variable_name="outcome",
        value_name="pairs",
    ).with_columns(
        pl.col("outcome").replace_strict(
            {"wins_a": WTL_ORDER[0], "ties": WTL_ORDER[1], "wins_b": WTL_ORDER[2]}
        ),
        (pl.col("pairs") / pl.col("judged")).alias("share"),
    )
    domains = list(judged["domain"])
    y = alt.Y("domain:N", title=None, sort=domains, axis=alt.Axis(labelLimit=240))
    bars = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X(
                "share:Q",
                stack="zero",
                title="share of judged pairs",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1]),
            ),
            y=y,
            color=alt.Color(
                "outcome:N",
                scale=alt.Scale(domain=list(WTL_ORDER), range=["#1a9850", "#bdbdbd", "#d73027"]),
                legend=alt.Legend(
                    title=f"A = {label_a}; B = {label_b}",
                    orient="top",
                    labelLimit=400,
                    titleLimit=900,
                ),
            ),
            order=alt.Order("rank:Q"),
            tooltip=["domain:N", "outcome:N", "pairs:Q", alt.Tooltip("share:Q", format=".0%")],
        )
        .transform_calculate(rank=f"indexof({list(WTL_ORDER)!r}, datum.outcome)")
    )
    interval = (
        alt.Chart(judged)
        .mark_errorbar(ticks=True, color="black")
        .encode(
            x=alt.X("a_win_low:Q", title="share of judged pairs"),
            x2="a_win_high:Q",
            y=y,
            tooltip=[
                "domain:N",
                alt.Tooltip("a_win_rate:Q", title="A win rate", format=".0%"),
                alt.Tooltip("a_win_low:Q", title="95% low", format=".0%"),
                alt.Tooltip("a_win_high:Q", title="95% high", format=".0%"),
            ],
        )
    )
    layered = alt.LayerChart(layer=[bars, interval])
    chart: alt.LayerChart = layered.properties(height=alt.Step(28))
    return chart


def retrieval_rank_chart(frame: pl.DataFrame) -> alt.Chart:
    """One point per ground-truth passage at the rank it was retrieved (1 = top), passages
    not retrieved at the bottom in grey: how high the retriever put what it should find.

    ``frame``: passage, rank (null: not retrieved), matched_by (``queries.sample_retrieval``).
    """
    deepest = int(frame["rank"].cast(pl.Int64).max() or 0) if frame.height else 0  # type: ignore[arg-type]
    data = frame.with_columns(
        pl.col("rank").is_not_null().alias("retrieved"),
        pl.col("rank").fill_null(deepest + 1).alias("shown_rank"),
    )
    chart: alt.Chart = (
        alt.Chart(data)
        .mark_point(filled=True, size=120)
        .encode(
            x=alt.X(
                "shown_rank:Q",
                title="rank (right of the last: not retrieved)",
                scale=alt.Scale(domainMin=1),
            ),
            y=alt.Y("passage:N", title=None, sort=None),
            color=alt.Color(
                "retrieved:N",
                scale=alt.Scale(domain=[True, False], range=["#2e7d32", "#9e9e9e"]),
                title="retrieved",
            ),
            tooltip=["passage:N", "rank:Q", "matched_by:N"],
        )
        .properties(height=alt.Step(28))
    )
    return chart
