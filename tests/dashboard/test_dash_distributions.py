"""Distributions: each metric's spread per domain (Overview) and the per-sample change per
domain (Compare), computed in SQL, checked against numpy on the same rows, and drawn."""

from __future__ import annotations

import numpy as np

from engine.settings import Paths
from tests.dashboard.conftest import AppFactory
from warehouse import queries as q
from warehouse.queries import Warehouse


def test_five_numbers_match_numpy(fixture_home: Paths) -> None:
    wh = Warehouse(fixture_home.warehouse)
    spread = q.metric_distribution(wh, "r2")
    rows = wh.sql("SELECT domain, accuracy FROM result_scores WHERE run_id = 'r2'").frame
    for row in spread.filter(spread["metric"] == "accuracy").iter_rows(named=True):
        values = rows.filter(rows["domain"] == row["domain"])["accuracy"].drop_nulls().to_numpy()
        expected = np.percentile(values, [0, 25, 50, 75, 100])
        got = [row[k] for k in ("low", "q1", "median", "q3", "high")]
        assert np.allclose(got, expected), (row["domain"], got, expected)
        assert row["samples"] == len(values)


def test_the_pages_draw_them(app: AppFactory, fixture_home: Paths) -> None:
    overview = app(fixture_home)
    assert "Score distribution" in [s.value for s in overview.subheader]
    compare = app(fixture_home, "compare")
    captions = [c.value for c in compare.caption]
    assert any(c.startswith("Per-sample change per domain") for c in captions), captions
