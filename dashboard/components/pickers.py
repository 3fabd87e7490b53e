"""Run pickers: their labels, the archived filter and the one run picker pages share."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator


def run_label(runs: pl.DataFrame) -> dict[str, str]:
    """``run_id -> "name · 2026-11-08 · run_id"`` for select boxes; a run that did not
    complete says so (``· cancelled``), so a partial run is never mistaken for a whole one."""
    out: dict[str, str] = {}
    status = runs["status"] if "status" in runs.columns else None
    for i, row in enumerate(runs.select("run_id", "name", "started_at").iter_rows()):
        run_id, name, started = row
        when = started.strftime("%Y-%m-%d %H:%M") if started is not None else "?"
        state = status[i] if status is not None else "completed"
        note = "" if state in ("completed", None) else f" · {state}"
        out[str(run_id)] = f"{name} · {when} · {run_id}{note}"
    return out


def default_run_index(runs: pl.DataFrame) -> int:
    """Position of the newest completed run in ``runs`` (newest first); 0 when none
    completed. A cancelled or failed run is shown when asked for, never by default."""
    if "status" not in runs.columns:
        return 0
    for i, state in enumerate(runs["status"]):
        if state == "completed":
            return i
    return 0


SHOW_ARCHIVED = "show_archived"
"""Session key of the sidebar toggle that shows archived runs (hidden by default)."""


def visible_runs(runs: pl.DataFrame, show_archived: bool) -> pl.DataFrame:
    """``runs`` without the archived ones, unless they are asked for."""
    if show_archived or "archived" not in runs.columns:
        return runs
    return runs.filter(~pl.col("archived"))


def runs_or_stop() -> pl.DataFrame:
    """Every run, newest first (archived runs only when the sidebar toggle shows them); on
    an empty warehouse, say how to create data and stop."""
    import streamlit as st

    from dashboard import data
    from dashboard.components.errors import show_no_data
    from warehouse import queries as q

    every = data.query(q.runs)
    if every.is_empty():
        show_no_data()
        st.stop()
    runs = visible_runs(every, bool(st.session_state.get(SHOW_ARCHIVED)))
    if runs.is_empty():
        st.info(
            f"All {every.height} runs are archived. Switch on Show archived runs in the "
            "sidebar to see them."
        )
        st.stop()
    return runs


def pick_run(
    runs: pl.DataFrame, key: str, *, container: DeltaGenerator | None = None, label: str = "Run"
) -> str:
    """The run picker of every page: ``runs`` labelled by name, start and id (``run_label``),
    the URL's ``run`` chosen first, else the newest completed run. ``key`` is the page's
    session key."""
    import streamlit as st

    from dashboard.components.url_state import url_index

    run_ids = [str(r) for r in runs["run_id"]]
    select = container.selectbox if container is not None else st.selectbox
    labels = run_label(runs)
    picked = select(
        label,
        run_ids,
        index=url_index("run", run_ids, default_run_index(runs)),
        format_func=lambda run_id: labels.get(run_id, run_id),
        key=key,
    )
    return str(picked)
