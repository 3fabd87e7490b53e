"""Trends and Compare use the one noise interval of every page (paired bootstrap over
samples). Trends marks each run's step from the run before: a real 10-point drop on 300
samples is ringed and listed as beyond noise, one changed answer in twelve is not, at any
number of iterations; Compare gives each domain the Overview's interval."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard import data
from dashboard.data import trend_steps
from tests.dashboard.conftest import AppFactory, table
from tests.noise_cases import noise_home, ten_point_drop, twelve_cases
from warehouse.queries import Filters, Warehouse


def test_a_ten_point_drop_is_the_one_step_beyond_noise(tmp_path: Path, app: AppFactory) -> None:
    drop = ten_point_drop(1, 0.0)
    runs = {"w1": drop["base"], "w2": drop["base"], "w3": drop["cand"]}
    home = noise_home(tmp_path / "home", runs, series="weekly")
    steps = trend_steps(Warehouse(home.warehouse), ("w1", "w2", "w3"), "accuracy")
    by_run = {r["run_id"]: r for r in steps.iter_rows(named=True)}
    assert by_run["w2"]["step"] == pytest.approx(0.0) and by_run["w2"]["step_beyond"] is False
    assert by_run["w3"]["step"] == pytest.approx(-10, abs=2.5)
    assert by_run["w3"]["step_beyond"] is True and by_run["w3"]["step_high"] < 0
    at = app(home, "trends")
    rows = table(at, "step_label")
    assert [r["run_name"] for r in rows] == ["weekly"] and len(rows) == 1
    assert str(rows[0]["step_label"]).startswith(f"{by_run['w3']['step']:+.1f}, beyond [")
    assert any("paired bootstrap over samples" in c.value for c in at.caption)


@pytest.mark.parametrize("iterations", [1, 5])
def test_one_changed_answer_is_no_step(tmp_path: Path, app: AppFactory, iterations: int) -> None:
    cases = twelve_cases(iterations)
    home = noise_home(tmp_path / "home", {"w1": cases["base"], "w2": cases["cand"]}, series="wk")
    steps = trend_steps(Warehouse(home.warehouse), ("w1", "w2"), "accuracy")
    assert steps.height == 2  # acme and beta
    assert not any(steps["step_beyond"])
    at = app(home, "trends")
    assert not [f for f in at.dataframe if "step_label" in f.value.columns]


@pytest.mark.parametrize("iterations", [1, 5])
def test_compare_gives_each_domain_the_same_interval(
    tmp_path: Path, app: AppFactory, iterations: int
) -> None:
    cases = twelve_cases(iterations)
    home = noise_home(tmp_path / "home", cases, series="wk")
    at = app(home, "compare", run="cand", baseline="base")
    rows = {r["domain"]: r for r in table(at, "change_label")}
    # acme: one answer of eight down 12 points; the Overview's interval, not beyond noise
    overview = data.overview(Warehouse(home.warehouse), "cand", "base", Filters())
    acme = overview.filter(domain="acme.example").row(0, named=True)
    assert rows["acme.example"]["change_label"] == acme["accuracy_noise"]
    assert str(rows["acme.example"]["change_label"]).startswith("within [")
    drop = noise_home(tmp_path / "drop", ten_point_drop(iterations, 8.0), series="wk")
    at = app(drop, "compare", run="cand", baseline="base")
    (row,) = table(at, "change_label")
    assert str(row["change_label"]).startswith("beyond [")
