"""The Experiments page: project files with their descriptions, the estimate, a launch
against the loopback LLM whose rows appear in the live grid, cancel; a grader tried on one
sample; Test connection (good key, bad key masked, unreachable); and the launch checks the
page and the sidebar share."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import experiment, experiment_runs, launcher
from dashboard.access import default_access
from engine.errors import InputError
from engine.judges.connection import check_connection
from engine.run import control
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory
from tests.dashboard.fixture_home import build_empty_home
from tests.loopback_llm import LoopbackLLM, Reply

KEY = "sk-test-experiments-0123456789"
CANDIDATE = """---
name: {name}
description: {description}
user_template: "{{{{input}}}}"
---
{prompt}
"""
GRADERS = {
    "exact.yaml": "type: exact-match\ndescription: The answer equals the reference.\n",
    "says-ok.yaml": (
        "type: contains\nname: Says OK\ndescription: Mentions OK somewhere.\n"
        "options: {values: [ok], case: insensitive}\n"
    ),
    "short.yaml": (
        "type: python\ndescription: At most 80 characters.\nfunction: graders/short.py:score\n"
    ),
}
SHORT_PY = (
    "def score(response):\n"
    "    size = len(response or '')\n"
    "    return (1.0 if size <= 80 else 0.0, f'{size} characters')\n"
)
"""A grader people write: the project's own Python function (at most 80 characters)."""


def write_project(root: Path) -> Path:
    """Two candidates of one family and three grader files, one of them Python."""
    family = root / "candidates" / "helper"
    family.mkdir(parents=True)
    (family / "base.md").write_text(
        CANDIDATE.format(name="Terse", description="Answers in one line.", prompt="Be terse."),
        encoding="utf-8",
    )
    (family / "polite.md").write_text(
        CANDIDATE.format(name="Polite", description="Thanks the user first.", prompt="Be kind."),
        encoding="utf-8",
    )
    (root / "graders").mkdir()
    for name, text in GRADERS.items():
        (root / "graders" / name).write_text(text, encoding="utf-8")
    (root / "graders" / "short.py").write_text(SHORT_PY, encoding="utf-8")
    return root


def write_cases(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            case = {
                "id": f"q{i:02d}",
                "query": f"Question {i}?",
                "response": "OK",
                "expected_answer": {"text": "OK"},
            }
            handle.write(json.dumps(case) + "\n")
    return path


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    """A home with a warehouse, a 6-case test set and a project (``$EVALHOUSE_PROJECT``)."""
    paths = build_empty_home(tmp_path / "home")
    paths.test_sets.mkdir(parents=True, exist_ok=True)
    write_cases(paths.test_sets / "six.jsonl", 6)
    monkeypatch.setenv("EVALHOUSE_PROJECT", str(write_project(tmp_path / "project")))
    return paths


def _page(app: AppFactory, paths: Paths) -> AppTest:
    return app(paths, page="experiments")


def test_the_page_offers_the_project_s_files_with_their_descriptions(
    app: AppFactory, lab: Paths
) -> None:
    at = _page(app, lab)
    candidates = at.multiselect(key="exp_candidates")
    assert candidates.options == ["Terse (helper)", "Polite (helper-polite)"]
    graders = at.multiselect(key="exp_graders")
    assert {"exact", "Says OK (says-ok)", "short", "accuracy"} <= set(graders.options)
    candidates.set_value(["helper", "helper-polite"]).run()
    at.multiselect(key="exp_graders").set_value(["exact", "says-ok"]).run()
    described = {
        str(v)
        for frame in at.dataframe
        if "description" in frame.value.columns
        for v in frame.value["description"]
    }
    assert {"Answers in one line.", "Thanks the user first.", "Mentions OK somewhere."} <= described


def test_estimate_then_launch_fills_the_grid_and_cancel_stops_it(
    app: AppFactory, lab: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackLLM(delay=0.4, responder=lambda provider, body: "OK") as llm:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        write_cases(lab.test_sets / "six.jsonl", 40)  # long enough to cancel midway
        at = _page(app, lab)
        at.selectbox(key="exp_target").set_value("openai:gpt-4o-mini").run()
        at.multiselect(key="exp_candidates").set_value(["helper", "helper-polite"]).run()
        at.multiselect(key="exp_graders").set_value(["exact", "says-ok", "short"]).run()
        at.number_input(key="exp_concurrency").set_value(2).run()
        at.button(key="exp_run_estimate").click().run()
        summary = " ".join(m.value for m in at.markdown)
        assert "calls" in summary and "$" in summary, summary
        at.button(key="exp_run_launch").click().run()
        assert not at.exception
        (started,) = launcher.list_launches(lab)
        assert started.spec.candidates == ("helper", "helper-polite")
        assert started.spec.graders == ("exact", "says-ok", "short")
        grid = experiment_runs.live_grid(lab, "none")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            run_id = started.live_run_id()
            if run_id is not None:
                grid = experiment_runs.live_grid(lab, run_id)
                if experiment_runs.samples_scored(grid) >= 2:
                    break
            time.sleep(0.3)
        assert started.status() == "running", launcher.tail(started.log_path)
        columns = set(grid.columns) - set(experiment_runs.GRID_KEY)
        assert columns == {
            f"{c} × {g}" for c in ("helper", "helper-polite") for g in ("exact", "says-ok", "short")
        }
        at.run()
        shown = [f for f in at.dataframe if "sample_id" in f.value.columns]
        assert shown and len(shown[-1].value) >= 2
        at.button(key="exp_pause").click().run()
        assert control.pause_requested(lab, str(run_id))
        at.button(key="exp_continue").click().run()
        assert not control.pause_requested(lab, str(run_id))
        at.button(key="exp_cancel").click().run()
        assert started.status() == "cancelled (resumable)"
        scored = experiment_runs.samples_scored(experiment_runs.live_grid(lab, str(run_id)))
        assert 2 <= scored < 80


def test_test_runs_a_local_grader_on_one_sample_and_writes_nothing(
    app: AppFactory, lab: Paths
) -> None:
    at = _page(app, lab)
    at.multiselect(key="exp_graders").set_value(["exact", "short"]).run()
    at.selectbox(key="exp_try_sample").set_value("q03").run()
    at.button(key="exp_try_exact").click().run()
    text = " ".join(m.value for m in at.markdown)
    assert "score 1.00 · pass" in text, text
    assert not any(lab.lake.glob("grader_scores/*")), "a try writes nothing to the home"
    assert launcher.list_launches(lab) == []


def test_connection_good_key_bad_key_and_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackLLM() as llm:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        llm.script("OK")
        good = check_connection("openai:gpt-4o-mini")
        assert (good.ok, good.line) == (True, "OK")
        assert llm.requests[-1].headers["authorization"] == f"Bearer {KEY}"
        assert llm.requests[-1].body is not None and llm.requests[-1].body["max_tokens"] <= 16
        echoed = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})
        llm.script(Reply(status=401, raw_body=echoed.encode()))
        bad = check_connection("openai:gpt-4o-mini")
        assert not bad.ok and "401" in bad.line and KEY not in bad.line and "***" in bad.line
        assert "\n" not in bad.line
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}")
    down = check_connection("openai:gpt-4o-mini", budget_s=5)
    assert not down.ok and down.line and "\n" not in down.line and KEY not in down.line
    with LoopbackLLM() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        claude.script("OK")
        spoke = check_connection("anthropic:claude-3-5-haiku-latest")
        assert (spoke.ok, spoke.line, claude.requests[-1].path) == (True, "OK", "/v1/messages")
    monkeypatch.delenv("OPENAI_API_KEY")
    missing = check_connection("openai:gpt-4o-mini")
    assert not missing.ok and "OPENAI_API_KEY" in missing.line
    assert check_connection("local").ok


def test_the_page_shows_a_connection_check(
    app: AppFactory, lab: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackLLM(responder=lambda provider, body: "OK from loopback") as llm:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        at = _page(app, lab)
        at.selectbox(key="exp_target").set_value("openai:gpt-4o-mini").run()
        at.button(key="exp_ping_target").click().run()
        assert any("OK from loopback" in s.value for s in at.success)


def test_a_launch_calls_only_what_the_operator_allows(lab: Paths, tmp_path: Path) -> None:
    project = experiment.project_folder(lab)
    rules = default_access({"OPENAI_API_KEY": "x"})
    config = experiment.experiment_config(
        test_set=lab.test_sets / "six.jsonl", name="x", judge="local", embedder="local",
        target="openai:gpt-4o-mini", iterations=1, concurrency=2,
        candidates=["helper"], graders=["exact"], project=project,
    )  # fmt: skip
    assert experiment.launch_refusal(rules, config, project) is None
    elsewhere = config.model_copy(update={"project": str(tmp_path)})
    assert "project folder" in (experiment.launch_refusal(rules, elsewhere, project) or "")
    (project / "candidates" / "helper" / "pricey.md").write_text(
        "---\nname: Pricey\nmodel: gpt-4o\n---\nBe rich.\n", encoding="utf-8"
    )
    pricey = config.model_copy(update={"candidates": ("helper-pricey",)})
    assert "'openai:gpt-4o'" in (experiment.launch_refusal(rules, pricey, project) or "")
    with pytest.raises(InputError, match="give the run a name"):
        experiment.experiment_config(
            test_set=lab.test_sets / "six.jsonl", name=" ", judge="local", embedder="local",
            target="recorded", iterations=1, concurrency=2,
        )  # fmt: skip


def test_an_uploaded_grader_never_runs_code(lab: Paths) -> None:
    project = experiment.project_folder(lab)
    with pytest.raises(InputError, match=r"tone\.yaml: field 'type': a python grader"):
        experiment.save_grader_upload(
            project, "tone.yaml", b"type: python\noptions: {function: 'graders/t.py:score'}\n"
        )
    with pytest.raises(InputError, match=r"x\.py: a grader file must be \.yaml"):
        experiment.save_grader_upload(project, "x.py", b"def score(s): return 1\n")
    with pytest.raises(InputError, match="already has a grader 'exact'"):
        experiment.save_grader_upload(project, "exact.yaml", b"type: exact-match\n")
    with pytest.raises(InputError, match=r"bad\.yaml: "):
        experiment.save_grader_upload(project, "bad.yaml", b"type: regex\noptions: {}\n")
    assert not (project / "graders" / "bad.yaml").exists()
    ok = b"type: contains\noptions: {values: [ok]}\n"
    saved = experiment.save_grader_upload(project, "ok.yaml", ok)
    assert saved == project / "graders" / "ok.yaml"
    assert "ok" in {i.id for i in experiment.project_graders(project)}


def test_grid_headers_fit_a_narrow_page() -> None:
    cells = [experiment_runs.cell_name(c, g) for c in ("helper", "helper-polite") for g in "xy"]
    labels, legend = experiment_runs.short_labels(["helper", "helper-polite"], cells)
    assert [labels[c] for c in cells] == ["A · x", "A · y", "B · x", "B · y"]
    assert legend == "A = helper · B = helper-polite"
    alone, none = experiment_runs.short_labels(["helper"], cells[:2])
    assert [alone[c] for c in cells[:2]] == ["x", "y"] and none == ""
    own, _ = experiment_runs.short_labels([], ["exact"])
    assert own == {"exact": "exact"}


def test_answers_graded_counts_answers_whose_every_grader_scored() -> None:
    import polars as pl

    grid = pl.DataFrame(
        {"sample_id": ["a", "b"], "iteration": [1, 1], "A × x": [1.0, 0.5], "A × y": [0.0, None]}
    )
    assert experiment_runs.answers_graded(grid, graders=2) == 1
    assert experiment_runs.answers_graded(pl.DataFrame(), graders=2) == 0


def test_a_try_calls_only_what_the_operator_allows(app: AppFactory, lab: Paths) -> None:
    project = experiment.project_folder(lab)
    (project / "candidates" / "helper" / "pricey.md").write_text(
        "---\nname: Pricey\nmodel: gpt-4o\n---\nBe rich.\n", encoding="utf-8"
    )
    at = _page(app, lab)
    at.multiselect(key="exp_candidates").set_value(["helper-pricey"]).run()
    at.multiselect(key="exp_graders").set_value(["exact"]).run()
    assert not [b for b in at.button if b.key == "exp_try_exact"]
    refused = [c.value for c in at.caption if c.value.startswith("No try from here")]
    assert refused and "gpt-4o" in refused[0] and "not a target" in refused[0]


def test_a_try_that_cannot_run_is_one_line(lab: Paths) -> None:
    """The local judge cannot check a free-form rubric: the try says so, it never raises."""
    project = experiment.project_folder(lab)
    (project / "graders" / "tone.yaml").write_text(
        "type: llm-rubric\noptions: {rubric: 'The tone is warm and empathetic.'}\n",
        encoding="utf-8",
    )
    config = experiment.experiment_config(
        test_set=lab.test_sets / "six.jsonl", name="x", judge="local", embedder="local",
        target="recorded", iterations=1, concurrency=2, graders=["tone"], project=project,
    )  # fmt: skip
    tried = experiment_runs.try_grader(config, "tone", "q01")
    assert not tried.ok and tried.score is None
    assert "tone" in tried.reason and "\n" not in tried.reason
