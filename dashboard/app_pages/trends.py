"""Trends: each domain's score over runs, per metric, with tier bands behind the line."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import charts, data
from dashboard.components.downloads import download_csv
from dashboard.components.pickers import runs_or_stop
from warehouse import queries as q
from warehouse.queries import METRICS

st.title("Trends")

runs = runs_or_stop()

everything = data.query(q.trends)
domains = sorted(set(everything["domain"]))
c1, c2 = st.columns([1, 3])
metric = c1.selectbox("Metric", METRICS, key="trends_metric")
chosen = c2.multiselect("Domains", domains, key="trends_domains", placeholder="All domains")
frame = data.query(q.trends, tuple(chosen)) if chosen else everything

st.altair_chart(charts.trend_chart(frame, metric))
st.caption("Bands: excellent ≥ 85, good ≥ 70, fair ≥ 50, poor below. Hover a point for details.")
wide = (
    frame.filter(pl.col("metric") == metric)
    .pivot(on="domain", index=["started_at", "run_name", "run_id"], values="score")
    .sort("started_at")
)
st.dataframe(wide, hide_index=True)
download_csv(frame, f"trends-{metric}.csv", key="trends_csv")
