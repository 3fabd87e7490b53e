"""Altair charts of the Judge agreement page: pure functions from a polars frame to a
chart (no Streamlit); a module of its own because ``charts`` is long enough."""

from __future__ import annotations

import altair as alt
import polars as pl


def calibration_chart(frame: pl.DataFrame) -> alt.LayerChart:
    """Points: per judge and score bin, the judge's mean score (x, 0-100) against the
    share of reviewers who called the response correct (y, in percent), sized by reviews,
    over the diagonal a calibrated judge lies on.

    ``frame``: judge, judge_mean, share_correct, reviews, bin_low, bin_high
    (``reliability_queries.judge_calibration``).
    """
    data = frame.with_columns((pl.col("share_correct") * 100).alias("correct_percent"))
    scale = alt.Scale(domain=[0, 100])
    points = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("judge_mean:Q", title="judge score (0-100)", scale=scale),
            y=alt.Y("correct_percent:Q", title="reviewers: correct (%)", scale=scale),
            color=alt.Color("judge:N", title="judge", legend=alt.Legend(orient="bottom")),
            size=alt.Size("reviews:Q", title="reviews", legend=None),
            tooltip=[
                "judge:N",
                alt.Tooltip("bin_low:Q", title="bin from"),
                alt.Tooltip("bin_high:Q", title="bin to"),
                alt.Tooltip("judge_mean:Q", title="mean judge score", format=".1f"),
                alt.Tooltip("correct_percent:Q", title="correct (%)", format=".0f"),
                "reviews:Q",
            ],
        )
    )
    diagonal = (
        alt.Chart(pl.DataFrame({"x": [0.0, 100.0], "y": [0.0, 100.0]}))
        .mark_line(strokeDash=[4, 4], color="#888888")
        .encode(x="x:Q", y="y:Q")
    )
    chart: alt.LayerChart = (diagonal + points).properties(height=300)
    return chart
