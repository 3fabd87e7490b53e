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

    every = data.query(q.run_list)
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


def series_choices(runs: pl.DataFrame, series: pl.DataFrame) -> list[str]:
    """The series of ``runs`` (newest first, with ``status``), the default first: the series
    of the newest completed run that has a baseline, so one ad-hoc run (a series of its own,
    never a baseline) does not take over the first screen; else the newest completed run's;
    then the others, most recently run first. ``series`` has run_id, series and
    baseline_run_id (``series_runs_all``)."""
    joined = runs.select("run_id", "status").join(
        series.select("run_id", "series", "baseline_run_id"), on="run_id", how="inner"
    )
    if joined.is_empty():
        return []
    completed = joined.filter(pl.col("status") == "completed")
    with_baseline = completed.filter(pl.col("baseline_run_id").is_not_null())
    first = next((f["series"][0] for f in (with_baseline, completed, joined) if f.height), None)
    ordered = [str(s) for s in joined["series"].unique(maintain_order=True)]
    return [str(first), *(s for s in ordered if s != first)]


def pick_series(
    runs: pl.DataFrame, series: pl.DataFrame, key: str, *, container: DeltaGenerator | None = None
) -> str:
    """The series picker (``series_choices``): the URL's ``series`` first, else the series of
    the URL's ``run`` (a link to a run opens its series), else the default."""
    import streamlit as st

    from dashboard.components.url_state import url_index

    options = series_choices(runs, series)
    default = 0
    wanted_run = st.query_params.get("run")
    if wanted_run is not None:
        of_run = series.filter(pl.col("run_id") == wanted_run)["series"]
        if of_run.len() and str(of_run[0]) in options:
            default = options.index(str(of_run[0]))
    select = container.selectbox if container is not None else st.selectbox
    picked = select(
        "Series",
        options,
        index=url_index("series", options, default),
        key=key,
        help="Runs of one series (run --series, else the run name without its date or "
        "week). The first is the series of the latest completed run that has a baseline.",
    )
    return str(picked)
