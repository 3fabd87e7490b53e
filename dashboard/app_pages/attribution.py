"""Attribution: how often responses cite a URL, name the domain or a brand, per domain and
AI provider, and how that changes over runs."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import data, svg_charts
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.pickers import pick_run, runs_or_stop
from dashboard.components.url_state import set_url, url_index
from warehouse import queries as q

st.title("Attribution")

runs = runs_or_stop()
run_ids = list(runs["run_id"])
run_id = pick_run(runs, "attribution_run")

rates = data.query(q.attribution_rates, run_id)
if rates.is_empty():
    st.info(
        "Attribution is n/a for this run: no scored response has anything to attribute "
        "(its cases name no brand, and their domain is no host name), or it has no scored "
        "responses."
    )
else:
    st.subheader("Mention rates per domain and AI provider")
    st.caption("Share of scored responses (errors left out) with at least one mention.")
    tables.show_html(rates, name="attribution_rates")
    download_csv(rates, f"attribution-{run_id}.csv", key="attribution_rates_csv")
    # Inline SVG, not Vega-Lite (dashboard/svg_charts.py): no chart library to load or run.
    st.markdown(svg_charts.mention_rates_svg(rates), unsafe_allow_html=True)

st.subheader("Trend")
domains = data.query(q.run_filters, run_id)["domain"]
domain_options = ["", *domains]
domain = st.selectbox(
    "Domain",
    domain_options,
    index=url_index("domain", domain_options),
    format_func=lambda d: d or "All domains",
    key="attribution_trend_domain",
)
set_url(run=run_id, domain=domain)
# Archived runs are left out unless the sidebar shows them (runs_or_stop filters them).
trend = data.query(q.attribution_trend, domain or None).filter(pl.col("run_id").is_in(run_ids))
if trend.height:
    st.markdown(svg_charts.mention_trend_svg(trend), unsafe_allow_html=True)
else:
    st.info("No scored responses to attribute in the runs shown.")
download_csv(trend, "attribution-trend.csv", key="attribution_trend_csv")
