"""A judge change on the Overview: a note naming the old and new judge, and the observed
change of each judge metric split into the judge's drift (measured on the series' frozen
anchors) and the system's change (observed - drift, with the drift's interval)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import data
from dashboard.components.html_table import Column, show_table
from dashboard.components.safe import safe_text
from engine.drift import split_delta
from warehouse.drift_queries import drift_run_series, judge_drift_split
from warehouse.queries import metric_label


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:+.1f}, {high:+.1f}]"


def split_table(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``judge_drift_split`` as the Overview shows them (0-100 points)."""
    rows = []
    for r in frame.iter_rows(named=True):
        observed = r["observed_delta"]
        system = low = high = None
        if observed is not None:
            system, low, high = split_delta(observed, r["mean_shift"], r["ci_low"], r["ci_high"])
        rows.append(
            {
                "Metric": metric_label(r["metric"]),
                "Observed Δ": observed,
                "Judge drift": r["mean_shift"],
                "Drift 95%": _interval(r["ci_low"], r["ci_high"]),
                "System change": system,
                "System 95%": _interval(low, high),
                "Anchors": r["n"],
            }
        )
    return pl.DataFrame(rows)


def show_judge_change(run_id: str, baseline: str | None) -> None:
    """When the run's judge differs from the baseline's, split the observed change when a
    drift check against that baseline was recorded (the page's first line already named
    both judges: ``JudgeChange.note``)."""
    if baseline is None:
        return
    judges = data.query(drift_run_series, run_id)
    base = data.query(drift_run_series, baseline)
    if judges is None or base is None or judges["judge"] == base["judge"]:
        return
    # The first line names the judges readably; the exact versions are here, for whoever
    # has to tell two local-judge releases apart.
    st.caption(
        f"Judge versions: {safe_text(base['judge'])} (baseline) → {safe_text(judges['judge'])}"
    )
    split = data.query(judge_drift_split, run_id, baseline)
    if split.is_empty():
        st.caption(
            "No drift check against this baseline yet: run `evalhouse drift --series "
            f"'{safe_text(judges['series'])}'` to measure the judge on the series' anchors."
        )
        return
    signed = "+.1f"
    show_table(
        split_table(split),
        {
            "System change": Column(
                "System Δ", help="Observed Δ minus the judge's drift", number=signed
            ),
            "Observed Δ": Column("Observed", help="Observed Δ", number=signed),
            "Judge drift": Column("Drift", help="Judge drift", number=signed),
            "Anchors": Column("n", help="Anchors: answers both judges scored"),
        },
        # The system change first: it is the answer; the observed change and the drift
        # are how it was reached.
        order=(
            "Metric",
            "System change",
            "System 95%",
            "Observed Δ",
            "Judge drift",
            "Drift 95%",
            "Anchors",
        ),
        name="judge_drift",
    )
    st.caption(
        "0-100 points. Judge drift: both judges scored the same stored answers (the "
        "series' anchors); system change = observed Δ − drift, its interval the drift's."
    )
