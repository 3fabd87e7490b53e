"""Altair charts: pure functions from a polars frame to an ``alt.Chart`` (no Streamlit)."""

from __future__ import annotations

import altair as alt
import polars as pl

from dashboard.components.badges import TIER_COLORS, TIER_ORDER
from engine.models import TierThresholds

_TIER_SCALE = alt.Scale(domain=list(TIER_ORDER), range=[TIER_COLORS[t] for t in TIER_ORDER])


def _bands(thresholds: TierThresholds, top: float = 100.0) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "tier": list(TIER_ORDER),
            "low": [thresholds.excellent, thresholds.good, thresholds.fair, 0.0],
            "high": [top, thresholds.excellent, thresholds.good, thresholds.fair],
        }
    )


def tier_bands(
    thresholds: TierThresholds | None = None, y_scale: alt.Scale | None = None
) -> alt.Chart:
    """Translucent horizontal tier bands (0-100, or cut to ``y_scale``) to layer behind a
    score line.

    Layer it with ``resolve_scale(color="independent")``: sharing one colour scale with the
    line layer leaves the lines without a colour (the tier domain has no domain names).
    """
    chart: alt.Chart = (
        alt.Chart(_bands(thresholds or TierThresholds()))
        .mark_rect(opacity=0.12, clip=True)
        .encode(
            y=alt.Y("low:Q", scale=y_scale or alt.Scale(domain=[0, 100])),
            y2="high:Q",
            color=alt.Color(
                "tier:N",
                scale=_TIER_SCALE,
                legend=alt.Legend(title="tier band", orient="right", symbolOpacity=0.6),
            ),
        )
    )
    return chart


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


def trend_chart(
    frame: pl.DataFrame,
    metric: str,
    thresholds: TierThresholds | None = None,
    title: str | None = None,
    *,
    fit: bool = True,
    events: pl.DataFrame | None = None,
) -> alt.LayerChart:
    """Score over runs, one line per domain, over tier bands.

    ``frame``: run_id, run_name, started_at, status, domain, samples, metric, score
    (``queries.trends``); hovering a point shows run name, date, status and sample count.
    With ``fit`` the y axis spans the data (weekly moves of a few points stay visible), else
    the whole 0-100; a run that did not complete is drawn as a hollow point. ``events``
    (started_at, run_name, old_judge, new_judge: ``judge_changes``) draws a dashed rule at
    each run whose judge changed, so a step there is not read as the system's alone. With
    the columns of ``noise_queries.trend_steps`` (step, step_beyond, step_label) joined in,
    hovering shows each run's change from the run before with its noise interval, and a ring
    marks the steps beyond noise (red down, green up).
    """
    data = frame.filter(pl.col("metric") == metric)
    scores = data["score"].drop_nulls()
    low, high = 0.0, 100.0
    if fit and len(scores):
        spread = max(float(scores.max()) - float(scores.min()), 4.0)  # type: ignore[arg-type]
        low = max(0.0, float(scores.min()) - spread * 0.25)  # type: ignore[arg-type]
        high = min(100.0, float(scores.max()) + spread * 0.25)  # type: ignore[arg-type]
    y_scale = alt.Scale(domain=[low, high], clamp=True)
    line = (
        alt.Chart(data)
        .mark_line(point=False)
        .encode(
            x=alt.X("started_at:T", title="run started", axis=alt.Axis(format="%b %d")),
            y=alt.Y("score:Q", title=f"{title or metric} (mean, 0-100)", scale=y_scale),
            color=alt.Color(
                "domain:N",
                scale=alt.Scale(scheme="tableau10"),
                legend=alt.Legend(title="domain", labelLimit=400),
            ),
        )
    )
    points = line.mark_point(size=60, filled=True).encode(
        # the lines' legend names the domains; a second one for the points would repeat it
        color=alt.Color("domain:N", scale=alt.Scale(scheme="tableau10"), legend=None),
        fillOpacity=alt.condition(alt.datum.status == "completed", alt.value(1.0), alt.value(0.0)),
        tooltip=[
            alt.Tooltip("run_name:N", title="run"),
            alt.Tooltip("started_at:T", title="date", format="%Y-%m-%d %H:%M"),
            alt.Tooltip("status:N", title="status"),
            alt.Tooltip("samples:Q", title="samples"),
            alt.Tooltip("domain:N"),
            alt.Tooltip("score:Q", format=".1f"),
            *(
                [alt.Tooltip("step_label:N", title="change from previous run")]
                if "step_label" in data.columns
                else []
            ),
        ],
    )
    layers: list[alt.Chart | alt.LayerChart] = [tier_bands(thresholds, y_scale), line, points]
    if "step_beyond" in data.columns:
        beyond = data.filter(pl.col("step_beyond").fill_null(False))
        if not beyond.is_empty():
            layers.append(step_rings(beyond, y_scale))
    if events is not None and not events.is_empty():
        layers.append(judge_change_rules(events))
    chart: alt.LayerChart = (
        alt.layer(*layers).resolve_scale(color="independent").properties(height=320)
    )
    return chart


def step_rings(beyond: pl.DataFrame, y_scale: alt.Scale) -> alt.Chart:
    """A ring around each point whose change from the run before is beyond noise: red when
    it fell, green when it rose."""
    rings: alt.Chart = (
        alt.Chart(
            beyond.with_columns(
                direction=pl.when(pl.col("step") < 0).then(pl.lit("down")).otherwise(pl.lit("up"))
            )
        )
        .mark_point(size=260, filled=False, strokeWidth=2.5)
        .encode(
            x="started_at:T",
            y=alt.Y("score:Q", scale=y_scale),
            color=alt.Color(
                "direction:N",
                scale=alt.Scale(domain=["down", "up"], range=["#d73027", "#1a9850"]),
                legend=alt.Legend(title="beyond noise"),
            ),
            tooltip=[
                alt.Tooltip("run_name:N", title="run"),
                alt.Tooltip("domain:N"),
                alt.Tooltip("step_label:N", title="change from previous run"),
            ],
        )
    )
    return rings


def judge_change_rules(events: pl.DataFrame) -> alt.Chart:
    """A dashed vertical rule at each run whose judge changed (``queries`` judge_changes),
    with the old and new judge on hover."""
    rules: alt.Chart = (
        alt.Chart(events.select("started_at", "run_name", "old_judge", "new_judge"))
        .mark_rule(color="#6a3d9a", strokeDash=[6, 4], strokeWidth=2)
        .encode(
            x="started_at:T",
            tooltip=[
                alt.Tooltip("run_name:N", title="judge changed at"),
                alt.Tooltip("old_judge:N", title="old judge"),
                alt.Tooltip("new_judge:N", title="new judge"),
            ],
        )
    )
    return rules


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
