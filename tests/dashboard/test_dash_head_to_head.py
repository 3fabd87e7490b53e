"""The Compare page's head-to-head section: the latest comparison of the two sides, the
compare-runs command line, an estimate before an LLM judge is launched, and a real detached
``evalhouse compare-runs`` launched by the button (lake written, ingested, shown)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dashboard import launcher
from dashboard.components.head_to_head import H2H_OPEN
from dashboard.launcher import CompareSpec
from engine.settings import Paths, resolve_paths
from tests.dashboard.conftest import AppFactory, open_expanders
from tests.dashboard.fixture_home import build_fixture_home


def markdown(at: object) -> list[str]:
    return [m.value for m in at.markdown]  # type: ignore[attr-defined]


def test_compare_arguments(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path)
    spec = CompareSpec("rc:short", "rc:long", "openai:m", 16)
    tail = launcher.compare_arguments(paths, spec, estimate=True)[
        len(launcher.evalhouse_command()) :
    ]
    assert tail == [
        "compare-runs", "--home", str(paths.home), "rc:short", "rc:long",
        "--judge", "openai:m", "--concurrency", "16", "--estimate",
    ]  # fmt: skip
    assert spec.name == "rc:short vs rc:long"


def test_latest_comparison_of_the_two_runs_is_shown(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "compare")
    at.selectbox(key="compare_run").set_value("r2").run()
    # fixture CMP1: r1 (the baseline, A) vs r2 (B): 1 win, 1 tie, 4 losses
    shown = " ".join(markdown(at))
    assert "**Baseline wins 1 · ties 1 · challenger wins 4** (ties from orders that" in shown
    assert "disagreed: 0; pairs the judge failed on: 0)" in shown
    # r3 against r2 was judged with r2 as A: this side order has no comparison yet
    at.selectbox(key="compare_run").set_value("r3").run()
    at.selectbox(key="compare_baseline_r3").set_value("r2").run()
    assert any("**Baseline wins 0 · ties 1 · challenger wins 1**" in m for m in markdown(at))
    at.selectbox(key="compare_baseline_r3").set_value("r1").run()
    assert "These two have not been judged head to head yet." in [i.value for i in at.info]


def test_an_llm_judge_is_estimated_before_the_button(
    app: AppFactory, fixture_home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # hosted judges need their key
    at = app(fixture_home, "compare")
    at.selectbox(key="compare_run").set_value("r2").run()
    # the judge and the buttons are built only while their expander is open
    assert not [s for s in at.selectbox if s.key == "h2h_judge"]
    assert not [b for b in at.button if (b.key or "").startswith("h2h_")]
    open_expanders(at, H2H_OPEN)
    at.selectbox(key="h2h_judge").set_value("openai:gpt-4o-mini").run()
    assert not [b for b in at.button if b.key == "h2h_launch"]
    at.button(key="h2h_estimate").click().run()
    # r1 and r2 both answered 8 cases (beta-q2 is an error row in r2 and gamma-q2 answered
    # nothing there: neither is a pair): 2 calls each
    estimate = " ".join(c.value for c in at.code)
    assert "pairs:         8" in estimate and "judge calls:   16 (both orders" in estimate
    assert [b for b in at.button if b.key == "h2h_launch"]


def test_the_button_launches_compare_runs_and_shows_the_result(
    app: AppFactory, tmp_path: Path
) -> None:
    home = build_fixture_home(tmp_path / "home")  # this test writes: its own home
    at = app(home, "compare")
    at.selectbox(key="compare_run").set_value("r2").run()
    open_expanders(at, H2H_OPEN)
    at.button(key="h2h_launch").click().run()
    (started,) = launcher.list_launches(home, comparisons=True)
    assert started.spec == CompareSpec("r1", "r2", "local", 8)
    assert launcher.list_launches(home) == []  # the sidebar's run list stays runs only
    deadline = time.monotonic() + 120
    while started.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    log = launcher.tail(started.log_path)
    assert started.status() == "completed", log
    assert "pairs judged: 8/8" in log
    assert str(started.run_id()).startswith("cmp-")
    at.run()
    # The local rule, quality = mean of accuracy and completeness, tie within 5 points:
    # acme-q1 70 vs 85 B, acme-q2 95 vs 85 A, beta-q1 45 vs 55 B, gamma-q1 60 vs 65 tie,
    # gamma-q3..q6 60 vs 66..70 B (gamma-q2 answered nothing in r2: no pair) -> 1 win,
    # 1 tie, 6 losses for the baseline r1.
    assert any("**Baseline wins 1 · ties 1 · challenger wins 6**" in m for m in markdown(at))
    assert any(str(started.run_id()) in c.value for c in at.caption)
    titles = [e.label for e in at.expander]
    assert any(t.startswith("local — completed — cmp-") for t in titles)
