"""Judge agreement: how far evalhouse's judges agree with the people who reviewed samples.

Per judge and metric: Cohen's kappa, accuracy and a confusion matrix for labels, Pearson and
Spearman for scores (all computed in SQL over view ``review_pairs``); reviewers against each
other (Krippendorff's alpha) and a judge score's calibration against them; the review queue:
the reviewed samples where judge and reviewers disagree most, each linked to its Sample page;
then the judges' own reliability when asked again (flip rate, alpha) and a jury's agreement.
Everything is over the reviewed runs picked at the top (all of them by default).
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import data
from dashboard.components import reliability, tables
from dashboard.components.downloads import download_csv
from dashboard.components.links import with_sample_urls
from dashboard.components.pickers import run_label
from dashboard.components.safe import safe_text
from dashboard.components.url_state import set_url, url_list
from warehouse import queries as q

METRIC_NAMES = {
    "claim_status": "Claim status (found / missing / contradicted)",
    "claim_verdict": "Claim verdict (supported or not)",
    "rubric_pass": "Rubric pass (reviewer: correct = pass)",
    "judge_overall": "Judge overall",
}


# The labels of each label metric (view review_pairs), in the matrix's order. (A comment,
# not a docstring: Streamlit's magic would print a bare string on the page.)
CATEGORIES = {
    "claim_status": ("found", "missing", "contradicted"),
    "claim_verdict": ("supported", "not supported"),
    "rubric_pass": ("pass", "fail"),
}


def _metric_name(metric: str) -> str:
    return METRIC_NAMES.get(metric) or q.metric_label(metric)


st.title("Judge agreement")
st.caption(
    "Reviews are made on the Sample page (Human review) and count here within seconds (each "
    "save is ingested in the background). Each reviewer's latest review of each item is one "
    "pair with what evalhouse said. Kappa: 1 = perfect agreement, 0 = no better than "
    "chance. Scores compare the judge's 0-100 form with the reviewer's response label "
    "(correct 100, partly 50, incorrect 0)."
)

reviewed = data.query(q.reviewed_runs)
if reviewed.is_empty():
    st.info(
        "No reviews yet. Open a sample (Sample page), mark the response, its claims or the "
        "judge's verdicts under Human review and save."
    )
    reliability.judge_reliability(_metric_name)
    st.stop()
# A judge's agreement can differ from one run to another (a new prompt, a new test set):
# the figures below are over the runs chosen here, every reviewed run when none is.
run_names = run_label(reviewed)
options = list(run_names)
chosen = st.multiselect(
    "Runs",
    options,
    default=url_list("run", options),
    format_func=lambda run_id: run_names[run_id],
    key="agreement_runs",
    placeholder=f"All reviewed runs ({len(options)})",
)
set_url(run=chosen)
runs_filter = tuple(chosen)

agreement = data.query(q.judge_agreement, runs_filter)

shown = agreement.with_columns(pl.col("metric").map_elements(_metric_name, pl.String))
labels = shown.filter(pl.col("kind") == "label").select(
    "judge", "metric", "n", "reviewers", "accuracy", "kappa"
)
scores = shown.filter(pl.col("kind") == "score").select(
    "judge", "metric", "n", "reviewers", "pearson", "spearman", "mean_abs_gap"
)
config = {
    "judge": st.column_config.TextColumn("Judge"),
    "metric": st.column_config.TextColumn("Metric", width="large"),
    "n": st.column_config.NumberColumn("Reviewed items", format="%d"),
    "reviewers": st.column_config.NumberColumn("Reviewers", format="%d"),
    "accuracy": st.column_config.NumberColumn("Accuracy", format="%.2f"),
    "kappa": st.column_config.NumberColumn("Cohen's kappa", format="%.2f"),
    "pearson": st.column_config.NumberColumn("Pearson r", format="%.2f"),
    "spearman": st.column_config.NumberColumn("Spearman rho", format="%.2f"),
    "mean_abs_gap": st.column_config.NumberColumn("Mean gap (0-100)", format="%.1f"),
}
for title, frame, key, nothing in (
    ("Labels", labels, "agreement_labels", "No reviewed claims, verdicts or rubric verdicts yet."),
    ("Scores", scores, "agreement_scores", "No reviewed responses with scores yet."),
):
    st.subheader(title)
    if frame.height:
        tables.grid(frame, column_config=config, key=key)
    else:
        st.caption(nothing)
download_csv(agreement, "judge-agreement.csv", key="agreement_csv")

confusion = data.query(q.agreement_confusion, runs_filter)
if confusion.height:
    st.subheader("Confusion matrix")
    pairs = confusion.select("judge", "metric").unique(maintain_order=True)
    keys = [f"{j}|{m}" for j, m in pairs.iter_rows()]
    pick = st.selectbox(
        "Judge and metric",
        keys,
        format_func=lambda k: f"{k.split('|')[0]} · {_metric_name(k.split('|')[1])}",
        key="agreement_confusion_pick",
    )
    judge, metric = pick.split("|", 1)
    one = confusion.filter((pl.col("judge") == judge) & (pl.col("metric") == metric))
    counts = {(j, h): n for j, h, n in one.select("judge_label", "human_label", "n").iter_rows()}
    seen = sorted({label for pair in counts for label in pair})
    # Every label of the metric on both axes, the ones nobody used included (as zeros).
    cats = list(CATEGORIES.get(metric, ())) + [
        c for c in seen if c not in CATEGORIES.get(metric, ())
    ]
    matrix = pl.DataFrame(
        {"judge_label": cats, **{h: [counts.get((j, h), 0) for j in cats] for h in cats}}
    )
    st.caption("Rows: what the judge said; columns: what reviewers said (item counts).")
    tables.grid(
        matrix,
        column_config={
            "judge_label": st.column_config.TextColumn("Judge said"),
            **{
                c: st.column_config.NumberColumn(f"Reviewer: {c}", format="%d")
                for c in matrix.columns
                if c != "judge_label"
            },
        },
        key="agreement_matrix",
    )
    download_csv(confusion, "judge-agreement-confusion.csv", key="agreement_confusion_csv")

reliability.reviewer_agreement(runs_filter, _metric_name)

st.subheader("Review queue")
st.caption(
    "Reviewed samples where judge and reviewers disagree most first: label disagreements, "
    "then the mean gap between judge scores and reviewers (0-100)."
)
queue = data.query(q.review_queue, run_ids=runs_filter)
here = st.context.url or ""
shown_queue = with_sample_urls(queue, here).select(
    "open", "run_id", "sample_id", "domain", "disagreements", "labels", "score_gap", "reviewers",
    "comments",
)  # fmt: skip
tables.grid(
    shown_queue,
    column_config=tables.column_config(
        shown_queue,
        open=st.column_config.LinkColumn("Sample", display_text="open", width="small"),
        run_id=st.column_config.TextColumn("Run"),
        sample_id=st.column_config.TextColumn("Sample ID"),
        disagreements=st.column_config.NumberColumn("Disagreements", format="%d"),
        labels=st.column_config.NumberColumn("Labelled items", format="%d"),
        score_gap=st.column_config.NumberColumn("Score gap", format="%.1f"),
        reviewers=st.column_config.NumberColumn("Reviewers", format="%d"),
        comments=st.column_config.TextColumn("Comments", width="medium"),
    ),
    key="agreement_queue",
)
more = f" (the first {q.REVIEW_QUEUE_LIMIT})" if queue.height >= q.REVIEW_QUEUE_LIMIT else ""
st.caption(f"{queue.height} reviewed samples{more}.")
download_csv(queue, "review-queue.csv", key="agreement_queue_csv")
top = queue.row(0, named=True) if queue.height else None
if top is not None and top["disagreements"]:
    st.caption(
        f"Most disputed: {safe_text(top['sample_id'])} in run {safe_text(top['run_id'])} "
        f"({top['disagreements']} of {top['labels']} labelled items disagree)."
    )
elif top is not None:
    st.caption("No reviewer disagrees with evalhouse on any labelled item.")

st.subheader("Reviewer comments")
comments = data.query(q.review_comments, runs_filter)
if comments.is_empty():
    st.caption("No review with a comment yet (the comment box is under Human review).")
else:
    st.caption(
        "What reviewers wrote, newest first: one line per saved review, with how many of "
        "the items it marked disagree with evalhouse."
    )
    shown_comments = with_sample_urls(comments, here).select(
        "open", "reviewed_at", "reviewer", "comment", "sample_id", "domain", "disagreements",
        "run_id",
    )  # fmt: skip
    tables.grid(
        shown_comments,
        column_config=tables.column_config(
            shown_comments,
            open=st.column_config.LinkColumn("Sample", display_text="open", width="small"),
            reviewed_at=st.column_config.DatetimeColumn("When", format="YYYY-MM-DD HH:mm"),
            reviewer=st.column_config.TextColumn("Reviewer"),
            comment=st.column_config.TextColumn("Comment", width="medium"),
            sample_id=st.column_config.TextColumn("Sample ID"),
            disagreements=st.column_config.NumberColumn("Disagreements", format="%d"),
            run_id=st.column_config.TextColumn("Run"),
        ),
        key="agreement_comments",
    )
    more = (
        f" (the newest {q.REVIEW_COMMENTS_LIMIT})"
        if comments.height >= q.REVIEW_COMMENTS_LIMIT
        else ""
    )
    st.caption(f"{comments.height} commented reviews{more}.")
    download_csv(comments, "review-comments.csv", key="agreement_comments_csv")

reliability.judge_reliability(_metric_name)
