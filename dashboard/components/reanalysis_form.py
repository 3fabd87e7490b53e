"""The Runs page's re-analysis action: a run's stored answers scored again against a new
ground-truth file (uploaded, or one of the home's test sets), estimated first and launched
detached like every run (``evalhouse run --config`` with the re-analysis config), for a user
the operator lets launch."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import data, launcher
from dashboard.access import Access
from dashboard.components.launch_form import estimate_then_launch
from dashboard.components.safe import safe_text
from engine.errors import InputError
from engine.models import RunConfig
from engine.reanalysis import plan_reanalysis
from warehouse.drift_queries import drift_run_series

REANALYSE_OPEN = "runs_reanalyse_open"
"""Whether the Runs page's "Re-analyse against new ground truth" expander is open."""


def _truth_file(run_id: str) -> Path | None:
    """The chosen ground-truth file: an upload (saved under the home's test sets) or one of
    the test sets already there."""
    paths = data.home_paths()
    upload = st.file_uploader(
        "Upload new ground truth", type=["jsonl", "json", "csv"], key=f"runs_truth_{run_id}"
    )
    if upload is not None:
        try:
            return launcher.save_upload(paths, upload.name, upload.getvalue())
        except ValueError as exc:
            st.error(safe_text(exc))
            return None
    sets = launcher.list_test_sets(paths)
    if not sets:
        st.caption("No test set in the home's test-sets folder: upload the new ground truth.")
        return None
    chosen = st.selectbox(
        "…or pick a test set",
        sets,
        index=None,
        format_func=lambda p: p.name,
        key=f"runs_truth_pick_{run_id}",
    )
    return chosen


def _plan(run_id: str, truth: Path) -> RunConfig | None:
    """The re-analysis config (its recorded test set written once per run and truth)."""
    plans: dict[str, RunConfig | str] = st.session_state.setdefault("runs_reanalysis", {})
    key = f"{run_id}|{truth}|{truth.stat().st_mtime_ns}"
    if key not in plans:
        judges = data.query(drift_run_series, run_id)
        series = None if judges is None else judges["series"]
        try:
            plan = plan_reanalysis(data.home_paths(), run_id, truth, name=None, series=series)
        except InputError as exc:
            plans[key] = str(exc)
        else:
            plans[key] = plan.config
            if plan.missing:
                st.caption(f"{len(plan.missing)} of the run's cases are not in the new truth.")
    found = plans[key]
    if isinstance(found, str):
        st.error(safe_text(found))
        return None
    return found


def reanalysis_section(rules: Access, user: str, run_id: str) -> None:
    """Re-analyse ``run_id`` against new ground truth: same answers, no target call. Built
    only while its expander is open (opening runs the page again): closed, the file
    uploader and the estimate cost no visit its drawing."""
    with st.expander(
        "Re-analyse against new ground truth",
        icon=":material/published_with_changes:",
        key=REANALYSE_OPEN,
        on_change="rerun",
    ) as section:
        if section.open:
            st.caption(
                "Score this run's stored answers again against a new ground-truth file (a "
                "test set whose ids are the run's case ids): a new run of the same series, "
                "no target call; Compare then shows it as same answers, new truth."
            )
            _section(rules, user, run_id)


def _section(rules: Access, user: str, run_id: str) -> None:
    if not rules.may_launch(user):
        st.caption("Launching runs is not granted to you on this dashboard.")
        return
    truth = _truth_file(run_id)
    if truth is None:
        return
    config = _plan(run_id, truth)
    if config is not None:
        st.caption(f"New run: {safe_text(config.name)} (series {safe_text(config.series)}).")
        estimate_then_launch(config, rules, key=f"runs_reanalyse_{run_id}")
