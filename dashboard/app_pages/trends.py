"""Trends: each domain's score over runs, per metric, with tier bands behind the line."""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from dashboard import data, formats, svg_trend
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.pickers import runs_or_stop
from dashboard.components.safe import safe_text
from dashboard.components.url_state import flag_param, set_url, url_flag, url_index, url_list
from engine.noise import METHOD_CAPTION
from warehouse import queries as q
from warehouse.drift_queries import judge_changes
from warehouse.queries import ALL_METRICS, GRADER_PREFIX, metric_label, retrieval_order

st.title("Trends")

runs = runs_or_stop()

# Archived runs are hidden unless the sidebar asks for them (runs_or_stop filters them).
shown_runs = list(runs["run_id"])
everything = data.query(q.trends).filter(pl.col("run_id").is_in(shown_runs))
# One series at a time: runs of other test sets measure other questions. The default is
# the series of the latest completed run.
series_list = (
    everything.sort("started_at", descending=True)
    .select("series", completed=pl.col("status") == "completed")
    .sort("completed", descending=True, maintain_order=True)["series"]
    .unique(maintain_order=True)
    .to_list()
)
c0, c1, c2 = st.columns([1, 1, 2])
series = c0.selectbox(
    "Series",
    series_list,
    index=url_index("series", series_list),
    key="trends_series",
    help="Runs of one series (run --series, else the run name without its date or week).",
)
everything = everything.filter(pl.col("series") == series)
domains = sorted(set(everything["domain"]))
# Only metrics some run has (a run without a judge has no judge metrics).
present = set(everything["metric"])
offered = [m for m in ALL_METRICS if m in present] or list(ALL_METRICS[:3])
offered += sorted(m for m in present if m.startswith(GRADER_PREFIX))
offered += retrieval_order(present)
metric = c1.selectbox(
    "Metric",
    offered,
    index=url_index("metric", offered),
    format_func=metric_label,
    key="trends_metric",
)
chosen = c2.multiselect(
    "Domains",
    domains,
    default=url_list("domain", domains),
    key="trends_domains",
    placeholder="All domains",
)
set_url(
    series=None if series == series_list[0] else series,
    metric=None if metric == offered[0] else metric,
    domain=chosen,
)
frame = (
    data.query(q.trends, tuple(chosen)).filter(
        pl.col("run_id").is_in(shown_runs) & (pl.col("series") == series)
    )
    if chosen
    else everything
)
fit = st.toggle(
    "Fit the axis to the data",
    value=url_flag("fit", True),
    key="trends_fit",
    help="Off: the whole 0-100 scale. Hollow points: runs that did not complete.",
)
set_url(fit=flag_param(fit, True))

# Each completed run's step from the completed run before it, with the interval every page
# uses: a step beyond noise is ringed on the chart and listed in the table below.
completed = (
    everything.filter(pl.col("status") == "completed")
    .select("run_id", "started_at")
    .unique()
    .sort("started_at", "run_id")["run_id"]
)
steps = data.query(data.trend_steps, tuple(completed), metric)
if chosen:
    steps = steps.filter(pl.col("domain").is_in(chosen))
frame = frame.join(steps, on=["run_id", "domain"], how="left")

latest = str(runs["run_id"][0])
tiers = data.query(q.run_tiers, latest)
events = data.query(judge_changes).filter(
    (pl.col("series") == series) & pl.col("run_id").is_in(shown_runs)
)
# Inline SVG, not Vega-Lite (dashboard/svg_charts.py): no chart library to load or run.
st.markdown(
    svg_trend.trend_svg(frame, metric, tiers, title=metric_label(metric), fit=fit, events=events),
    unsafe_allow_html=True,
)
if not events.is_empty():
    st.caption(
        "Dashed rules: runs whose judge changed ("
        + "; ".join(
            safe_text(f"{r['run_name']}: {formats.judge_shift(r['old_judge'], r['new_judge'])}")
            for r in events.iter_rows(named=True)
        )
        + "). The Overview of such a run splits its change into judge drift and system change."
    )
st.caption(
    f"Bands: the tiers of the latest run ({latest}): excellent ≥ {tiers.excellent:g}, "
    f"good ≥ {tiers.good:g}, fair ≥ {tiers.fair:g}, poor below. Every metric in its 0-100 "
    "form: 1-5 scores as (s - 1) × 25, 0-1 ratios × 100, pass rate in %. Hover a point for "
    "details. Rings: a completed run's change from the completed run before it is beyond "
    f"noise ({METHOD_CAPTION})."
)
wide = (
    frame.filter(pl.col("metric") == metric)
    .pivot(on="domain", index=["started_at", "run_name", "run_id"], values="score")
    .sort("started_at")
)
domain_columns: dict[str, Any] = {
    d: st.column_config.NumberColumn(d, format="%.1f")
    for d in wide.columns
    if d not in ("started_at", "run_name", "run_id")
}
tables.show(
    wide,
    formats={d: "%.1f" for d in wide.columns if d not in ("started_at", "run_name", "run_id")},
    started_at=st.column_config.DatetimeColumn("Started", format=formats.TIMESTAMP_GRID),
    run_name="Run",
    run_id="Run ID",
    **domain_columns,
)
moved = frame.filter(pl.col("metric") == metric, pl.col("step_beyond").fill_null(False))
if not moved.is_empty():
    st.subheader("Changes beyond noise", divider="gray")
    tables.show(
        moved.sort("started_at", "domain").select("run_name", "domain", "score", "step_label"),
        formats={"score": "%.1f"},
        run_name="Run",
        domain="Domain",
        score=st.column_config.NumberColumn(metric_label(metric), format="%.1f"),
        step_label=st.column_config.TextColumn(
            "Change from previous run", help="Mean paired change and its 95% interval"
        ),
    )
download_csv(frame, f"trends-{metric}.csv", key="trends_csv")
