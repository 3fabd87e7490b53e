"""Overview: per-domain scores of a run against a baseline, with noise and tier mix."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import data, svg_charts
from dashboard.components import tables
from dashboard.components.badges import tier_legend
from dashboard.components.cards import run_cards, show_run_cards
from dashboard.components.downloads import download_csv
from dashboard.components.html_table import Column, show_table
from dashboard.components.judge_drift import show_judge_change
from dashboard.components.links import compare_params, page_url
from dashboard.components.pickers import pick_run, pick_series, run_label, runs_or_stop
from dashboard.components.reanalysis_note import show_reanalysis_note
from dashboard.components.safe import safe_text
from dashboard.components.url_state import (
    changed,
    flag_param,
    set_url,
    url_flag,
    url_index,
    url_list,
)
from dashboard.judge_change import system_cards
from dashboard.report import overview_metric_names, render_report
from dashboard.verdict import alerts_banner, domain_verdict, verdict_rows
from engine.clock import utcnow
from engine.noise import METHOD_CAPTION
from warehouse import queries as q
from warehouse.drift_queries import series_runs_all
from warehouse.queries import Filters

st.title("Overview")

runs = runs_or_stop()

run_ids = list(runs["run_id"])
labels = run_label(runs)
# One series at a time, the weekly review's by default: an ad-hoc launch (a series of its
# own, without a baseline) never takes over the first screen.
all_series = data.query(series_runs_all)
s_col, left, right = st.columns([1, 1, 1])
series = pick_series(runs, all_series, "overview_series", container=s_col)
if changed("overview_series", series):
    set_url(run=None, baseline=None)  # chosen within another series
in_series = set(all_series.filter(pl.col("series") == series)["run_id"])
run_id = pick_run(runs.filter(pl.col("run_id").is_in(in_series)), "overview_run", container=left)
if changed("overview_run", run_id):
    set_url(baseline=None)  # the URL's baseline was chosen for another run
previous = data.query(q.baseline_run, run_id)
NO_BASELINE = ""
baseline_options = [NO_BASELINE, *[r for r in run_ids if r != run_id]]
default_base = baseline_options.index(previous) if previous in baseline_options else 0
chosen = right.selectbox(
    "Baseline",
    baseline_options,
    # "none" in the URL: no baseline on purpose (an absent one means the default)
    index=0
    if st.query_params.get("baseline") == "none"
    else url_index("baseline", baseline_options, default_base),
    format_func=lambda r: labels.get(r, "(no baseline)"),
    key=f"overview_baseline_{run_id}",
)
baseline = chosen or None

# The answer a product manager comes for goes first; it is filled in once the table is
# known. A judge change is said before anything else: it decides what the numbers mean.
judge = data.query(data.judge_change, run_id, baseline)
if judge is not None:
    st.warning(safe_text(judge.note()), icon=":material/gavel:")
show_reanalysis_note(run_id)
verdict_slot = st.container()

show_judge_change(run_id, baseline)
base_cards = None if baseline is None else data.query(q.run_cards, baseline)
card_noise = None if baseline is None else data.query(data.card_noise, run_id, baseline)
cards = run_cards(data.query(q.run_cards, run_id), base_cards, card_noise)
show_run_cards(system_cards(cards, judge, card_noise))
if baseline is not None:
    st.page_link(
        page_url(st.context.url or "", "compare", compare_params(run_id, baseline, "pass_rate")),
        label="Samples behind the pass-rate change, largest drop first",
        icon=":material/open_in_new:",
    )
st.caption(
    "Whole run, every iteration. Pass rate counts empty and abstained answers as not passed "
    "(errors left out); Abstained is their share. Each card's change is against the "
    f"baseline, coloured only when it is beyond noise ({METHOD_CAPTION}). The filters below "
    "apply to the tables."
)

options = data.query(q.run_filters, run_id)
f1, f2, f3 = st.columns(3)
providers = f1.multiselect(
    "AI provider",
    options["provider"],
    default=url_list("provider", options["provider"]),
    key=f"overview_providers_{run_id}",
    placeholder="All providers",
)
tags = [None, *options["tag"]]
tag = f2.selectbox(
    "Tag",
    tags,
    index=url_index("tag", tags),
    format_func=lambda t: "All tags" if t is None else t,
    key=f"overview_tag_{run_id}",
)
candidate = None
if len(options["candidate"]) > 1:
    candidates = [None, *options["candidate"]]
    candidate = f3.selectbox(
        "Candidate",
        candidates,
        index=url_index("candidate", candidates),
        format_func=lambda c: "All candidates" if c is None else c,
        key=f"overview_candidate_{run_id}",
    )
filters = Filters(candidate=candidate, providers=tuple(providers) or None, tag=tag)
set_url(
    series=series,
    run=run_id,
    baseline=("none" if previous else None)
    if baseline is None
    else (baseline if baseline != previous else None),
    provider=providers,
    tag=tag,
    candidate=candidate,
)

frame = data.query(data.system_overview, run_id, baseline, filters)
if frame.is_empty():
    st.warning("No results match these filters.")
    st.stop()

verdict = domain_verdict(
    frame,
    overview_metric_names(frame),
    baseline is not None,
    "" if judge is None else judge.scope(),
)
with verdict_slot:
    alerts_banner(data.query(q.firing_alerts, run_id))
    worse = bool(verdict.worse)
    (st.error if worse else st.success if verdict.changes else st.info)(
        f"**{safe_text(verdict.headline())}**",
        icon=":material/trending_down:" if worse else None,
    )
    if verdict.changes and baseline is not None:
        here = st.context.url or ""
        movers = verdict_rows(verdict).with_columns(
            pl.Series(
                "Samples",
                [
                    page_url(here, "compare", compare_params(run_id, baseline, c.key, c.domain))
                    for c in verdict.changes
                ],
                dtype=pl.String,
            )
        )
        # The link first, where a reader's eye starts.
        movers = movers.select("Samples", pl.exclude("Samples"))
        show_table(
            movers,
            {
                **tables.VERDICT_COLUMNS,
                "Samples": Column(
                    link="Compare ↗",
                    help="Compare filtered to this domain and metric, largest drop first",
                ),
            },
            name="overview_verdict",
        )

st.subheader("Scores per domain")
tiers = data.query(q.run_tiers, run_id)
tier_legend(tiers)
only_beyond = st.toggle(
    "Only changes beyond noise",
    value=url_flag("beyond", False),
    key="overview_beyond_only",
    disabled=baseline is None,
)
set_url(beyond=flag_param(only_beyond, False))
st.caption(
    "Δ is the change against the baseline, coloured only when it is beyond noise: the "
    f"{METHOD_CAPTION} excludes zero. Grey Δ: within noise or no verdict. Abstained: share "
    "of the domain's answers that were empty or declined (counted as not passed)."
)
every_column = st.toggle(
    "All columns",
    key="overview_all_columns",
    help="Also the tier, the sample and error counts and the abstention rate.",
)
shown, beyond = tables.overview_display(frame, tiers, only_beyond=only_beyond)
show_table(
    shown,
    tables.overview_columns(beyond),
    # The change and its noise verdict right after the metric; the counts behind "All
    # columns", so the key columns stay readable at 1024 px with the sidebar open.
    order=tables.OVERVIEW_COLUMNS if every_column else tables.OVERVIEW_SHORT,
    name="overview_table",
)
# The download has the table's shape and rounding: what the reader sees is what they get.
c1, c2 = st.columns(2)
with c1:
    download_csv(
        shown,
        f"overview-{run_id}.csv",
        key="overview_csv",
    )
run_row = data.query(q.run_info, run_id)
if run_row is not None:
    base_row = None if baseline is None else dict(data.query(q.run_info, baseline) or {}) or None
    this_row = dict(run_row)

    def report() -> str:
        # Built when the button is clicked (Streamlit runs it on its own thread), not on
        # every run of the page.
        return render_report(
            this_row,
            base_row,
            frame,
            verdict,
            tables.overview_display(frame, tiers),
            now=utcnow(),
            judge_note="" if judge is None else judge.note(),
        )

    c2.download_button(
        "Download report (HTML)",
        report,
        file_name=f"report-{run_id}.html",
        mime="text/html",
        icon=":material/description:",
        help="The verdict, charts and table in one file that opens offline: attach it.",
        key="overview_report",
    )

st.subheader("Score distribution")
spread = data.query(q.metric_distribution, run_id)
if spread.height:
    st.caption("Per domain: lowest to highest score, the middle half as a box, the median a tick.")
    # Inline SVG, not a Vega-Lite chart: the first page of a visit need not load the chart
    # library (dashboard/svg_charts.py). Markdown, because st.html's sanitiser drops SVG.
    st.markdown(svg_charts.distribution_svg(spread, q.metric_label), unsafe_allow_html=True)
    download_csv(spread, f"distribution-{run_id}.csv", key="overview_distribution_csv")

st.subheader("Tier distribution")
mix = data.query(q.tier_distribution, run_id, filters)
if mix.height:
    st.markdown(svg_charts.tier_mix_svg(mix, q.metric_label), unsafe_allow_html=True)
download_csv(mix, f"tiers-{run_id}.csv", key="overview_tiers_csv")
