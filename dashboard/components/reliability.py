"""Sections of the Judge agreement page that measure reliability rather than agreement
with one reviewer: a judge asked again (flip rate, spread, Krippendorff's alpha across its
asks), a jury's judges against each other, reviewers against each other, and how a judge's
score lines up with the reviewers' share correct (calibration)."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import streamlit as st

from dashboard import data, reliability_data
from dashboard.agreement_charts import calibration_chart
from dashboard.components import tables
from dashboard.components.downloads import download_csv
from dashboard.components.pickers import run_label
from warehouse import reliability_queries as rq

CALIBRATED_METRICS = (
    "judge_overall",
    "judge_faithfulness",
    "judge_completeness",
    "claim_faithfulness",
    "rag_overall",
)
"""Judge scores the calibration plot can set against reviewers (view review_pairs)."""


def reviewer_agreement(runs: tuple[str, ...], metric_name: Callable[[str], str]) -> None:
    """Reviewer-vs-reviewer alpha on items reviewed twice or more, then the calibration
    plot of a judge score against the reviewers' share correct (reviews of ``runs``)."""
    st.subheader("Reviewers with each other")
    st.caption(
        "Krippendorff's alpha between people on the items two or more of them reviewed: "
        "1 = they always agree, 0 = no better than chance. Responses are compared as ordered "
        "labels (incorrect < partly < correct), claims and verdicts as categories. A judge "
        "cannot be expected to agree with people better than they agree with each other."
    )
    alphas = data.query(reliability_data.reviewer_alpha, runs)
    if alphas.height:
        tables.grid(
            alphas,
            column_config={
                "item": st.column_config.TextColumn("Item"),
                "level": st.column_config.TextColumn("Compared as"),
                "items": st.column_config.NumberColumn("Items reviewed twice+", format="%d"),
                "reviewers": st.column_config.NumberColumn("Reviewers", format="%d"),
                "alpha": st.column_config.NumberColumn("Krippendorff's alpha", format="%.2f"),
            },
            key="agreement_reviewer_alpha",
        )
    else:
        st.caption("No item has been reviewed by two people yet.")

    st.subheader("Calibration")
    metric = st.selectbox(
        "Judge score",
        CALIBRATED_METRICS,
        format_func=metric_name,
        key="agreement_calibration_metric",
    )
    bins = data.query(rq.judge_calibration, metric, runs)
    if bins.is_empty():
        st.caption("No reviewed response has this score.")
        return
    st.caption(
        "Reviewed responses in five bins of the judge's 0-100 score; each point is a bin's "
        "mean judge score against the share of reviews calling the response correct (partly "
        "counts as not correct). A calibrated judge lies on the dashed diagonal; points below "
        "it are scores people find too generous."
    )
    st.altair_chart(calibration_chart(bins), width="stretch")
    download_csv(bins, "judge-calibration.csv", key="agreement_calibration_csv")


def judge_reliability(metric_name: Callable[[str], str]) -> None:
    """Flip rate, spread and Krippendorff's alpha of a judge asked again about the same
    answers, and a jury's agreement, for one run picked here."""
    st.subheader("Judge reliability")
    runs = data.query(rq.judge_reliability_runs)
    if runs.is_empty():
        st.caption(
            "No run asked an LLM judge more than once about an answer. Run with "
            "--judge-repeats N (or --iterations N) and an LLM judge, or give --judge more "
            "than once for a jury; the local judge is deterministic and never flips."
        )
        return
    names = run_label(runs)
    run_id = st.selectbox(
        "Run", list(names), format_func=lambda r: names[r], key="agreement_reliability_run"
    )
    st.caption(
        "Each ask is a fresh judge call on the same answer. Flip rate: share of answers whose "
        "pass/fail changed across asks (flag judge_flaky). Spread: the asks' standard "
        "deviation on 0-100. Alpha: Krippendorff's alpha (interval) across the asks; 1 = the "
        "judge always gives the same score, 0 = its scores are noise."
    )
    flips = data.query(rq.judge_reliability, run_id)
    alphas = data.query(reliability_data.judge_alpha, run_id)
    shown = flips.join(alphas.drop("answers"), on=["judge", "metric"], how="left")
    shown = shown.with_columns(pl.col("metric").map_elements(metric_name, pl.String))
    if shown.height:
        tables.grid(
            shown.select(
                "judge", "metric", "answers", "asks", "flip_rate", "mean_spread_100", "alpha"
            ),
            column_config={
                "judge": st.column_config.TextColumn("Judge"),
                "metric": st.column_config.TextColumn("Metric", width="large"),
                "answers": st.column_config.NumberColumn("Answers asked again", format="%d"),
                "asks": st.column_config.NumberColumn("Asks", format="%d"),
                "flip_rate": st.column_config.NumberColumn("Flip rate", format="percent"),
                "mean_spread_100": st.column_config.NumberColumn("Spread (0-100)", format="%.1f"),
                "alpha": st.column_config.NumberColumn("Krippendorff's alpha", format="%.2f"),
            },
            key="agreement_reliability",
        )
        download_csv(shown, "judge-reliability.csv", key="agreement_reliability_csv")
    else:
        st.caption("This run asked each judge once per answer (a jury): no repeats to compare.")
    jury = data.query(rq.jury_agreement, run_id)
    if jury.height:
        st.subheader("Jury")
        st.caption(
            "Each judge against each other judge on the same answers: the share of pairs "
            "whose pass/fail agree, and the mean distance of their scores (0-100). The run's "
            "value is the judges' mean (scores) and majority (pass/fail; a tie fails)."
        )
        tables.grid(
            jury.with_columns(pl.col("metric").map_elements(metric_name, pl.String)),
            column_config={
                "judge": st.column_config.TextColumn("Judge"),
                "metric": st.column_config.TextColumn("Metric", width="large"),
                "answers": st.column_config.NumberColumn("Answers", format="%d"),
                "agreement": st.column_config.NumberColumn("Agreement", format="percent"),
                "mean_gap_100": st.column_config.NumberColumn("Mean gap (0-100)", format="%.1f"),
            },
            key="agreement_jury",
        )
