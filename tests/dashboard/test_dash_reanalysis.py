"""Re-analysis from the dashboard: the Runs page prepares a re-analysis against a test set
of the home and estimates it before the Launch button shows; Compare says "same answers,
new truth" when one run re-analyses the other. A real run (local judge) on a real home."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dashboard.components.reanalysis_form import REANALYSE_OPEN
from engine.demo import build_weekly_test_sets
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main
from tests.dashboard.conftest import AppFactory, open_expanders


@pytest.fixture
def scored_home(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Paths, str, Path]:
    """A home with one 4-case run and a new-truth file for it in its test sets."""
    home = resolve_paths(tmp_path / "home")
    _name, weekly, _date = build_weekly_test_sets(tmp_path / "sets", weeks=1)[0]
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(weekly.read_text().splitlines(keepends=True)[:4]))
    assert (
        main(["run", "--test-set", str(cases), "--name", "nightly", "--home", str(home.home)]) == 0
    )
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    home.test_sets.mkdir(parents=True, exist_ok=True)
    truth = home.test_sets / "truth-v2.jsonl"
    rows = [json.loads(x) for x in cases.read_text().splitlines()]
    for row in rows:
        row["expected_answer"]["text"] = "Updated: " + row["expected_answer"]["text"]
    truth.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shutil.copy(cases, home.test_sets / "cases.jsonl")
    return home, run_id, truth


def test_runs_page_estimates_a_reanalysis_before_launching(
    app: AppFactory, scored_home: tuple[Paths, str, Path]
) -> None:
    home, run_id, truth = scored_home
    at = app(home, "runs")
    assert not [s for s in at.selectbox if (s.key or "").startswith("runs_truth_pick_")]
    open_expanders(at, REANALYSE_OPEN)  # built only while open
    at.selectbox(key=f"runs_truth_pick_{run_id}").set_value(truth).run()
    assert any("(re-analysed)" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == f"runs_reanalyse_{run_id}_launch"]
    at.button(key=f"runs_reanalyse_{run_id}_estimate").click().run()
    assert not at.exception
    assert [b for b in at.button if b.key == f"runs_reanalyse_{run_id}_launch"]


def test_compare_says_same_answers_new_truth(
    app: AppFactory, scored_home: tuple[Paths, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    home, run_id, truth = scored_home
    assert main(["reanalyze", run_id, "--ground-truth", str(truth), "--home", str(home.home)]) == 0
    new = capsys.readouterr().out.strip().splitlines()[-1]
    at = app(home, "compare")
    at.selectbox(key="compare_run").set_value(new).run()
    at.selectbox(key=f"compare_baseline_{new}").set_value(run_id).run()
    notes = [i.value for i in at.info if "Same answers, new truth" in i.value]
    assert notes and run_id in notes[0] and "truth-v2.jsonl" in notes[0]
