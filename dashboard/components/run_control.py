"""Run control, one home for the sidebar and the Runs page: progress, pause and continue,
cancel, and Resume of a cancelled launch that still lacks samples.

The Runs page lists every live run of the home (dashboard launches and command-line runs
alike, ``dashboard.live_runs``); the sidebar lists the dashboard's recent launches. Both
draw a run's controls here, so a button behaves the same wherever it is pressed. Only a
user the operator lets launch sees the controls (``Access.may_launch``).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from dashboard import data, launcher, live_runs
from dashboard.components.identity import access
from dashboard.components.safe import safe_text
from dashboard.experiment import launch_refusal, project_folder
from engine.models import RunConfig
from engine.run import control

REFRESH_S = 2.0
"""How often the lists of live runs and launches redraw."""

LAUNCHES_SHOWN = 5
"""The sidebar's most recent launches."""


def _progress_bar(progress: tuple[int, int] | None) -> None:
    if progress is None:
        st.caption("Starting: no sample finished yet.")
        return
    done, total = progress
    st.progress(min(1.0, done / total), text=f"{done}/{total} samples")


def pause_buttons(run_id: str, key: str) -> None:
    """Pause a run (samples in flight finish, nothing new starts) or let a paused one go on."""
    paths = data.home_paths()
    if control.pause_requested(paths, run_id):
        st.caption("Paused: what it scored is kept; nothing new starts.")
        if st.button("Continue", key=f"{key}_continue", icon=":material/play_arrow:"):
            control.request_continue(paths, run_id)
    elif st.button(
        "Pause",
        key=f"{key}_pause",
        icon=":material/pause:",
        help="Samples in flight finish and are kept; Continue picks up where it stood.",
    ):
        control.request_pause(paths, run_id)


def _cancel_button(key: str) -> bool:
    return st.button(
        "Cancel run",
        key=f"{key}_cancel",
        icon=":material/stop_circle:",
        help="Stops the run cleanly: what it scored is kept and it can be resumed.",
    )


def resume_button(item: launcher.Launch, run_id: str) -> None:
    """Resume a cancelled launch: the same config, scoring only what the run lacks, if the
    operator's lists still allow it (they may have changed since the launch)."""
    if isinstance(item.spec, RunConfig):
        paths = data.home_paths()
        refusal = launch_refusal(access(), item.spec, project_folder(paths))
        if refusal is not None:
            st.caption(f"Not resumed from here: {safe_text(refusal)}.")
            return
    if st.button(
        "Resume",
        key=f"launch_resume_{item.launch_id}",
        icon=":material/play_arrow:",
        help="Scores what the run has not scored yet, in the same run.",
    ):
        again = launcher.launch(data.home_paths(), item.spec, only=item.only, resume=run_id)
        st.session_state["launch_last"] = again.launch_id
        st.toast(f"Resuming {safe_text(item.spec.name)}")


def _live_run(run: live_runs.LiveRun, may_control: bool) -> None:
    title = f"{safe_text(run.name)} — {run.status} — {safe_text(run.run_id)}"
    with st.container(border=True):
        st.markdown(f"**{title}**")
        where = f"started from the {run.started_from}"
        if run.pid is None:
            where += f", on {safe_text(run.host or 'another host')}"
        st.caption(where)
        _progress_bar(run.progress)
        if not may_control or run.status == "cancelling":
            return
        key = f"runs_live_{run.run_id}"
        c1, c2 = st.columns(2)
        with c1:
            pause_buttons(run.run_id, key)
        with c2:
            if _cancel_button(key):
                with st.spinner("Cancelling…"):
                    said = live_runs.cancel(run)
                st.toast(f"{safe_text(run.name)}: {safe_text(said)}")


@st.fragment(run_every=REFRESH_S)
def live_runs_section(may_control: bool) -> None:
    """The Runs page's live runs: every running or paused run of the home with its
    progress, and (for a user who may launch) pause, continue and cancel."""
    runs = live_runs.live_runs(data.home_paths())
    if not runs:
        st.caption("No run is going on in this home.")
        return
    for run in runs:
        _live_run(run, may_control)


def _launch(item: launcher.Launch, may_cancel: bool) -> None:
    status = item.status()
    run_id = item.run_id()
    # A cancelled launch whose run was resumed to completion since (from here or from a
    # terminal) lacks nothing: its Resume would start a launch with nothing to do.
    stale = (
        status.startswith("cancelled")
        and run_id is not None
        and not live_runs.lacks_samples(data.home_paths(), run_id)
    )
    if stale:
        status = "cancelled, finished since"
    title = f"{safe_text(item.spec.name)} — {status}" + (f" — {run_id}" if run_id else "")
    with st.expander(title, expanded=item.launch_id == st.session_state.get("launch_last")):
        if status == "running":
            _progress_bar(item.progress())
        live = item.live_run_id()
        if may_cancel and status == "running" and live is not None:
            pause_buttons(live, f"launch_{item.launch_id}")
        if may_cancel and status == "running" and _cancel_button(f"launch_{item.launch_id}"):
            with st.spinner("Cancelling…"):
                status = item.cancel()
            st.toast(f"{safe_text(item.spec.name)}: {status}")
        if stale:
            st.caption("Resumed since and finished: nothing left to score.")
        elif status.startswith("cancelled") and run_id and may_cancel:
            resume_button(item, run_id)
        log = launcher.tail(item.log_path, 1500).strip()
        st.code(
            "\n".join(log.splitlines()[-12:]) or "(no output yet)",
            language=None,
            wrap_lines=True,
        )


LIVE_STATUSES = ("running", "cancelling")
"""Launch statuses that can still change on their own."""


def refresh_every(launches: Sequence[launcher.Launch]) -> float | None:
    """``REFRESH_S`` while one of ``launches`` is live, else None: nothing to redraw."""
    return REFRESH_S if any(item.status() in LIVE_STATUSES for item in launches) else None


def launched_runs(may_cancel: bool) -> None:
    """The sidebar's recent dashboard launches with their progress, log tail and controls,
    redrawn every ``REFRESH_S`` while one of them is live. Idle, the sidebar of an open page
    costs the server nothing: a launch from this page redraws the whole page (and so starts
    the redrawing); one from elsewhere shows at the page's next run."""
    launches = launcher.list_launches(data.home_paths(), limit=LAUNCHES_SHOWN)
    if launches:
        (_live_launches if refresh_every(launches) else _launches)(launches, may_cancel)


def _launches(launches: Sequence[launcher.Launch], may_cancel: bool) -> None:
    # A redraw reads each launch's status from its files again; the list itself changes
    # only with a launch, which redraws the whole page.
    st.markdown("**Launched runs**")
    for item in launches:
        _launch(item, may_cancel)


_live_launches = st.fragment(run_every=REFRESH_S)(_launches)
