"""Watching an experiment: progress, pause, continue and cancel, and the live results grid
(a row per sample, a column per candidate × grader) filled from what the run has written
to the lake so far; once done, links to the Leaderboard and Compare for the run.

Run control calls ``engine.run.control`` and the ``dashboard.launcher`` launch itself,
as the sidebar does: one way to pause or cancel a run, whichever page asks.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

from dashboard import data, experiment_runs, formats, launcher
from dashboard.components import tables
from dashboard.components.safe import safe_text
from engine.models import RunConfig
from engine.run import control

_KEY = "exp_"
REFRESH_S = 2.0
"""How often the grid and progress are read again while the page is open."""


def _controls(item: launcher.Launch, run_id: str | None) -> None:
    """Pause or continue, and cancel, for a running launch."""
    paths = data.home_paths()
    left, right = st.columns(2)
    if run_id is not None:
        if control.pause_requested(paths, run_id):
            st.caption("Paused: samples in flight finish and are kept; nothing new starts.")
            if left.button("Continue", key=f"{_KEY}continue", icon=":material/play_arrow:"):
                control.request_continue(paths, run_id)
                st.rerun()
        elif left.button(
            "Pause",
            key=f"{_KEY}pause",
            icon=":material/pause:",
            help="Samples in flight finish and are kept; Continue picks up where it stood.",
        ):
            control.request_pause(paths, run_id)
            st.rerun()
    if right.button(
        "Cancel",
        key=f"{_KEY}cancel",
        icon=":material/stop_circle:",
        help="Stops the run cleanly: what it scored is kept and it can be resumed.",
    ):
        with st.spinner("Cancelling…"):
            status = item.cancel()
        st.toast(f"{safe_text(item.spec.name)}: {status}")


def _grid(run_id: str | None, spec: object, running: bool) -> None:
    if run_id is None:
        st.caption("Waiting for the run to start…")
        return
    config = spec if isinstance(spec, RunConfig) else None
    order = experiment_runs.planned_cells(config) if config is not None else []
    grid = experiment_runs.live_grid(data.home_paths(), run_id, order)
    if grid.is_empty():
        st.caption("No sample scored yet: rows appear as the run writes them.")
        return
    cells = [c for c in grid.columns if c not in experiment_runs.GRID_KEY]
    candidates = list(config.candidates or ()) if config is not None else []
    labels, legend = experiment_runs.short_labels(candidates, cells)
    scored = experiment_runs.samples_scored(grid)
    when = " so far" if running else ""
    st.caption(
        f"{scored} of {grid.height} rows scored{when} · scores 0–1, a column per "
        f"candidate × grader{f' ({legend})' if legend else ''}; empty: not scored yet, or "
        "the grader failed."
    )
    if grid["iteration"].n_unique() == 1:
        grid = grid.drop("iteration")  # one iteration: the column says nothing
    tables.grid(
        grid,
        column_config={
            "sample_id": st.column_config.TextColumn("Sample", width="small"),
            "iteration": st.column_config.NumberColumn("Iter.", width=40),
            **{
                c: st.column_config.NumberColumn(
                    labels[c],
                    help=c,
                    format=formats.score_printf(0, 1),
                    width=_cell_width(len(cells)),
                )
                for c in cells
            },
        },
        key=f"{_KEY}grid",
    )


def _cell_width(cells: int) -> Literal["small", "medium"]:
    return "small" if cells > 4 else "medium"


def _links(run_id: str) -> None:
    st.success(f"Run {safe_text(run_id)} is done.")
    left, right = st.columns(2)
    left.page_link(
        "app_pages/leaderboard.py",
        label="Open on the Leaderboard",
        icon=":material/leaderboard:",
        query_params={"run": run_id},
    )
    right.page_link(
        "app_pages/compare.py",
        label="Compare its candidates",
        icon=":material/compare_arrows:",
        query_params={"run": run_id, "mode": "candidates"},
    )


@st.fragment(run_every=REFRESH_S)
def watch(may_control: bool) -> None:
    """The experiment launched last (or one picked): its state, controls and grid."""
    launches = launcher.list_launches(data.home_paths(), limit=10)
    if not launches:
        st.caption("No experiment launched yet.")
        return
    ids = [item.launch_id for item in launches]
    last = st.session_state.get("launch_last")
    if last in ids and st.session_state.get(f"{_KEY}followed") != last:
        # A new launch is what the person wants to watch, whatever the box showed before.
        st.session_state[f"{_KEY}followed"] = last
        st.session_state[f"{_KEY}watched"] = last
    elif st.session_state.get(f"{_KEY}watched") not in ids:
        st.session_state[f"{_KEY}watched"] = ids[0]
    names = {item.launch_id: item.spec.name for item in launches}
    picked = st.selectbox(
        "Experiment",
        ids,
        format_func=lambda i: f"{names[i]} · {i}",
        key=f"{_KEY}watched",
    )
    item = launches[ids.index(str(picked))]
    status = item.status()
    run_id = item.live_run_id()
    st.markdown(f"**{safe_text(item.spec.name)}** — {safe_text(status)}")
    progress = item.progress()
    if progress is not None:
        done, total = progress
        if run_id is not None and isinstance(item.spec, RunConfig) and item.spec.graders:
            grid = experiment_runs.live_grid(data.home_paths(), run_id)
            graded = experiment_runs.answers_graded(grid, len(item.spec.graders))
            done = max(done, min(graded, total))
        st.progress(min(1.0, done / total), text=f"{done}/{total} answers graded")
    if may_control and status == "running":
        _controls(item, run_id)
    if status == "completed" and item.run_id():
        _links(str(item.run_id()))
    elif status.startswith(("failed", "stopped")):
        log = launcher.tail(item.log_path, 1500).strip().splitlines()
        st.error(safe_text(log[-1] if log else status))
    _grid(run_id, item.spec, status in ("running", "cancelling"))
