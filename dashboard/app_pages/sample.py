"""Sample: one response with its highlights, ground truth, claims, verdicts and scores.

Opened by query parameters (``?run=...&sample=...&iteration=...&candidate=...``) so other
pages link here; without them, a finder lists the run's samples a page at a time.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import charts, data, formats, testset_passages
from dashboard.components import tables
from dashboard.components.answer import show_answer_note
from dashboard.components.badges import tier_badge
from dashboard.components.downloads import download_csv
from dashboard.components.highlighter import legend_html, render_pages, render_response
from dashboard.components.links import sample_url
from dashboard.components.pickers import pick_run, runs_or_stop
from dashboard.components.quick_review import quick_review
from dashboard.components.review_form import review_section, rubric_label
from dashboard.components.safe import safe_text
from dashboard.components.trajectory import show_trajectory
from dashboard.components.url_state import (
    changed,
    range_param,
    set_url,
    url_index,
    url_int,
    url_range,
)
from engine.models import ANALYZER_METRICS
from engine.scoring.judging import CONFIDENCE_BAR, LOW_CONFIDENCE
from warehouse import queries as q
from warehouse.queries import PAGE_SIZE, SampleRef

st.title("Sample")

runs = runs_or_stop()

params = st.query_params
run_ids = list(runs["run_id"])
wanted_run = params.get("run")
if wanted_run is not None and wanted_run not in run_ids:
    st.warning(
        f"Run {safe_text(repr(wanted_run))} is archived or not in the warehouse (switch on Show "
        "archived runs in the sidebar to open archived runs); showing the latest run."
    )
run_id = pick_run(runs, "sample_run")
if changed("sample_run", run_id):
    set_url(
        sample=None, iteration=None, candidate=None, domain=None, page=None, q=None,
        outcome=None, flag=None, metric=None,
    )  # fmt: skip
set_url(run=run_id)
sample_id = params.get("sample")

with st.expander("Find a sample", expanded=sample_id is None):
    domains = data.query(q.run_filters, run_id)["domain"]
    c1, c2, c3 = st.columns([2, 2, 1])
    domain_options = ["", *domains]
    domain = c1.selectbox(
        "Domain",
        domain_options,
        index=url_index("domain", domain_options),
        format_func=lambda d: d or "All domains",
        key="sample_domain",
    )
    search = c2.text_input(
        "Text in the id, query, response or an expected claim",
        value=params.get("q", ""),
        key="sample_search",
    )
    page_no = c3.number_input("Page", min_value=1, value=url_int("page"), step=1, key="sample_page")
    f1, f2, f3, f4 = st.columns([1, 1, 1, 2])
    outcomes = ["", "passed", "failed", "error"]
    outcome = f1.selectbox(
        "Outcome",
        outcomes,
        index=url_index("outcome", outcomes),
        format_func=lambda o: o or "Any outcome",
        key="sample_outcome",
    )
    flag_rows = data.query(q.run_flags, run_id)
    flag_counts = dict(zip(flag_rows["flag"], flag_rows["rows"], strict=True))
    flags = ["", *flag_counts]
    flag = f2.selectbox(
        "Flag",
        flags,
        index=url_index("flag", flags),
        # the count is the rows carrying the flag: what the filtered list then holds
        format_func=lambda f: f"{f} ({flag_counts[f]})" if f else "Any flag",
        key="sample_flag",
    )
    metrics = ["", *q.SAMPLE_FILTER_METRICS]
    metric = f3.selectbox(
        "Metric range",
        metrics,
        index=url_index("metric", metrics),
        format_func=lambda m: m.capitalize() if m else "Any score",
        key="sample_metric",
    )
    # The range only once a metric is chosen: a disabled slider cost every visit its code
    # and drawing.
    low, high = (
        f4.slider(
            "Between",
            0.0,
            100.0,
            url_range("range", 0.0, 100.0),
            step=5.0,
            format="%.0f",
            key="sample_range",
        )
        if metric
        else (0.0, 100.0)
    )
    set_url(
        domain=domain,
        q=search,
        page=int(page_no),
        outcome=outcome,
        flag=flag,
        metric=metric,
        range=range_param((low, high), 0.0, 100.0) if metric else None,
    )
    listing = data.query(
        q.run_samples,
        run_id,
        domain=domain or None,
        search=search or None,
        outcome=outcome or None,
        flag=flag or None,
        metric=metric or None,
        low=low,
        high=high,
        offset=(int(page_no) - 1) * PAGE_SIZE,
    )
    queue = st.toggle(
        "Review queue",
        key="sample_review_queue",
        help="Samples nobody has reviewed: where the analyzer and the judge disagree first, "
        "then the least sure claim verdicts.",
    )
    if queue:
        listing = data.query(q.review_next, run_id)
        st.caption(
            f"{listing.height} unreviewed samples to look at first (machines disagree, then "
            "least sure verdicts)."
        )
        tables.show(listing)
    else:
        total = int(listing["total_rows"][0]) if listing.height else 0
        pages = f"page {page_no} of {max(1, -(-total // PAGE_SIZE))}"
        if flag == LOW_CONFIDENCE:
            st.caption(
                f"{total} result rows flagged low_confidence (a claim verdict less than "
                f"{CONFIDENCE_BAR:.0%} sure), least sure first; {pages}"
            )
            tables.show(tables.scores_first(listing.drop("total_rows")), **tables.finder_columns())
        else:
            st.caption(f"{total} result rows; {pages}")
            tables.show(
                tables.scores_first(listing.drop("total_rows", "lowest_confidence")),
                **tables.finder_columns(),
            )
    if listing.height:
        keys = [
            f"{s}|{i}|{c}"
            for s, i, c in listing.select("sample_id", "iteration", "candidate").iter_rows()
        ]
        pick = st.selectbox(
            "Sample to open",
            keys,
            format_func=lambda k: " · ".join(p for p in k.split("|") if p),
            key="sample_pick",
        )
        s_id, it, cand = pick.split("|")
        if st.button("Open sample", key="sample_open"):
            st.query_params.update({"run": run_id, "sample": s_id, "iteration": it})
            if cand:
                st.query_params["candidate"] = cand
            st.rerun()
        quick_review(SampleRef(run_id, s_id, int(it), cand), key="finder_review")

if sample_id is None:
    st.info("Choose a sample above, or follow a link from the Compare or Claims pages.")
    st.stop()

versions = data.query(q.sample_versions, run_id, sample_id)
if versions.is_empty():
    st.warning(f"Sample {safe_text(repr(sample_id))} has no results in run {safe_text(run_id)}.")
    st.stop()
iterations = sorted(set(versions["iteration"]))
wanted_iteration = int(params.get("iteration", iterations[0]))
candidates = sorted(set(versions["candidate"]))
c1, c2 = st.columns(2)
iteration = c1.selectbox(
    "Iteration",
    iterations,
    index=iterations.index(wanted_iteration) if wanted_iteration in iterations else 0,
    key=f"sample_iteration_{run_id}_{sample_id}",
)
candidate = ""
if len(candidates) > 1:
    wanted = params.get("candidate", candidates[0])
    candidate = c2.selectbox(
        "Candidate",
        candidates,
        index=candidates.index(wanted) if wanted in candidates else 0,
        key=f"sample_candidate_{run_id}_{sample_id}",
    )
else:
    candidate = candidates[0]
set_url(sample=sample_id, iteration=iteration, candidate=candidate)

ref = SampleRef(run_id, sample_id, int(iteration), candidate)
detail = data.query(data.sample_detail, ref)
if detail["result"].is_empty():
    st.warning(
        f"No result for {safe_text(repr(sample_id))} in iteration {iteration} "
        f"of {safe_text(run_id)}."
    )
    st.stop()
result = detail["result"].row(0, named=True)

st.subheader(" · ".join(safe_text(v) for v in (sample_id, result["domain"], result["ai_provider"])))
with st.popover("Link to this sample", icon=":material/link:"):
    # A code box: its copy button puts the link on the clipboard in one click.
    link = sample_url(st.context.url or "", run_id, sample_id, int(iteration), candidate)
    st.code(link, language=None, wrap_lines=True)
st.caption("Query")
st.text(result["query"])
if result["error"]:
    st.error("This sample failed to score")
    st.code(result["error"], language=None, wrap_lines=True)
show_answer_note(result)
if result["flags"]:
    st.caption("Flags: " + safe_text(", ".join(result["flags"])))

cols = st.columns(4)
tiers = data.query(q.run_tiers, run_id)
for col, metric in zip(cols, ANALYZER_METRICS, strict=False):
    value = result[metric]
    tier = tier_badge(value, tiers)
    # null means not applicable (no claims, nothing to attribute): say so, not "0" or "—"
    col.metric(
        f"{metric.title()} · {tier}" if tier else metric.title(),
        formats.score(value),
    )
coverage = result["coverage_percent"]
# Short labels: a card cuts its label at 1024 px, four to a row.
cols[3].metric(
    "Coverage",
    formats.percent(coverage),
    help="Ground-truth coverage: the share of the response (non-space characters) that "
    "matches a ground-truth passage.",
)
st.caption("The judge")
judge = st.columns(4)


# An empty or declining answer has no faithfulness (null in the warehouse): say why.
NO_ANSWER_FLAGS = {"empty_response", "abstained"}
no_answer = bool(NO_ANSWER_FLAGS & set(result["flags"] or ()))
absent = "no answer" if no_answer else formats.NA


def _num(value: float | None, low: float, high: float) -> str:
    return absent if value is None else formats.score(value, low, high)


judge[0].metric("Faithfulness (1-5)", _num(result["judge_faithfulness"], 1, 5))
judge[1].metric("Completeness (1-5)", _num(result["judge_completeness"], 1, 5))
judge[2].metric("Rubric pass", rubric_label(result) or absent)
judge[3].metric(
    "Claims (0-1)",
    _num(result["claim_faithfulness"], 0, 1),
    help="Claim faithfulness: the share of the response's claims the judge found supported.",
)

left, right = st.columns([3, 2])
with left:
    st.markdown("**Response**")
    marked = render_response(
        result["response"] or "",
        detail["highlights"].to_dicts(),
        detail["verdicts"].to_dicts(),
        detail["attributions"].to_dicts(),
    )
    st.html(legend_html() + marked.html)
    counts = marked.counts
    st.caption(
        f"{counts['matched']} matched spans · {counts['unsupported']} unsupported · "
        f"{counts['contradicted']} contradicted · {counts['attribution']} attribution mentions"
    )
with right:
    st.markdown("**Ground truth**")
    matched = detail["highlights"].filter(pl.col("chunk_id").is_not_null())
    best = {
        str(c): s
        for c, s in matched.group_by("chunk_id").agg(pl.col("similarity").max()).iter_rows()
    }
    case = data.query(q.sample_case, run_id, sample_id)
    passages: list[dict[str, str]] | None
    if case is not None:
        reference = str((case.get("expected_answer") or {}).get("text") or "")
        if reference.strip():
            st.markdown("Reference answer")
            st.text(reference)  # plain text: the reference is data, never markup
        passages = [
            {k: str(p.get(k) or "") for k in ("chunk_id", "page_url", "text")}
            for p in case.get("ground_truth") or []
        ]
    else:  # a run of an earlier version kept no cases: the test-set file, if still there
        info = data.query(q.run_info, run_id)
        passages = testset_passages.ground_truth(str(info["test_set"]) if info else None, sample_id)
    if passages is None:
        st.caption("The run's test set is not available; showing the matched passages.")
        rows = [
            {"chunk_id": c, "page_url": u, "text": t, "similarity": best.get(str(c))}
            for c, u, t in matched.select("chunk_id", "page_url", "matched_text")
            .unique(subset="chunk_id", maintain_order=True)
            .iter_rows()
        ]
    else:
        rows = [{**p, "similarity": best.get(p["chunk_id"])} for p in passages]
    st.html(render_pages(rows, marked.chunk_colors))

show_trajectory(case, result["response"])  # an agent's steps beside its expected calls

st.subheader("Expected claims")
claims = detail["claims"]
found = claims.filter(pl.col("found"))
# A contradicted claim is stated wrongly, not left out: its own count and colour.
is_contradicted = pl.col("status").fill_null("") == "contradicted"
contradicted = claims.filter(~pl.col("found") & is_contradicted)
missing = claims.filter(~pl.col("found") & ~is_contradicted)
# One above the other, full width: side by side, each table scrolled its columns away.
st.markdown(f"**Missing ({missing.height})**")
missing_shown = missing.select("claim_id", "claim_text", "importance", "similarity")
tables.show(missing_shown)
st.markdown(f"**:red[Contradicted ({contradicted.height})]**")
contradicted_shown = contradicted.select(
    "claim_id", "claim_text", "importance", "similarity", "evidence"
)
tables.show(contradicted_shown)
st.markdown(f"**Found ({found.height})**")
found_shown = found.select("claim_id", "claim_text", "importance", "similarity", "evidence")
tables.show(found_shown)
download_csv(claims, f"claims-{run_id}-{sample_id}.csv", key="sample_claims_csv")

st.subheader("Judge")
if result["judge_reasoning"]:
    st.caption("Reasoning")
    st.text(result["judge_reasoning"])
verdicts = detail["verdicts"]
verdicts_shown = verdicts.select(
    "claim_index", "claim_text", "verdict", "evidence", "rule", "similarity"
)
tables.show(verdicts_shown)
download_csv(verdicts, f"verdicts-{run_id}-{sample_id}.csv", key="sample_verdicts_csv")
if detail["graders"].height:
    st.markdown("**Graders**")
    # grader scores are 0-1 (a bare "score" column would read as 0-100)
    tables.show(detail["graders"], formats={"score": formats.score_printf(0, 1)})
    download_csv(detail["graders"], f"graders-{run_id}-{sample_id}.csv", key="sample_graders_csv")

ranks = data.query(q.sample_retrieval, ref)
if ranks.height:
    st.subheader("Retrieval")
    st.caption(
        "At which rank each ground-truth passage was retrieved (1 = top; empty: not "
        "retrieved), and how it was recognised (id, URL, equal text or embedding)."
    )
    st.altair_chart(charts.retrieval_rank_chart(ranks))
    tables.show(ranks, key="sample_retrieval")
    download_csv(ranks, f"retrieval-{run_id}-{sample_id}.csv", key="sample_retrieval_csv")

review_section(ref, result, claims, verdicts)
