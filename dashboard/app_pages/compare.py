"""Compare runs: baseline vs challenger per sample (improved, regressed, unchanged), per
domain counts, largest regressions first; more runs added as columns against the same
baseline, samples grouped by any field, and only the samples that differ. Also two
candidates of one run. Head to head: the latest pairwise judgment of the two sides, and a
button that launches one."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import data, svg_charts
from dashboard.components import compare_tables as ct
from dashboard.components.cards import show_count_cards
from dashboard.components.downloads import download_csv
from dashboard.components.head_to_head import head_to_head
from dashboard.components.html_table import Column, show_table
from dashboard.components.links import sample_picker
from dashboard.components.pickers import pick_run, run_label, runs_or_stop
from dashboard.components.quick_review import quick_review
from dashboard.components.reanalysis_note import show_reanalysis_relation
from dashboard.components.safe import safe_text
from dashboard.components.side_by_side import SIDE_BY_SIDE_OPEN, side_by_side
from dashboard.components.testset_versions import shared_cases_only
from dashboard.components.url_state import changed, set_url, url_index, url_int, url_list
from engine.noise import METHOD_CAPTION
from warehouse import compare_queries as cq, queries as q
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
added: list[str] = []
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
    # Braintrust's "add comparison": more runs as columns, each against the one baseline.
    addable = [r for r in run_ids if r not in (challenger, baseline)]
    if addable:
        added = st.multiselect(
            "Add runs",
            addable,
            default=url_list("add", addable),
            format_func=lambda r: labels.get(r, r),
            key=f"compare_add_{challenger}_{baseline}",
            help="Each added run gets its own score and Δ columns against the baseline.",
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

c1, c2, c3 = st.columns([2, 1, 2])
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
group_fields = data.query(cq.compare_group_fields, challenger)
group = str(
    c3.selectbox(
        "Group by",
        group_fields,
        index=url_index("group", group_fields),
        format_func=cq.group_label,
        key="compare_group",
    )
)
compared = [challenger, *added]

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
show_count_cards(
    [
        ("Regressed", totals["regressed"], "Samples whose score fell by more than the tolerance"),
        ("Improved", totals["improved"], "Samples whose score rose by more than the tolerance"),
        ("Unchanged", totals["unchanged"], "Samples within the tolerance"),
    ]
)

st.subheader("Per domain")
# Inline SVG, not Vega-Lite charts (dashboard/svg_charts.py): the browser draws them at once.
st.markdown(svg_charts.compare_counts_svg(counts), unsafe_allow_html=True)
if counts["median_delta"].drop_nulls().len():
    st.caption("Per-sample change per domain: lowest to highest, middle half, median.")
    st.markdown(
        svg_charts.change_box_svg(
            counts,
            ("worst_delta", "q1_delta", "median_delta", "q3_delta", "best_delta"),
            "change per sample (points)",
        ),
        unsafe_allow_html=True,
    )
every = st.toggle(
    "All columns",
    value=st.query_params.get("columns") == "all",
    key="compare_all_columns",
    help="Also the sample counts, unchanged, not scored and the answers' domain.",
)
# The change first and the rarely needed counts behind "All columns": at 1024 px the
# columns after the counts scrolled out of sight.
first = ["domain", "mean_delta", "worst_delta", "regressed", "improved"]
boxes = ["q1_delta", "median_delta", "q3_delta", "best_delta"]
domain_table = counts.select(*first, pl.exclude(*first))  # the boxes only in the CSV
noise = data.query(
    data.compare_noise,
    challenger,
    baseline,
    metric,
    candidate=candidate,
    baseline_candidate=baseline_candidate,
    shared_only=shared_only,
)
domain_table = domain_table.join(
    noise.select("domain", "change_label"), on="domain", how="left"
).select("domain", "mean_delta", "change_label", pl.exclude("domain", "mean_delta", "change_label"))
if added:
    by_domain = data.query(
        cq.compare_groups, tuple(added), baseline, metric=metric, tolerance=tolerance
    )
    domain_table = domain_table.join(
        ct.per_run_columns(by_domain, added, "domain"), on="domain", how="left"
    )
signed = "+.1f"
show_table(
    domain_table,
    {
        "domain": Column("Domain"),
        "mean_delta": Column("Mean Δ", number=signed),
        "change_label": Column("Noise", help=f"The mean change's 95% interval: {METHOD_CAPTION}"),
        "worst_delta": Column("Worst Δ", number=signed),
        "regressed": Column("Regr.", help="Samples regressed beyond the tolerance"),
        "improved": Column("Impr.", help="Samples improved beyond the tolerance"),
        "samples": Column("Samples"),
        "unchanged": Column("Same", help="Samples within the tolerance"),
        "not_scored": Column("Not scored"),
        **ct.added_run_table_columns(added, labels),
    },
    # The counts a PM rarely needs behind "All columns"; with added runs' columns the
    # interval too (1024 px). The boxes' quartiles only in the CSV.
    order=[
        c
        for c in domain_table.columns
        if c not in boxes
        and (every or c not in ("samples", "unchanged", "not_scored"))
        and (every or not added or c != "change_label")
    ],
    name="compare_domains",
)
download_csv(domain_table, f"compare-{baseline}-{challenger}-domains.csv", key="compare_counts_csv")

if group != "domain":
    title = cq.group_label(group)
    st.subheader(f"Per {safe_text(title)}")  # a metadata field's name is data
    st.caption(
        "Mean score of the paired samples and its change against the baseline, per run"
        + ("; a sample with several tags counts in each." if group == "tag" else ".")
    )
    groups = data.query(
        cq.compare_groups,
        tuple(compared),
        baseline,
        metric=metric,
        tolerance=tolerance,
        group=group,
        candidate=candidate,
        baseline_candidate=baseline_candidate,
    )
    ct.show_group_table(ct.group_table(groups, compared), compared, labels, title, every=every)

st.subheader("Per sample")
f1, f2, f3 = st.columns([2, 2, 1])
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
group_value = ""
if group != "domain":
    values = ["", *(v for v in groups["group_value"].unique(maintain_order=True) if v is not None)]
    group_value = f2.selectbox(
        safe_text(cq.group_label(group)),
        values,
        index=url_index("in_group", values),
        format_func=lambda v: v or "All",
        key=f"compare_in_{group}",
    )
different_only = st.checkbox(
    "Different only",
    value=st.query_params.get("diff") == "1",
    key="compare_different",
    help="Only samples whose score moved beyond the tolerance, or whose answer differs, "
    "in any compared run.",
)
page_no = f3.number_input("Page", min_value=1, value=url_int("page"), step=1, key="compare_page")
set_url(
    mode="candidates" if mode != MODES[0] else None,
    run=challenger,
    baseline=None if mode != MODES[0] or baseline == previous else baseline,
    baseline_candidate=baseline_candidate,
    candidate=candidate,
    add=added,
    metric=None if metric == ALL_METRICS[0] else metric,
    group=None if group == "domain" else group,
    columns="all" if every else None,
    status=status,
    domain=domain,
    diff="1" if different_only else None,
    in_group=group_value,
    page=int(page_no),
)
samples = data.query(
    cq.compare_samples,
    challenger,
    baseline,
    metric=metric,
    tolerance=tolerance,
    candidate=candidate,
    baseline_candidate=baseline_candidate,
    shared_only=shared_only,
    added=tuple(added),
    status=status or None,
    domain=domain or None,
    group=group,
    group_value=group_value or None,
    different_only=different_only,
    offset=(int(page_no) - 1) * PAGE_SIZE,
)
total = int(samples["total_rows"][0]) if samples.height else 0
pages = max(1, -(-total // PAGE_SIZE))
st.caption(
    f"{total} samples{' that differ' if different_only else ''}, largest regression first;"
    f" page {page_no} of {pages}"
)
shown = ct.sample_added_columns(samples.drop("total_rows"), added)
# The change and both scores right after the sample, in narrow columns under short labels,
# then each added run's, and the two answer labels as one: at 1024 px the query pushed the
# numbers out of sight (the query is in the CSV and side by side below). An HTML table, not
# a data grid: one page of samples, already in the order that matters (largest regression
# first); the grid cost every visit its code and drawing, 0.08 s of the page's 0.63 s.
grouped = group != "domain"
show_table(
    shown.with_columns(
        pl.when(pl.col("baseline_answer") == pl.col("challenger_answer"))
        .then(pl.col("challenger_answer"))
        .otherwise(pl.concat_str("baseline_answer", pl.lit(" → "), "challenger_answer"))
        .alias("answer")
    ),
    {
        "sample_id": Column("Sample ID", whole=True),
        "delta": Column("Δ", number=signed),
        "status": Column("Status"),
        "baseline_score": Column("Base", help="Baseline score (0-100)", number=".1f"),
        "challenger_score": Column("New", help="Challenger score (0-100)", number=".1f"),
        **ct.added_run_table_columns(added, labels),
        "group_value": Column(cq.group_label(group)),
        "domain": Column("Domain"),
        "answer": Column("Answer", help="Baseline → challenger (one word when both are the same)"),
    },
    order=[
        "sample_id",
        "delta",
        "status",
        "baseline_score",
        "challenger_score",
        *(c for r in added for c in (f"score_{r}", f"delta_{r}")),
        *(["group_value"] if grouped else []),
        # the domain is the filter's, or behind "All columns"
        *(["domain"] if every or grouped else []),
        # with runs added, the answers (of two of the runs only) are behind "All columns"
        *(["answer"] if every or not added else []),
    ],
    name="compare_samples",
)
download_csv(shown, f"compare-{baseline}-{challenger}-samples.csv", key="compare_samples_csv")
sample_picker(shown, key="compare_open", run_id=challenger)

# Side by side and the quick review are built only while their expander is open (opening
# it runs the page again): closed, the page draws two dozen fewer elements, about 0.13 s
# of the browser's work on every visit.
with st.expander(
    "Side by side: one sample's two answers",
    icon=":material/splitscreen:",
    key=SIDE_BY_SIDE_OPEN,
    on_change="rerun",
) as side:
    if side.open and shown.is_empty():
        st.info("No sample on this page to show side by side.")
    elif side.open:
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
