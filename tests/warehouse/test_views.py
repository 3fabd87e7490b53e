"""The contract views against a fixture whose numbers are computed by hand, on both
backends: the warehouse file and a DuckLake catalog on PostgreSQL (``store``)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engine.lake import write_part
from tests.conftest import Store
from tests.factories import T0, result_record, run_record
from warehouse.queries import Warehouse, domain_overview, previous_run


@pytest.fixture
def warehouse(store: Store) -> Warehouse:
    home = store.home
    # Run A (week 1) and run B (week 2) on acme; run B also has beta; run C (week 3) only beta.
    # One series: each run's baseline is the one before it.
    for week, run_id in enumerate("ABC"):
        started = T0 + timedelta(days=7 * week)
        record = run_record(run_id, started, series="weekly check")
        write_part(home.lake, "runs", run_id, 0, [record])
    write_part(
        home.lake,
        "results",
        "A",
        1,
        [
            result_record("A", "s1", accuracy=90.0, completeness=40.0, attribution=100.0),
            result_record("A", "s2", accuracy=70.0, completeness=60.0, attribution=0.0),
            result_record("A", "s3", accuracy=50.0, completeness=80.0, attribution=50.0),
            result_record(
                "A",
                "s4",
                accuracy=None,
                completeness=None,
                attribution=None,
                error="ground truth missing",
            ),
        ],
    )
    write_part(
        home.lake,
        "results",
        "B",
        1,
        [
            result_record(
                "B",
                "s1",
                accuracy=95.0,
                completeness=100.0,
                attribution=75.0,
                passed=True,
                cost_usd=0.25,
            ),
            result_record(
                "B",
                "s2",
                accuracy=85.0,
                completeness=20.0,
                attribution=75.0,
                passed=False,
                cost_usd=0.5,
            ),
            result_record(
                "B", "t1", domain="beta.example", accuracy=40.0, completeness=50.0, attribution=10.0
            ),
        ],
    )
    write_part(
        home.lake,
        "results",
        "C",
        1,
        [
            result_record(
                "C", "t1", domain="beta.example", accuracy=60.0, completeness=30.0, attribution=20.0
            )
        ],
    )
    store.ingest()
    return store.warehouse


def test_domain_scores_means_medians_tiers(warehouse: Warehouse) -> None:
    row = warehouse.sql(
        "SELECT * FROM domain_scores WHERE run_id = 'A' AND domain = 'acme.example'"
    ).frame.to_dicts()[0]
    assert row["query_count"] == 4
    assert row["accuracy_mean"] == pytest.approx(70.0)  # (90 + 70 + 50) / 3, error row left out
    assert row["accuracy_median"] == pytest.approx(70.0)
    assert (row["accuracy_min"], row["accuracy_max"]) == (50.0, 90.0)
    assert (
        row["accuracy_excellent"],
        row["accuracy_good"],
        row["accuracy_fair"],
        row["accuracy_poor"],
    ) == (1, 1, 1, 0)
    assert row["completeness_mean"] == pytest.approx(60.0)
    assert (
        row["completeness_excellent"],
        row["completeness_good"],
        row["completeness_fair"],
        row["completeness_poor"],
    ) == (0, 1, 1, 1)
    assert row["attribution_mean"] == pytest.approx(50.0)
    assert row["attribution_median"] == pytest.approx(50.0)
    assert (row["attribution_excellent"], row["attribution_poor"]) == (1, 1)


def test_domain_trends_compare_with_the_series_baseline(warehouse: Warehouse) -> None:
    rows = {
        (r["run_id"], r["domain"]): r
        for r in warehouse.sql("SELECT * FROM domain_trends").frame.to_dicts()
    }
    first = rows[("A", "acme.example")]
    assert first["previous_run_id"] is None and first["accuracy_delta"] is None
    acme_b = rows[("B", "acme.example")]
    assert acme_b["previous_run_id"] == "A"
    assert acme_b["accuracy_delta"] == pytest.approx(90.0 - 70.0)
    assert acme_b["completeness_delta"] == pytest.approx(60.0 - 60.0)
    assert acme_b["attribution_delta"] == pytest.approx(75.0 - 50.0)
    # beta first appears in B: no previous; in C the previous is B (A has no beta).
    assert rows[("B", "beta.example")]["previous_run_id"] is None
    beta_c = rows[("C", "beta.example")]
    assert beta_c["previous_run_id"] == "B"
    assert beta_c["accuracy_delta"] == pytest.approx(20.0)
    assert beta_c["completeness_delta"] == pytest.approx(-20.0)


def test_run_summary(warehouse: Warehouse) -> None:
    rows = {r["run_id"]: r for r in warehouse.sql("SELECT * FROM run_summary").frame.to_dicts()}
    assert rows["A"]["samples"] == 4 and rows["A"]["errors"] == 1
    assert rows["A"]["pass_rate"] is None
    assert rows["B"]["samples"] == 3 and rows["B"]["errors"] == 0
    assert rows["B"]["pass_rate"] == pytest.approx(0.5)
    assert rows["B"]["cost_usd"] == pytest.approx(0.75)
    assert rows["B"]["accuracy_mean"] == pytest.approx((95 + 85 + 40) / 3)
    assert rows["C"]["name"] == "run C" and rows["C"]["status"] == "completed"


def test_domain_overview_query_and_previous_run(warehouse: Warehouse) -> None:
    assert previous_run(warehouse, "B") == "A"
    assert previous_run(warehouse, "A") is None
    frame = domain_overview(warehouse, "B", "A")
    acme = frame.filter(frame["domain"] == "acme.example").to_dicts()[0]
    assert acme["accuracy_delta"] == pytest.approx(20.0)
    beta = frame.filter(frame["domain"] == "beta.example").to_dicts()[0]
    assert beta["accuracy_delta"] is None


def test_latest_run_state_wins(store: Store, warehouse: Warehouse) -> None:
    write_part(
        store.home.lake,
        "runs",
        "A",
        0,
        [run_record("A", T0, status="failed", updated_at=T0 + timedelta(hours=1))],
    )
    store.ingest()
    frame = warehouse.sql("SELECT run_id, status FROM runs WHERE run_id = 'A'").frame
    assert frame.to_dicts() == [{"run_id": "A", "status": "failed"}]


def test_verdict_confidence_counts_at_the_bar_that_flags_samples() -> None:
    """The view's bar is written in SQL; the flag's lives in the engine: one number."""
    import re
    from pathlib import Path

    from engine.scoring.judging import CONFIDENCE_BAR

    sql = (Path(__file__).parents[2] / "warehouse/sql/views/87_verdict_confidence.sql").read_text()
    bars = {float(b) for b in re.findall(r"confidence >= ([0-9.]+)", sql)}
    assert bars == {CONFIDENCE_BAR}
