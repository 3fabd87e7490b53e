"""Trends' chart as inline SVG: the points sit where the scores say on an axis fitted to
them, a run that did not complete is hollow, a step beyond noise is ringed in the colour of
its direction, a judge change is a dashed rule, the tier bands are cut to the axis, and
every name from data is text."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime

import polars as pl

from dashboard.svg_charts import LABEL_WIDTH, PLOT
from dashboard.svg_trend import HEIGHT, RING_COLORS, fitted_range, trend_svg
from engine.models import TierThresholds

SVG = "{http://www.w3.org/2000/svg}"
DAYS = [datetime(2026, 11, 1, 9), datetime(2026, 11, 8, 9), datetime(2026, 11, 15, 9)]


def _frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r3", "r1", "r2"],
            "run_name": ["week 1", "week 2", "week 3", "week 1", "week 2"],
            "started_at": [*DAYS, DAYS[0], DAYS[1]],
            "status": ["completed", "completed", "failed", "completed", "completed"],
            "domain": ["acme.example"] * 3 + ["<b>beta</b>"] * 2,
            "samples": [8, 8, 3, 4, 4],
            "metric": ["accuracy"] * 5,
            "score": [80.0, 70.0, 72.0, 60.0, 61.0],
            "step": [None, -10.0, None, None, 1.0],
            "step_beyond": [None, True, None, None, False],
            "step_label": [None, "-10.0 beyond [-14.0, -6.0]", None, None, "+1.0 within"],
        }
    )


def test_points_rings_and_hollow_runs() -> None:
    svg = trend_svg(_frame(), "accuracy", title="Accuracy")
    root = ET.fromstring(svg)  # well-formed: the domain's markup stayed text
    assert "<b>beta" not in svg and "&lt;b&gt;beta&lt;/b&gt;" in svg
    circles = list(root.iter(f"{SVG}circle"))
    points = [c for c in circles if c.get("r") == "4"]
    rings = [c for c in circles if c.get("r") == "9"]
    low, high = fitted_range(_frame()["score"], fit=True)
    assert (low, high) == (55.0, 85.0)  # 60..80 and a quarter of the 20-point span around
    first = points[0]
    assert float(first.get("cx", "")) == LABEL_WIDTH  # the first run at the axis' start
    assert abs(float(first.get("cy", "")) - (22 + HEIGHT * (1 - (80 - 55) / 30))) < 0.1
    # week 3 failed: hollow; the others filled in their domain's colour
    fills = [p.get("fill") for p in points]
    assert fills[2] == "#ffffff" and fills[0] == fills[1] == points[0].get("stroke")
    # week 2's acme fell beyond noise: one red ring, on that point
    (ring,) = rings
    assert ring.get("stroke") == RING_COLORS["down"]
    assert (ring.get("cx"), ring.get("cy")) == (points[1].get("cx"), points[1].get("cy"))
    hovers = [p.find(f"{SVG}title").text for p in points]  # type: ignore[union-attr]
    assert hovers[1] == (
        "week 2 (2026-11-08 09:00), completed, 8 samples, acme.example: 70.0; "
        "change from previous run: -10.0 beyond [-14.0, -6.0]"
    )
    assert float(points[2].get("cx", "")) == LABEL_WIDTH + PLOT
    # one line per domain with two or more runs
    assert len(list(root.iter(f"{SVG}polyline"))) == 2


def test_bands_cut_to_the_axis_and_the_judge_rule() -> None:
    events = pl.DataFrame(
        {
            "started_at": [DAYS[1]],
            "run_name": ["week 2"],
            "old_judge": ["local"],
            "new_judge": ["openai:<x>"],
        }
    )
    svg = trend_svg(_frame(), "accuracy", TierThresholds(), fit=True, events=events)
    root = ET.fromstring(svg)
    bands = [
        r.find(f"{SVG}title").text  # type: ignore[union-attr]
        for r in root.iter(f"{SVG}rect")
        if r.get("fill-opacity") == "0.12"
    ]
    # the fitted axis 55-85 crosses the good (70-85) and fair (50-70) bands only
    assert bands == ["good band: 70-85", "fair band: 55-70"]
    (rule,) = [line for line in root.iter(f"{SVG}line") if line.get("stroke-dasharray")]
    assert rule.find(f"{SVG}title").text == (  # type: ignore[union-attr]
        "judge changed at week 2: local → openai:<x>"
    )
    assert abs(float(rule.get("x1", "")) - (LABEL_WIDTH + PLOT / 2)) < 0.1
    whole = ET.fromstring(trend_svg(_frame(), "accuracy", fit=False))
    titles = [t.text for t in whole.iter(f"{SVG}title")]
    assert "excellent band: 85-100" in titles and "poor band: 0-50" in titles
