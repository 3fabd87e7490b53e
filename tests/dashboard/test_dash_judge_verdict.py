"""After a week of real use: a judge change, an ad-hoc launch and an alert of the latest run.

The Overview must say the judge changed before anything else, never call a judge-only shift
"worse beyond noise", open on the weekly series after an ad-hoc run, and show an alert only
on the runs it is about. Built from lake records and ingested into a real warehouse.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from dashboard.components.safe import safe_text
from dashboard.report import build_report
from engine.lake import write_part
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory, shown_cards, table
from tests.dashboard.week_home import DOMAINS, NOW, build_mover_home, build_week_home, week
from tests.factories import T0, run_record
from warehouse.queries import Warehouse


@pytest.fixture(scope="module")
def week_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    """The home of ``build_week_home``."""
    home = resolve_paths(tmp_path_factory.mktemp("week") / "home")
    build_week_home(home)
    return home


def _first_screen(at: object) -> list[str]:
    """The texts of the alerts, notes and verdict in page order (warnings, errors, ...)."""
    from streamlit.testing.v1 import AppTest

    assert isinstance(at, AppTest)
    return [e.value for e in at.main if e.type in ("alert", "warning", "error", "success", "info")]


def test_the_overview_opens_on_the_weekly_series_after_an_ad_hoc_run(
    app: AppFactory, week_home: Paths
) -> None:
    at = app(week_home)
    assert at.selectbox(key="overview_series").value == "weekly"
    assert at.selectbox(key="overview_run").value == "w2"
    assert at.selectbox(key="overview_series").options[1] == "zephyr-big"
    assert at.query_params["series"] == "weekly"


def test_a_link_to_the_ad_hoc_run_opens_its_series(app: AppFactory, week_home: Paths) -> None:
    at = app(week_home, run="z1")
    assert at.selectbox(key="overview_series").value == "zephyr-big"
    assert at.selectbox(key="overview_run").value == "z1"


def test_a_judge_only_shift_is_named_first_and_never_worse_beyond_noise(
    app: AppFactory, week_home: Paths
) -> None:
    at = app(week_home)
    warnings = [w.value for w in at.warning]
    # judges by their readable names (escaped for Markdown: they come from data)
    assert warnings and warnings[0].startswith(
        safe_text("Judge changed: Local judge (baseline) → x (OpenAI).")
    )
    assert "local@" not in warnings[0]
    verdicts = (
        [e.value for e in at.error] + [s.value for s in at.success] + [i.value for i in at.info]
    )
    assert not any("worse beyond noise" in v for v in verdicts), verdicts
    assert any("No domain changed beyond noise" in v and "judge drift taken out" in v
               for v in verdicts)  # fmt: skip
    rows = {(r["Domain"], r["Metric"]): r for r in table(at, "Noise")}
    faith = rows[("acme.example", "Judge faithfulness")]
    assert "system Δ +0.0 within noise [-4.0, +4.0]" in str(faith["Noise"])
    assert "judge drift -50.0" in str(faith["Noise"])
    # completeness: the check did not measure it, so it gets no verdict at all
    assert "not comparable" in str(rows[("acme.example", "Judge completeness")]["Noise"])
    # pass rate fell 100 points, all of it the judge's: the card says not comparable
    pass_card = shown_cards(at)["Pass rate"]
    assert "not comparable" in pass_card["verdict"]
    assert "delta" not in pass_card


def test_without_a_drift_check_judge_metrics_are_not_compared(
    app: AppFactory, week_home: Paths, tmp_path: Path
) -> None:
    home = resolve_paths(tmp_path / "home")
    week(home, "w1", 1, "local", 4.0, True)
    week(home, "w2", 2, "local", 4.0, True)
    week(home, "w3", 3, "local", 4.0, True)
    # the prompt version alone changed: a judge change too
    write_part(home.lake, "runs", "w3", 0, [run_record(
        "w3", T0 + timedelta(days=14), name="weekly week 3", judge_prompt_version="v2",
        updated_at=T0 + timedelta(days=15),
    )])  # fmt: skip
    week(home, "w3", 3, "local", 1.0, False)
    ingest(home)
    at = app(home)
    assert at.selectbox(key="overview_run").value == "w3"
    first = at.warning[0].value
    assert "Judge changed" in first and "not comparable" in first
    verdicts = [e.value for e in at.error]
    assert not any("worse beyond noise" in v for v in verdicts), verdicts


def test_the_report_carries_the_judge_note_and_the_split(week_home: Paths) -> None:
    text = build_report(Warehouse(week_home.warehouse), "w2", "w1", now=NOW)
    assert "Judge changed: Local judge (baseline) → x (OpenAI)." in text
    assert "local@" not in text and "openai:x" not in text
    assert text.index("Judge changed") < text.index('class="verdict same"')
    assert "worse beyond noise" not in text
    assert "system Δ +0.0 within noise" in text
    assert "uploads/" not in text  # no server folders in a file that is attached anywhere


def test_an_older_run_never_shows_a_later_runs_alert(app: AppFactory, week_home: Paths) -> None:
    latest = app(week_home)
    assert any("faith-floor" in w.value for w in latest.warning)
    older = app(week_home, run="w1")
    assert older.selectbox(key="overview_run").value == "w1"
    assert not any("faith-floor" in w.value for w in older.warning)


def test_every_mover_links_to_compare_on_its_domain_and_metric(
    app: AppFactory, tmp_path: Path
) -> None:
    home = resolve_paths(tmp_path / "home")
    build_mover_home(home)
    at = app(home)
    movers = table(at, "Also moved")
    assert {r["Domain"] for r in movers} == set(DOMAINS)
    first = movers[0]
    assert first["Change"] == "worse"
    # both analyzer metrics fell; the other one is named, not counted
    assert str(first["Also moved"]).startswith("+1 more: ")
    link = str(first["Samples"])
    assert "/compare?" in link and "run=w2" in link and "baseline=w1" in link
    assert f"domain={first['Domain']}" in link and "metric=" in link
    metric = link.split("metric=")[1].split("&")[0]
    opened = app(home, page="compare", run="w2", baseline="w1", metric=metric,
                 domain=str(first["Domain"]))  # fmt: skip
    assert opened.selectbox(key="compare_metric").value == metric
    assert opened.selectbox(key="compare_domain").value == first["Domain"]
