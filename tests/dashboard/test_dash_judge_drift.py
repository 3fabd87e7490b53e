"""A judge change on the Overview (note + observed Δ split into judge drift and system
change) and on Trends (a dashed rule at the run), on a small hand-made warehouse."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from dashboard.components.safe import safe_text
from engine.lake import write_part
from engine.models import JudgeDriftRecord
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory, table
from tests.factories import T0, result_record, run_record


@pytest.fixture
def drift_home(tmp_path: Path) -> Paths:
    """nightly 1 (judge local) then nightly 2 (judge openai:x): judge faithfulness 4 -> 3
    on the same samples (observed -25 of 0-100), and a drift check measuring -20 [-24, -16]."""
    home = resolve_paths(tmp_path / "home")
    for run_id, days, judge, score in (("r1", 0, "local", 4.0), ("r2", 7, "openai:x", 3.0)):
        started = T0 + timedelta(days=days)
        record = run_record(run_id, started, name=f"nightly week {days // 7 + 1}", judge=judge)
        write_part(home.lake, "runs", run_id, 0, [record])
        rows = [
            result_record(run_id, f"s{i}", judge_faithfulness=score, judge_completeness=score)
            for i in range(4)
        ]
        write_part(home.lake, "results", run_id, 1, rows)
    drift = JudgeDriftRecord(
        check_id="drift-1", run_id="r2", baseline_run_id="r1", series="nightly",
        anchor_run_id="r1", metric="judge_faithfulness", old_judge="local@local",
        new_judge="openai:x@v1", mean_shift=-20.0, ci_low=-24.0, ci_high=-16.0, n=4,
        checked_at=T0 + timedelta(days=7),
    )  # fmt: skip
    write_part(home.lake, "judge_drift", "drift-1", 0, [drift])
    ingest(home)
    return home


def test_overview_splits_the_change_into_judge_drift_and_system(
    app: AppFactory, drift_home: Paths
) -> None:
    at = app(drift_home)
    assert at.selectbox(key="overview_run").value == "r2"
    assert any("Judge changed" in w.value for w in at.warning)
    row = table(at, "Judge drift")[0]
    assert row["Metric"] == "Judge faithfulness"
    assert row["Observed Δ"] == pytest.approx(-25.0)
    assert row["System change"] == pytest.approx(-5.0)
    assert row["System 95%"] == "[-9.0, -1.0]"


def test_trends_marks_the_judge_change(app: AppFactory, drift_home: Paths) -> None:
    at = app(drift_home, page="trends")
    # judge names come from data: escaped for Markdown (they render as typed)
    shown = safe_text("Local judge → x (OpenAI)")  # readable names, the versions in the tooltip
    assert any("Dashed rules" in c.value and shown in c.value for c in at.caption)
