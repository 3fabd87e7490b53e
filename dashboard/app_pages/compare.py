"""Compare runs: baseline vs challenger per sample (improved, regressed, unchanged), per
domain counts, largest regressions first. Also two candidates of one run. Head to head: the
latest pairwise judgment of the two sides, and a button that launches one."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import charts, data
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.head_to_head import head_to_head
from dashboard.components.links import sample_picker
from dashboard.components.pickers import pick_run, run_label, runs_or_stop
from dashboard.components.quick_review import quick_review
from dashboard.components.reanalysis_note import show_reanalysis_relation
from dashboard.components.side_by_side import side_by_side
from dashboard.components.testset_versions import shared_cases_only
from dashboard.components.url_state import changed, set_url, url_index, url_int
from warehouse import queries as q
from warehouse.queries import ALL_METRICS, PAGE_SIZE, SampleRef, metric_label

st.title("Compare runs")

runs = runs_or_stop()
run_ids = list(runs["run_id"])
labels = run_label(runs)

MODES = ["Two runs", "Two candidates of one run"]
mode = st.radio(
    "Compare",
    MODES,
    index=1 if st.query_params.get("mode") == "candidates" else 0,
    horizontal=True,
    key="compare_mode",
)
candidate = baseline_candidate = previous = None
if mode == "Two runs":
    c1, c2 = st.columns(2)
    challenger = pick_run(runs, "compare_run", container=c1, label="Challenger")
    if changed("compare_run", challenger):
        set_url(baseline=None)  # chosen for another challenger
    previous = data.query(q.baseline_run, challenger)
    others = [r for r in run_ids if r != challenger] or run_ids
    baseline = str(
        c2.selectbox(
            "Baseline",
            others,
            index=url_index(
                "baseline", others, others.index(previous) if previous in others else 0
            ),
            format_func=lambda r: labels.get(r, r),
            key=f"compare_baseline_{challenger}",
        )
    )
else:
    multi = [r for r in run_ids if len(data.query(q.run_filters, r)["candidate"]) > 1]
    if not multi:
        st.info("No run has several candidates. Runs with prompt variants show up here.")
        st.stop()
    challenger = pick_run(runs.filter(pl.col("run_id").is_in(multi)), "compare_cand_run")
    baseline = challenger
    names = data.query(q.run_filters, challenger)["candidate"]
    c1, c2 = st.columns(2)
    baseline_candidate = c1.selectbox(
        "Baseline candidate",
        names,
        index=url_index("baseline_candidate", names),
        key="compare_cand_base",
    )
    rest = [n for n in names if n != baseline_candidate]
    candidate = c2.selectbox(
        "Challenger candidate", rest, index=url_index("candidate", rest), key="compare_cand_chal"
    )

if candidate is None:
    show_reanalysis_relation(challenger, baseline)
shared_only = shared_cases_only(challenger, baseline)

c1, c2 = st.columns(2)
metrics = [*ALL_METRICS, *data.query(q.run_graders, (challenger, baseline))]
metric = c1.selectbox(
    "Metric (0-100 form)",
    metrics,
    index=url_index("metric", metrics),
    format_func=metric_label,
    key="compare_metric",
)
tolerance = c2.number_input(
    "Tolerance (points)",
    min_value=0.0,
    max_value=100.0,
    value=5.0,
    step=1.0,
    format="%.1f",  # points on 0-100: the one decimal of that scale
    key="compare_tolerance",
)

counts = data.query(
    q.compare_counts,
    challenger,
    baseline,
    metric=metric,
    tolerance=tolerance,
    candidate=candidate,
    baseline_candidate=baseline_candidate,
    shared_only=shared_only,
)
if counts.is_empty():
    st.warning("The two sides have no samples in common.")
    st.stop()
totals = counts.select("improved", "regressed", "unchanged").sum().row(0, named=True)
m1, m2, m3 = st.columns(3)
m1.metric("Regressed", totals["regressed"])
m2.metric("Improved", totals["improved"])
m3.metric("Unchanged", totals["unchanged"])

st.subheader("Per domain")
st.altair_chart(charts.compare_counts_chart(counts))
if counts["median_delta"].drop_nulls().len():
    st.caption("Per-sample change per domain: lowest to highest, middle half, median.")
    st.altair_chart(
        charts.box_chart(
            counts,
            low="worst_delta",
            q1="q1_delta",
            median="median_delta",
            q3="q3_delta",
            high="best_delta",
            title="change per sample (points)",
        )
    )
# The change first: at 1024 px the columns after the counts scrolled out of sight.
first = ["domain", "mean_delta", "worst_delta", "regressed", "improved"]
boxes = ["q1_delta", "median_delta", "q3_delta", "best_delta"]
tables.show(counts.select(*first, pl.exclude(*first, *boxes)))
download_csv(counts, f"compare-{baseline}-{challenger}-domains.csv", key="compare_counts_csv")

st.subheader("Per sample")
f1, f2, f3 = st.columns(3)
statuses = ["", "regressed", "improved", "unchanged", "not scored"]
status = f1.selectbox(
    "Status",
    statuses,
    index=url_index("status", statuses),
    format_func=lambda s: s or "All",
    key="compare_status",
)
domains = ["", *counts["domain"]]
domain = f2.selectbox(
    "Domain",
    domains,
    index=url_index("domain", domains),
    format_func=lambda d: d or "All domains",
    key="compare_domain",
)
page_no = f3.number_input("Page", min_value=1, value=url_int("page"), step=1, key="compare_page")
set_url(
    mode="candidates" if mode != MODES[0] else None,
    run=challenger,
    baseline=None if mode != MODES[0] or baseline == previous else baseline,
    baseline_candidate=baseline_candidate,
    candidate=candidate,
    metric=None if metric == ALL_METRICS[0] else metric,
    status=status,
    domain=domain,
    page=int(page_no),
)
samples = data.query(
    q.compare_samples,
    challenger,
    baseline,
    metric=metric,
    tolerance=tolerance,
    candidate=candidate,
    baseline_candidate=baseline_candidate,
    shared_only=shared_only,
    status=status or None,
    domain=domain or None,
    offset=(int(page_no) - 1) * PAGE_SIZE,
)
total = int(samples["total_rows"][0]) if samples.height else 0
st.caption(f"{total} samples, largest regression first; page {page_no}")
shown = samples.drop("total_rows")
# The change and both scores right after the sample, in narrow columns, and the two answer
# labels as one: at 1024 px the query pushed the numbers out of sight (the query is in the
# CSV and side by side below).
tables.show(
    shown.select(
        "sample_id",
        "delta",
        "status",
        "baseline_score",
        "challenger_score",
        "domain",
        pl.when(pl.col("baseline_answer") == pl.col("challenger_answer"))
        .then(pl.col("challenger_answer"))
        .otherwise(pl.concat_str("baseline_answer", pl.lit(" → "), "challenger_answer"))
        .alias("answer"),
    ),
    sample_id=st.column_config.TextColumn("Sample ID", pinned=True),
    delta=st.column_config.Column("Δ", width="small"),
    status=st.column_config.TextColumn("Status", width=90),
    baseline_score=st.column_config.Column("Base", help="Baseline score (0-100)", width="small"),
    challenger_score=st.column_config.Column("New", help="Challenger score (0-100)", width="small"),
    domain=st.column_config.TextColumn("Domain", width=130),
    answer=st.column_config.TextColumn(
        "Answer", help="Baseline → challenger (one word when both are the same)", width=150
    ),
)
download_csv(shown, f"compare-{baseline}-{challenger}-samples.csv", key="compare_samples_csv")
sample_picker(shown, key="compare_open", run_id=challenger)

st.subheader("Side by side")
if shown.is_empty():
    st.info("No sample on this page to show side by side.")
else:
    picked = st.selectbox(
        "Sample", list(shown["sample_id"]), key=f"compare_side_{baseline}_{challenger}"
    )
    picked_row = shown.filter(shown["sample_id"] == picked).row(0, named=True)
    side_by_side(
        (
            f"Baseline: {labels.get(baseline, baseline)}"
            + (f" · {baseline_candidate}" if baseline_candidate else ""),
            SampleRef(baseline, picked, int(picked_row["iteration"]), baseline_candidate or ""),
        ),
        (
            f"Challenger: {labels.get(challenger, challenger)}"
            + (f" · {candidate}" if candidate else ""),
            SampleRef(challenger, picked, int(picked_row["iteration"]), candidate or ""),
        ),
    )
    quick_review(
        SampleRef(challenger, picked, int(picked_row["iteration"]), candidate or ""),
        key="compare_review",
        title="Review the challenger's answer",
    )

head_to_head(baseline, challenger, baseline_candidate, candidate)
