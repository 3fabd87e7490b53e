"""The Experiments page's form: test set, candidates, graders (each tried on one sample),
models (each connection tested), then the estimate and launch the sidebar uses too.

The config is built and checked by ``dashboard.experiment`` (the sidebar's quick form
calls the same functions), and launched by ``estimate_then_launch``: the same rights, the
same allow-lists and the same launcher.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl
import streamlit as st

from dashboard import data, experiment, experiment_runs, launcher
from dashboard.access import Access
from dashboard.components import tables
from dashboard.components.launch_form import estimate_then_launch
from dashboard.components.safe import safe_text
from engine.errors import InputError
from engine.judges.connection import DEFAULT_BUDGET_S, check_connection
from engine.models import RunConfig, option_bounds
from engine.settings import Paths
from engine.testsets import load_test_set

_KEY = "exp_"
"""Session-state prefix of this page."""


def _upload_test_set(paths: Paths) -> None:
    """An uploaded test set is saved with the launcher's checks and becomes the choice."""
    upload = st.file_uploader(
        "Or upload a test set (JSONL, JSON or CSV)",
        type=["jsonl", "json", "csv"],
        key=f"{_KEY}upload",
    )
    if upload is None or st.session_state.get(f"{_KEY}uploaded_id") == upload.file_id:
        return
    try:
        saved = launcher.save_upload(paths, upload.name, upload.getvalue())
    except ValueError as exc:
        st.error(safe_text(exc))
        return
    st.session_state[f"{_KEY}uploaded_id"] = upload.file_id
    st.session_state[f"{_KEY}test_set"] = saved.name


def _test_set(paths: Paths) -> tuple[Path, list[str]] | None:
    """The chosen test set and its sample ids (None when there is none to choose)."""
    st.subheader("1 · Test set")
    _upload_test_set(paths)
    names = [p.name for p in launcher.list_test_sets(paths)]
    if not names:
        st.info("No test sets in this home yet: upload one above.")
        return None
    if st.session_state.get(f"{_KEY}test_set") not in names:
        st.session_state.pop(f"{_KEY}test_set", None)
    name = str(st.selectbox("Test set", names, key=f"{_KEY}test_set"))
    path = paths.test_sets / name
    try:
        cases = load_test_set(path).cases
    except InputError as exc:
        st.error(f"{safe_text(name)}: {safe_text(str(exc).splitlines()[0])}")
        return None
    st.caption(f"{len(cases)} cases.")
    return path, [c.id for c in cases]


def _items_table(items: list[experiment.ProjectItem], chosen: list[str], kind: str) -> None:
    """The chosen items with what their files say they are for."""
    picked = [i for i in items if i.id in chosen]
    if not picked:
        return
    frame = pl.DataFrame(
        {
            "name": [i.id if i.name == i.id else f"{i.name} ({i.id})" for i in picked],
            kind: [i.kind for i in picked],
            "description": [i.description or "—" for i in picked],
        }
    )
    tables.grid(
        frame,
        column_config={
            "name": st.column_config.TextColumn("Name (id)", width="medium"),
            kind: st.column_config.TextColumn(kind.capitalize(), width="medium"),
            "description": st.column_config.TextColumn("Description", width="large"),
        },
    )


def _pick(label: str, items: list[experiment.ProjectItem], key: str, help_text: str) -> list[str]:
    names = {i.id: i.name for i in items}
    chosen = st.multiselect(
        label,
        [i.id for i in items],
        key=f"{_KEY}{key}",
        format_func=lambda i: i if names.get(i, i) == i else f"{names[i]} ({i})",
        help=help_text,
    )
    return [str(c) for c in chosen]


def _candidates(project: Path) -> list[str]:
    st.subheader("2 · Candidates")
    try:
        items = experiment.project_candidates(project)
    except InputError as exc:
        st.error(safe_text(str(exc).splitlines()[0]))
        return []
    if not items:
        st.caption(
            f"No prompt files in {safe_text(project / 'candidates')}: the run answers with "
            "the target as it is."
        )
        return []
    chosen = _pick(
        "Candidates", items, "candidates", "Prompt files of the project; each answers every case."
    )
    _items_table(items, chosen, "model")
    return chosen


def _upload_grader(project: Path) -> None:
    upload = st.file_uploader(
        "Add a grader file (YAML; Python graders are added to the project by hand)",
        type=["yaml", "yml"],
        key=f"{_KEY}grader_upload",
    )
    if upload is None or st.session_state.get(f"{_KEY}grader_uploaded") == upload.file_id:
        return
    st.session_state[f"{_KEY}grader_uploaded"] = upload.file_id
    try:
        saved = experiment.save_grader_upload(project, upload.name, upload.getvalue())
    except InputError as exc:
        st.error(safe_text(exc))
        return
    st.success(f"Added grader {safe_text(saved.stem)}.")


def _graders(project: Path, may_launch: bool) -> list[str]:
    st.subheader("3 · Graders")
    if may_launch:
        _upload_grader(project)
    try:
        items = experiment.project_graders(project)
    except InputError as exc:
        st.error(safe_text(str(exc).splitlines()[0]))
        return []
    chosen = _pick(
        "Graders",
        items,
        "graders",
        "Grader files of the project, then the built-in scores; none: the run's own scores.",
    )
    _items_table(items, chosen, "type")
    return chosen


def _connection(spec: str, key: str) -> None:
    """A Test connection button for ``spec`` and what the last check of it found."""
    if st.button(
        "Test connection",
        key=f"{_KEY}ping_{key}",
        icon=":material/network_check:",
        help=f"One short call to the model with the configured key (at most "
        f"{DEFAULT_BUDGET_S:.0f} s); nothing is written.",
    ):
        with st.spinner(f"Calling {spec}…"):
            st.session_state[f"{_KEY}ping_{key}_result"] = check_connection(spec)
    found = st.session_state.get(f"{_KEY}ping_{key}_result")
    if found is None or found.spec != spec:
        return
    if found.ok:
        st.success(f"{safe_text(spec)} answered: {safe_text(found.line)}")
    else:
        st.error(f"{safe_text(spec)}: {safe_text(found.line)}")


@dataclass(frozen=True)
class _Models:
    """The models and pace the form chose (``experiment_config``'s arguments)."""

    target: str
    embedder: str
    judge: str
    jury: tuple[str, ...]
    judge_temperature: float
    iterations: int
    concurrency: int


def _models(rules: Access, may_launch: bool) -> _Models:
    st.subheader("4 · Models")
    c1, c2 = st.columns(2)
    with c1:
        target = str(st.selectbox("Target model", rules.targets, key=f"{_KEY}target"))
        if may_launch:  # a check spends a call on the server's key
            _connection(target, "target")
        embedder = str(st.selectbox("Embedder", rules.embedders, key=f"{_KEY}embedder"))
    with c2:
        judge = str(st.selectbox("Judge", rules.judges, key=f"{_KEY}judge"))
        if may_launch:
            _connection(judge, "judge")
        others = [j for j in rules.judges if j != judge]
        jury = st.multiselect(
            "More judges (a jury)",
            others,
            key=f"{_KEY}jury",
            help="Each judge scores every answer: mean of scores, majority of pass/fail.",
        )
    low, high = option_bounds("judge_temperature")
    c3, c4, c5 = st.columns(3)
    temperature = c3.number_input(
        "Judge temperature",
        min_value=float(low or 0.0),
        max_value=float(high or 2.0),
        value=0.0,
        step=0.1,
        key=f"{_KEY}temperature",
        help="Sampling temperature of LLM judges (the local judge has none).",
    )
    iterations = _whole(c4, "Iterations", "iterations")
    concurrency = _whole(c5, "Concurrency", "concurrency")
    return _Models(
        target=target,
        embedder=embedder,
        judge=judge,
        jury=tuple(str(j) for j in jury),
        judge_temperature=float(temperature),
        iterations=iterations,
        concurrency=concurrency,
    )


def _whole(column: object, label: str, field: str) -> int:
    low, high = option_bounds(field)
    value = column.number_input(  # type: ignore[attr-defined]
        label,
        min_value=None if low is None else int(low),
        max_value=None if high is None else int(high),
        value=int(RunConfig.model_fields[field].default),
        key=f"{_KEY}{field}",
        help=RunConfig.model_fields[field].description,
    )
    return int(value)


def _try_graders(config: RunConfig, graders: list[str], sample_ids: list[str]) -> None:
    """Test: one chosen sample, one grader, its score and reasoning (nothing written)."""
    with st.expander("Try a grader on one sample", icon=":material/science:", expanded=True):
        sample = st.selectbox("Sample", sample_ids, key=f"{_KEY}try_sample")
        st.caption(
            "The first candidate (or the target) answers the sample and the grader scores "
            f"it, in at most {experiment_runs.TRY_BUDGET_S:.0f} s; nothing is written to "
            "the warehouse."
        )
        for grader in graders:
            name, button, result = st.columns([2, 2, 5], vertical_alignment="center")
            name.markdown(f"**{safe_text(grader)}**")
            if button.button("Test", key=f"{_KEY}try_{grader}", icon=":material/play_circle:"):
                with result, st.spinner(f"Trying {grader} on {sample}…"):
                    found = experiment_runs.try_grader(config, grader, str(sample))
                st.session_state[f"{_KEY}tried_{grader}"] = (str(sample), found)
            tried = st.session_state.get(f"{_KEY}tried_{grader}")
            if tried is None:
                result.caption("Not tried yet.")
                continue
            on, found = tried
            if not found.ok:
                result.error(f"{safe_text(on)}: {safe_text(found.reason)}")
                continue
            score = "no score" if found.score is None else f"score {found.score:.2f}"
            verdict = "" if found.passed is None else (" · pass" if found.passed else " · fail")
            result.markdown(f"{safe_text(on)}: **{score}{verdict}** — {safe_text(found.reason)}")
            if found.output:
                result.caption(f"Output graded: {safe_text(found.output[:400])}")


def experiment_form(rules: Access, user: str) -> None:
    """The whole form; launching only for a user the operator lets launch."""
    paths = data.home_paths()
    project = experiment.project_folder(paths)
    may_launch = rules.may_launch(user)
    # the folder's name only: the server's paths stay off the pages
    st.caption(f"Candidates and graders from the project '{safe_text(project.name)}'.")
    chosen = _test_set(paths)
    candidates = _candidates(project)
    graders = _graders(project, may_launch)
    try_box = st.container()  # under the graders, filled once the config is known
    models = _models(rules, may_launch)
    if chosen is None:
        return
    test_set, sample_ids = chosen
    st.subheader("5 · Estimate and launch")
    if st.session_state.get(f"{_KEY}name_for") != test_set.name:
        st.session_state[f"{_KEY}name_for"] = test_set.name
        st.session_state[f"{_KEY}name"] = f"{test_set.stem} experiment"
    name = st.text_input("Experiment name", key=f"{_KEY}name")
    try:
        config = experiment.experiment_config(
            test_set=test_set,
            name=name,
            candidates=candidates,
            graders=graders,
            project=project,
            **asdict(models),
        )
    except InputError as exc:
        st.caption(safe_text(exc))
        return
    if graders and may_launch:
        with try_box:
            # A try calls the same target and judges as the run: the same lists apply.
            refusal = experiment.launch_refusal(rules, config, project)
            if refusal is None:
                _try_graders(config, graders, sample_ids)
            else:
                st.caption(f"No try from here: {safe_text(refusal)}.")
    if not may_launch:
        st.info("The operator has not granted you launching runs on this dashboard.")
        return
    estimate_then_launch(config, rules, key=f"{_KEY}run")
