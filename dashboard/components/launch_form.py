"""The sidebar's "Launch run" form and re-runs; the launched runs' progress and controls are
``run_control``'s."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import data, experiment, launcher
from dashboard.access import Access
from dashboard.components.run_control import launched_runs
from dashboard.components.safe import safe_text
from engine.errors import InputError
from engine.models import RunConfig, option_bounds
from engine.settings import Paths
from warehouse import queries as q
from warehouse.db import WarehouseError


def _number(label: str, field: str, column: Any) -> int:
    """A whole-number input whose bounds and default are the ``RunConfig`` field's."""
    low, high = option_bounds(field)
    default = RunConfig.model_fields[field].default
    value = column.number_input(
        label,
        min_value=None if low is None else int(low),
        max_value=None if high is None else int(high),
        value=int(default),
        key=f"launch_{field}",
        help=RunConfig.model_fields[field].description,
    )
    return int(value)


def _upload(paths: Paths) -> None:
    """Save an uploaded file and make it the test set that runs: the Test set box shows it
    at once (a box already drawn keeps its own choice unless it is told)."""
    upload = st.file_uploader(
        "Upload a test set", type=["jsonl", "json", "csv"], key="launch_upload"
    )
    if upload is None or st.session_state.get("launch_uploaded_id") == upload.file_id:
        return  # the uploader hands the same file on every rerun: select it once only
    try:
        saved = launcher.save_upload(paths, upload.name, upload.getvalue())
    except ValueError as exc:
        st.error(safe_text(exc))
        return
    st.session_state["launch_uploaded_id"] = upload.file_id
    st.session_state["launch_test_set"] = saved.name


def _name_follows(test_set: str) -> None:
    """Give the Run name box the test set's name whenever the test set changes (an upload
    or another choice), before the box is drawn: a box keeps what the browser last sent, so
    a run of a new file was once saved under the previous run's name and in its series.
    A name typed for the same test set stays."""
    if st.session_state.get("launch_name_for") != test_set:
        st.session_state["launch_name_for"] = test_set
        st.session_state["launch_name"] = Path(test_set).stem


def _spec_from_form(rules: Access) -> RunConfig | None:
    paths = data.home_paths()
    _upload(paths)
    sets = launcher.list_test_sets(paths)
    if not sets:
        st.caption("No test sets in this home; upload one.")
        return None
    names = [p.name for p in sets]
    if st.session_state.get("launch_test_set") not in names:
        st.session_state.pop("launch_test_set", None)
    test_set = st.selectbox("Test set", names, key="launch_test_set")
    _name_follows(str(test_set))
    # The series follows the name (its date or week suffix dropped), so it is the file's.
    name = st.text_input("Run name", key="launch_name")
    # Lists the operator allows, never free text: a visitor must not pick the URL the
    # server sends every test query to, or a paid judge on the server's key.
    judge = st.selectbox("Judge", rules.judges, key="launch_judge")
    embedder = st.selectbox("Embedder", rules.embedders, key="launch_embedder")
    target = st.selectbox("Target", rules.targets, key="launch_target")
    c1, c2 = st.columns(2)
    iterations = _number("Iterations", "iterations", c1)
    concurrency = _number("Concurrency", "concurrency", c2)
    try:
        return experiment.experiment_config(
            test_set=paths.test_sets / test_set,
            name=name,
            judge=str(judge),
            embedder=str(embedder),
            target=str(target),
            iterations=iterations,
            concurrency=concurrency,
        )
    except InputError as exc:
        st.caption(f"{safe_text(exc)[:1].upper()}{safe_text(exc)[1:]}.")
        return None


def estimate_then_launch(
    spec: RunConfig,
    rules: Access,
    *,
    key: str,
    only: tuple[str, ...] = (),
    extra: dict[str, str] | None = None,
) -> None:
    """Estimate first; the Launch button appears once the estimate of this spec is shown.
    A spec the operator does not allow is refused before either."""
    paths = data.home_paths()
    refusal = experiment.launch_refusal(rules, spec, experiment.project_folder(paths))
    if refusal is not None:
        st.caption(f"Not launched from here: {safe_text(refusal)}.")
        return
    estimates: dict[str, tuple[bool, str]] = st.session_state.setdefault("launch_estimates", {})
    shown = f"{spec.model_dump_json()} only={','.join(only)}"  # what was estimated
    if st.button("Estimate", key=f"{key}_estimate", icon=":material/calculate:"):
        with st.spinner("Estimating…"):
            estimates[shown] = launcher.estimate(paths, spec, only=only)
    if shown not in estimates:
        st.caption("Estimate the calls, cost and time before launching.")
        return
    ok, text = estimates[shown]
    if not ok:
        st.error("The estimate failed")
        st.code(text or "(no output)", language=None, wrap_lines=True)
        return
    # One line in the narrow sidebar; the breakdown a click away.
    summary = next((ln for ln in text.splitlines() if ln.startswith("estimate:")), "")
    st.markdown(f"**{safe_text(summary.removeprefix('estimate:').strip() or 'Estimated')}**")
    with st.expander("Details"):
        st.code(text, language=None, wrap_lines=True)
    if st.button("Launch", key=f"{key}_launch", type="primary", icon=":material/play_arrow:"):
        started = launcher.launch(paths, spec, only=only, extra=extra)
        st.session_state["launch_last"] = started.launch_id
        st.toast(f"Launched {safe_text(spec.name)}")


def _rerun_section(rules: Access) -> None:
    try:
        runs = data.query(q.run_list)
    except WarehouseError:
        return
    if runs.is_empty():
        return
    run_ids = list(runs["run_id"])
    run_id = st.selectbox("Run", run_ids, key="launch_rerun_run")
    info = data.query(q.run_info, run_id)
    if info is None:
        return
    mode = st.radio(
        "Re-run", ["failed samples", "one domain"], horizontal=True, key="launch_rerun_mode"
    )
    domain = None
    if mode == "one domain":
        domains = data.query(q.run_filters, run_id)["domain"]
        domain = st.selectbox("Domain", domains, key="launch_domain")
    failed_only = mode == "failed samples"
    ids = data.query(q.rerun_sample_ids, run_id, failed_only=failed_only, domain=domain)
    if not ids:
        st.caption("No failed samples in this run." if domain is None else "No samples.")
        return
    more = " …" if len(ids) > 8 else ""
    st.caption(f"{len(ids)} samples: {safe_text(', '.join(ids[:8]))}{more}")
    label = "failed samples" if domain is None else domain
    name = f"{info['name']} (re-run {label})"
    spec = _stored_config(info).model_copy(
        update={"name": name, "test_set": str(info["test_set"]), "project_digest": None}
    )
    estimate_then_launch(
        spec, rules, key="launch_rerun", only=tuple(ids), extra={"rerun_of": run_id}
    )


def _stored_config(info: Mapping[str, Any]) -> RunConfig:
    """The run's own config (a re-run computes what the run did), or, for a config this
    version cannot read, one with the run's test set, judge and embedder."""
    try:
        return RunConfig.model_validate_json(str(info.get("config") or "{}"))
    except ValueError:
        return RunConfig(
            test_set=str(info["test_set"]),
            name=str(info["name"]),
            judge=str(info.get("judge") or "local"),
            embedder=str(info.get("embedder") or "local"),
        )


LAUNCH_OPEN = "sidebar_launch_open"
"""Whether the sidebar's "Launch run" expander is open (its session state key)."""

RERUN_OPEN = "sidebar_rerun_open"
"""Whether the sidebar's "Re-run samples" expander is open."""


def launch_sidebar(rules: Access, user: str) -> None:
    """The sidebar of every page: launch form, re-runs and live progress (the forms only
    for a user the operator lets launch)."""
    allowed = rules.may_launch(user)
    if allowed:
        # Each form is built only while its expander is open (opening it reruns the page):
        # closed, its widgets cost every page's first visit their code (a file uploader,
        # radio buttons: 0.11 s of the Overview's 1.40 s) and every run their drawing.
        with st.expander(
            "Launch run", icon=":material/rocket_launch:", key=LAUNCH_OPEN, on_change="rerun"
        ) as launch:
            if launch.open:
                spec = _spec_from_form(rules)
                if spec is not None:
                    estimate_then_launch(spec, rules, key="launch_new")
        with st.expander(
            "Re-run samples", icon=":material/replay:", key=RERUN_OPEN, on_change="rerun"
        ) as rerun:
            if rerun.open:
                _rerun_section(rules)
    launched_runs(allowed)
