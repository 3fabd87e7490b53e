"""The sidebar's "Launch run" form, the live progress of launched runs, and re-runs."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from dashboard import data, launcher
from dashboard.components.safe import safe_text
from dashboard.launcher import RunSpec
from warehouse import queries as q
from warehouse.db import WarehouseError

JUDGES = ("local", "openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest", "ollama:llama3.1")
EMBEDDERS = ("local", "openai:text-embedding-3-small")
TARGETS = ("recorded", "openai:gpt-4o-mini")


def _spec_from_form() -> RunSpec | None:
    paths = data.home_paths()
    upload = st.file_uploader(
        "Upload a test set", type=["jsonl", "json", "csv"], key="launch_upload"
    )
    if upload is not None:
        try:
            saved = launcher.save_upload(paths, upload.name, upload.getvalue())
        except ValueError as exc:
            st.error(safe_text(exc))
        else:
            st.session_state["launch_uploaded"] = saved.name
    sets = launcher.list_test_sets(paths)
    if not sets:
        st.caption(f"No test sets in {safe_text(paths.test_sets)}; upload one.")
        return None
    names = [p.name for p in sets]
    uploaded = st.session_state.get("launch_uploaded")
    test_set = st.selectbox(
        "Test set",
        names,
        index=names.index(uploaded) if uploaded in names else 0,
        key="launch_test_set",
    )
    name = st.text_input("Run name", value=Path(test_set).stem, key="launch_name")
    judge = st.selectbox("Judge", JUDGES, key="launch_judge", accept_new_options=True)
    embedder = st.selectbox("Embedder", EMBEDDERS, key="launch_embedder", accept_new_options=True)
    target = st.selectbox("Target", TARGETS, key="launch_target", accept_new_options=True)
    c1, c2 = st.columns(2)
    iterations = c1.number_input("Iterations", 1, 1000, 1, key="launch_iterations")
    concurrency = c2.number_input("Concurrency", 1, 256, 5, key="launch_concurrency")
    if not name.strip():
        st.caption("Give the run a name.")
        return None
    return RunSpec(
        test_set=str(paths.test_sets / test_set),
        name=name.strip(),
        judge=str(judge),
        embedder=str(embedder),
        target=str(target),
        iterations=int(iterations),
        concurrency=int(concurrency),
    )


def _estimate_then_launch(spec: RunSpec, *, key: str, extra: dict[str, str] | None = None) -> None:
    """Estimate first; the Launch button appears once the estimate of this spec is shown."""
    paths = data.home_paths()
    estimates: dict[RunSpec, tuple[bool, str]] = st.session_state.setdefault("launch_estimates", {})
    if st.button("Estimate", key=f"{key}_estimate", icon=":material/calculate:"):
        with st.spinner("Estimating…"):
            estimates[spec] = launcher.estimate(paths, spec)
    if spec not in estimates:
        st.caption("Estimate the calls, cost and time before launching.")
        return
    ok, text = estimates[spec]
    if not ok:
        st.error("The estimate failed")
        st.code(text or "(no output)", language=None, wrap_lines=True)
        return
    # wrapped: the sidebar is narrow, and a cut-off estimate hides the time and cost
    st.code(text, language=None, wrap_lines=True)
    if st.button("Launch", key=f"{key}_launch", type="primary", icon=":material/play_arrow:"):
        started = launcher.launch(paths, spec, extra=extra)
        st.session_state["launch_last"] = started.launch_id
        st.toast(f"Launched {safe_text(spec.name)}")


def _rerun_section() -> None:
    try:
        runs = data.query(q.runs)
    except WarehouseError:
        return
    if runs.is_empty():
        return
    run_ids = list(runs["run_id"])
    run_id = st.selectbox("Run", run_ids, key="launch_rerun_run")
    info = data.query(q.run_info, run_id)
    if info is None:
        return
    try:
        config = json.loads(str(info.get("config") or "{}"))
    except ValueError:
        config = {}
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
    spec = RunSpec(
        test_set=str(info["test_set"]),
        name=f"{info['name']} (re-run {label})",
        judge=str(config.get("judge") or info.get("judge") or "local"),
        embedder=str(config.get("embedder") or info.get("embedder") or "local"),
        target=str(config.get("target") or "recorded"),
        iterations=int(config.get("iterations") or 1),
        concurrency=int(config.get("concurrency") or 5),
        only=tuple(ids),
    )
    _estimate_then_launch(spec, key="launch_rerun", extra={"rerun_of": run_id})


@st.fragment(run_every=2.0)
def _progress() -> None:
    launches = launcher.list_launches(data.home_paths(), limit=5)
    if not launches:
        return
    st.markdown("**Launched runs**")
    for item in launches:
        status = item.status()
        run_id = item.run_id()
        title = f"{safe_text(item.spec.name)} — {status}" + (f" — {run_id}" if run_id else "")
        with st.expander(title, expanded=item.launch_id == st.session_state.get("launch_last")):
            progress = item.progress()
            if progress is not None and status == "running":
                done, total = progress
                st.progress(min(1.0, done / total), text=f"{done}/{total} samples")
            if status == "running" and st.button(
                "Cancel run",
                key=f"launch_cancel_{item.launch_id}",
                icon=":material/stop_circle:",
                help="Stops the run cleanly: what it scored is kept and it can be resumed.",
            ):
                with st.spinner("Cancelling…"):
                    status = item.cancel()
                st.toast(f"{safe_text(item.spec.name)}: {status}")
            if status.startswith("cancelled") and run_id:
                st.caption(f"Resume with: evalhouse run --resume {safe_text(run_id)}")
            log = launcher.tail(item.log_path, 1500).strip()
            st.code(
                "\n".join(log.splitlines()[-12:]) or "(no output yet)",
                language=None,
                wrap_lines=True,
            )
            st.caption(f"log: {safe_text(item.log_path)}")


def launch_sidebar() -> None:
    """The sidebar of every page: launch form, re-runs and live progress."""
    with st.expander("Launch run", icon=":material/rocket_launch:"):
        spec = _spec_from_form()
        if spec is not None:
            _estimate_then_launch(spec, key="launch_new")
    with st.expander("Re-run samples", icon=":material/replay:"):
        _rerun_section()
    _progress()
