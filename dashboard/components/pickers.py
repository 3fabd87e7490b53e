"""Labels for run pickers."""

from __future__ import annotations

import polars as pl


def run_label(runs: pl.DataFrame) -> dict[str, str]:
    """``run_id -> "name · 2026-11-08 · run_id"`` for select boxes."""
    out: dict[str, str] = {}
    for row in runs.select("run_id", "name", "started_at").iter_rows():
        run_id, name, started = row
        when = started.strftime("%Y-%m-%d %H:%M") if started is not None else "?"
        out[str(run_id)] = f"{name} · {when} · {run_id}"
    return out


def runs_or_stop() -> pl.DataFrame:
    """Every run, newest first; on an empty warehouse, say how to create data and stop."""
    import streamlit as st

    from dashboard import data
    from dashboard.components.errors import show_no_data
    from warehouse import queries as q

    runs = data.query(q.runs)
    if runs.is_empty():
        show_no_data()
        st.stop()
    return runs
