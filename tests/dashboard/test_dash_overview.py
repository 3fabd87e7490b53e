"""Overview page on the fixture warehouse (numbers worked out by hand in fixture_home.py),
on an empty warehouse and on a missing one."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, all_columns, table


def rows_by(at: AppTest) -> dict[tuple[str, str], dict[str, object]]:
    """The Overview table (one row per domain and metric) with all its columns, keyed by
    (domain, metric)."""
    return {(str(r["Domain"]), str(r["Metric"])): r for r in all_columns(at)}


def test_default_is_latest_run_against_previous(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    assert at.selectbox(key="overview_run").value == "r3"
    assert at.selectbox(key="overview_baseline_r3").value == "r2"
    rows = rows_by(at)
    assert {d for d, _ in rows} == {"acme.example"}
    row = rows["acme.example", "Accuracy"]
    assert row["Score"] == 81.0
    assert row["Tier"] == "good"
    assert row["Δ"] == "▲ +1.0"
    # two iterations of two samples: the interval is over samples, and two are too few
    # for one (the spread of the two iterations alone is not the noise of the change)
    assert row["Noise"] == "too few paired samples (2)"
    assert rows["acme.example", "Completeness"]["Tier"] == "excellent"


def test_week2_against_week1_deltas_and_bootstrap(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("r2").run()
    assert at.selectbox(key="overview_baseline_r2").value == "r1"
    rows = rows_by(at)
    acme = rows["acme.example", "Accuracy"]
    assert (acme["Score"], acme["Δ"]) == (80.0, "▼ -5.0")
    comp = rows["acme.example", "Completeness"]
    assert (comp["Score"], comp["Δ"]) == (90.0, "▲ +10.0")
    assert rows["acme.example", "Attribution"]["Δ"] == "▲ +12.5"
    assert acme["Noise"] == "too few paired samples (2)"
    beta = rows["beta.example", "Accuracy"]
    assert (beta["Score"], beta["Errors"], beta["Δ"]) == (60.0, 1, "▲ +20.0")
    assert beta["Tier"] == "fair"
    # gamma: six paired samples, every completeness up by 10..20 -> beyond noise
    gamma = rows["gamma.example", "Completeness"]
    assert gamma["Δ"] == "▲ +15.0"
    assert str(gamma["Noise"]).startswith("beyond [+1")
    assert str(gamma["Noise"]).endswith("]")  # the method is in the caption
    assert rows["gamma.example", "Accuracy"]["Noise"] == "within [+0.0, +0.0]"
    assert rows["gamma.example", "Attribution"]["Tier"] == "poor"


def test_provider_and_tag_filters(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("r2").run()
    at.multiselect(key="overview_providers_r2").set_value(["claude"]).run()
    rows = rows_by(at)
    assert {d for d, _ in rows} == {"acme.example"}
    row = rows["acme.example", "Accuracy"]
    assert (row["Score"], row["Δ"]) == (70.0, "▼ -20.0")
    at.multiselect(key="overview_providers_r2").set_value([]).run()
    at.selectbox(key="overview_tag_r2").set_value("pricing").run()
    scores = {d: r["Score"] for (d, m), r in rows_by(at).items() if m == "Accuracy"}
    assert scores == {"acme.example": 90.0, "beta.example": 60.0}


def test_no_baseline_and_csv(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_baseline_r3").set_value("").run()
    row = rows_by(at)["acme.example", "Accuracy"]
    assert row["Δ"] == "" and row["Noise"] == "no baseline"
    buttons = [b for b in at.get("download_button")]
    assert len(buttons) == 4  # the table, the HTML report, the distribution and the tier mix


def test_candidate_filter(app: AppFactory, fixture_home: Paths) -> None:
    # rc is a series of its own: a link to the run opens it
    at = app(fixture_home, run="rc")
    at.selectbox(key="overview_candidate_rc").set_value("long").run()
    rows = rows_by(at)
    assert {d for d, _ in rows} == {"acme.example"}
    assert rows["acme.example", "Accuracy"]["Score"] == 72.5


def test_run_own_tier_thresholds(app: AppFactory, fixture_home: Paths) -> None:
    # rc is a series of its own: a link to the run opens it
    at = app(fixture_home, run="rc")
    at.selectbox(key="overview_candidate_rc").set_value("long").run()
    rows = rows_by(at)
    # rc's config says 90/80/60: 72.5 is fair and 50 poor (the defaults: good and fair)
    assert rows["acme.example", "Accuracy"]["Tier"] == "fair"
    assert rows["acme.example", "Completeness"]["Tier"] == "poor"
    assert any("fair ≥ 60" in m.value for m in at.markdown)


def test_empty_warehouse_says_how_to_create_data(app: AppFactory, empty_home: Paths) -> None:
    at = app(empty_home)
    assert "make demo" in at.info[0].value
    assert not at.dataframe


def test_missing_warehouse_says_how_to_create_data(app: AppFactory, missing_home: Paths) -> None:
    at = app(missing_home)
    assert "make demo" in at.info[0].value
    assert "evalhouse ingest" in at.info[0].value
    assert not at.dataframe and not at.exception


def test_judge_metrics_in_their_0_100_form(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    # only r2's acme-q1 has a judge; against r1 (no judge) its judge metrics show a score
    # and no Δ
    at.selectbox(key="overview_run").set_value("r2").run()
    rows = rows_by(at)
    faith = rows["acme.example", "Judge faithfulness"]
    assert (faith["Score"], faith["Tier"], faith["Δ"]) == (75.0, "good", "")  # (4 - 1) * 25
    assert faith["Noise"] == "not measured in both runs"
    assert rows["acme.example", "Judge completeness"]["Score"] == 50.0  # (3 - 1) * 25
    assert rows["acme.example", "Claim faithfulness"]["Score"] == 50.0  # 0.5 * 100
    assert rows["acme.example", "Rubric pass rate"]["Tier"] == "poor"  # failed: 0
    assert ("beta.example", "Judge faithfulness") not in rows  # no judge there in either run
    assert ("acme.example", "RAG overall") not in rows


def test_the_verdict_comes_first_and_the_table_filters_to_beyond_noise(
    app: AppFactory, fixture_home: Paths
) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("r2").run()
    # gamma's completeness rose beyond noise (+15, bootstrap); nothing fell beyond noise.
    assert at.success[0].value == "**1 of 3 domains better beyond noise (gamma.example)**"
    verdict = table(at, "95% interval")
    assert [(r["Domain"], r["Change"], r["Metric"]) for r in verdict] == [
        ("gamma.example", "better", "Completeness")
    ]
    at.toggle(key="overview_beyond_only").set_value(True).run()
    assert list(rows_by(at)) == [("gamma.example", "Completeness")]
