"""Overview page on the fixture warehouse (numbers worked out by hand in fixture_home.py),
on an empty warehouse and on a missing one."""

from __future__ import annotations

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table


def test_default_is_latest_run_against_previous(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    assert at.selectbox(key="overview_run").value == "r3"
    assert at.selectbox(key="overview_baseline_r3").value == "r2"
    (row,) = table(at, "Accuracy noise")
    assert row["Domain"] == "acme.example"
    assert row["Accuracy"] == 81.0
    assert row["Accuracy tier"] == "🔵 good"
    assert row["Accuracy Δ"] == "▲ +1.0"
    # two iterations (80, 82): sd sqrt(2), se 1, t(1) = 12.706 -> +1 ± 12.7
    assert row["Accuracy noise"] == "within noise [-11.7, +13.7] (iterations)"
    assert row["Completeness tier"] == "🟢 excellent"


def test_week2_against_week1_deltas_and_bootstrap(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("r2").run()
    assert at.selectbox(key="overview_baseline_r2").value == "r1"
    rows = {r["Domain"]: r for r in table(at, "Accuracy noise")}
    acme, beta, gamma = rows["acme.example"], rows["beta.example"], rows["gamma.example"]
    assert (acme["Accuracy"], acme["Accuracy Δ"]) == (80.0, "▼ -5.0")
    assert (acme["Completeness"], acme["Completeness Δ"]) == (90.0, "▲ +10.0")
    assert acme["Attribution Δ"] == "▲ +12.5"
    assert acme["Accuracy noise"] == "too few paired samples (2)"
    assert (beta["Accuracy"], beta["Errors"], beta["Accuracy Δ"]) == (60.0, 1, "▲ +20.0")
    assert beta["Accuracy tier"] == "🟡 fair"
    # gamma: six paired samples, every completeness up by 10..20 -> beyond noise
    assert gamma["Completeness Δ"] == "▲ +15.0"
    assert str(gamma["Completeness noise"]).startswith("beyond noise [+1")
    assert str(gamma["Completeness noise"]).endswith("(bootstrap)")
    assert gamma["Accuracy noise"] == "within noise [+0.0, +0.0] (bootstrap)"
    assert gamma["Attribution tier"] == "🔴 poor"


def test_provider_and_tag_filters(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("r2").run()
    at.multiselect(key="overview_providers_r2").set_value(["claude"]).run()
    (row,) = table(at, "Accuracy noise")
    assert (row["Domain"], row["Accuracy"], row["Accuracy Δ"]) == ("acme.example", 70.0, "▼ -20.0")
    at.multiselect(key="overview_providers_r2").set_value([]).run()
    at.selectbox(key="overview_tag_r2").set_value("pricing").run()
    rows = {r["Domain"]: r["Accuracy"] for r in table(at, "Accuracy noise")}
    assert rows == {"acme.example": 90.0, "beta.example": 60.0}


def test_no_baseline_and_csv(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_baseline_r3").set_value("").run()
    (row,) = table(at, "Accuracy noise")
    assert row["Accuracy Δ"] == "" and row["Accuracy noise"] == "no baseline"
    buttons = [b for b in at.get("download_button")]
    assert len(buttons) == 2


def test_candidate_filter(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("rc").run()
    at.selectbox(key="overview_candidate_rc").set_value("long").run()
    (row,) = table(at, "Accuracy noise")
    assert row["Accuracy"] == 72.5


def test_empty_warehouse_says_how_to_create_data(app: AppFactory, empty_home: Paths) -> None:
    at = app(empty_home)
    assert "make demo" in at.info[0].value
    assert not at.dataframe


def test_missing_warehouse_says_how_to_create_data(app: AppFactory, missing_home: Paths) -> None:
    at = app(missing_home)
    assert "make demo" in at.info[0].value
    assert "evalhouse ingest" in at.info[0].value
    assert not at.dataframe and not at.exception
