"""The Overview's charts are inline SVG drawn on the server (no chart library on the first
page): the marks sit where the numbers say, every label from data is escaped, and the page
draws them without a Vega-Lite chart."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import polars as pl

from dashboard.svg_charts import CHART_CLASS, LABEL_WIDTH, PLOT, distribution_svg, tier_mix_svg
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory

SVG = "{http://www.w3.org/2000/svg}"
CHART_START = f'<div class="{CHART_CLASS}"><svg'
"""How every chart's Markdown starts: a <div>, so Markdown reads nothing inside it."""


def _x(value: float) -> float:
    return LABEL_WIDTH + value / 100 * PLOT


def test_box_marks_at_their_values_and_labels_escaped() -> None:
    spread = pl.DataFrame(
        {
            "domain": ["<b>acme</b>.example", "beta.example"],
            "metric": ["accuracy", "accuracy"],
            "low": [10.0, 0.0],
            "q1": [20.0, 50.0],
            "median": [40.0, 60.0],
            "q3": [60.0, 70.0],
            "high": [90.0, 100.0],
        }
    )
    svg = distribution_svg(spread, label=lambda m: m.upper())
    root = ET.fromstring(svg)  # well-formed: the markup in the name stayed text
    assert "<b>" not in svg and "&lt;b&gt;acme&lt;/b&gt;.example" in svg
    boxes = root.findall(f".//{SVG}rect")
    assert [float(b.get("x", "")) for b in boxes] == [_x(20.0), _x(50.0)]
    assert [round(float(b.get("width", "")), 1) for b in boxes] == [
        round(_x(60) - _x(20), 1),
        round(_x(70) - _x(50), 1),
    ]
    hovers = [t.text for t in root.iter(f"{SVG}title")]
    assert "beta.example: lowest 0.0, middle half 50.0-70.0, median 60.0, highest 100.0" in hovers
    assert "ACCURACY" in svg
    # a row's label carries its whole name on hover only where it is cut
    labels = [t for t in root.iter(f"{SVG}text") if "example" in "".join(t.itertext())]
    assert [t.find(f"{SVG}title") for t in labels] == [None, None]


def test_a_cut_row_label_has_its_whole_name_on_hover() -> None:
    long_name = "a-very-long-domain-name-that-is-cut.example"
    spread = pl.DataFrame(
        {"domain": [long_name], "metric": ["accuracy"], "low": [1.0], "q1": [2.0]}
        | {"median": [3.0], "q3": [4.0], "high": [5.0]}
    )
    root = ET.fromstring(distribution_svg(spread))
    (label,) = [t for t in root.iter(f"{SVG}text") if "…" in "".join(t.itertext())]
    title = label.find(f"{SVG}title")
    assert title is not None and title.text == long_name


def test_tier_bars_are_shares_of_the_domain() -> None:
    mix = pl.DataFrame(
        {
            "domain": ["acme.example"] * 3,
            "metric": ["accuracy"] * 3,
            "tier": ["poor", "excellent", "good"],
            "samples": [1, 2, 1],
        }
    )
    root = ET.fromstring(tier_mix_svg(mix))
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    # excellent first, then good, then poor: 50%, 25%, 25% of the plot, end to end
    widths = [float(r.get("width", "")) for r in bars]
    assert [round(w / PLOT, 3) for w in widths] == [0.5, 0.25, 0.25]
    starts = [float(r.get("x", "")) for r in bars]
    assert starts[0] == LABEL_WIDTH and abs(starts[2] - (LABEL_WIDTH + 0.75 * PLOT)) < 0.2
    titles = [r.find(f"{SVG}title").text for r in bars]  # type: ignore[union-attr]
    assert titles[0] == "acme.example: 2 of 4 samples excellent (50%)"


def test_the_overview_draws_svg_not_vega(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    assert not at.get("vega_lite_chart")
    shown = [m.value for m in at.markdown]
    assert len([b for b in shown if b.startswith(CHART_START)]) == 2
    assert any(re.search(r'aria-label="tier distribution per domain"', b) for b in shown)


def test_compare_counts_are_bars_to_one_scale() -> None:
    from dashboard.svg_charts import compare_counts_svg

    counts = pl.DataFrame(
        {
            "domain": ["acme.example", "beta.example"],
            "improved": [2, 0],
            "unchanged": [5, 1],
            "regressed": [1, 1],
        }
    )
    root = ET.fromstring(compare_counts_svg(counts))
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    titles = [r.find(f"{SVG}title").text for r in bars]  # type: ignore[union-attr]
    assert titles == [
        "acme.example: 2 of 8 samples improved (25%)",
        "acme.example: 5 of 8 samples unchanged (62%)",
        "acme.example: 1 of 8 samples regressed (12%)",
        "beta.example: 1 of 2 samples unchanged (50%)",
        "beta.example: 1 of 2 samples regressed (50%)",
    ]
    # one scale for every domain (0-8 here): beta's two samples are a quarter of acme's bar
    widths = [float(r.get("width", "")) for r in bars]
    assert abs((widths[3] + widths[4]) / sum(widths[:3]) - 0.25) < 0.01


def test_change_boxes_straddle_zero() -> None:
    from dashboard.svg_charts import Scale, change_box_svg

    counts = pl.DataFrame(
        {
            "domain": ["acme.example"],
            "lo": [-12.0],
            "a": [-3.0],
            "m": [0.0],
            "b": [2.0],
            "hi": [6.0],
        }
    )
    svg = change_box_svg(counts, ("lo", "a", "m", "b", "hi"), "change")
    root = ET.fromstring(svg)
    (box,) = [r for r in root.iter(f"{SVG}rect")]
    scale = Scale(-20.0, 20.0)  # reach 12 rounded to steps of 10
    assert float(box.get("x", "")) == round(scale.x(-3.0), 1)
    assert "lowest -12.0 pts, middle half -3.0-2.0 pts, median 0.0 pts" in svg
    assert ">0</text>" in svg and ">+20</text>" in svg and ">-20</text>" in svg


def test_compare_draws_svg_not_vega(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "compare")
    assert not at.get("vega_lite_chart")
    shown = [m.value for m in at.markdown if m.value.startswith(CHART_START)]
    assert len(shown) == 2


def test_mention_rates_are_one_bar_per_provider_and_names_are_text() -> None:
    from dashboard.svg_charts import mention_rates_svg

    rates = pl.DataFrame(
        {
            "domain": ["acme.example", "acme.example"],
            "ai_provider": ["<i>gpt</i>", "claude"],
            "responses": [4, 2],
            "url_percent": [50.0, 100.0],
            "domain_percent": [25.0, None],
            "brand_percent": [0.0, 0.0],
        }
    )
    svg = mention_rates_svg(rates)
    root = ET.fromstring(svg)  # well-formed: the provider's markup stayed text
    assert "<i>" not in svg and "&lt;i&gt;gpt&lt;/i&gt;" in svg
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    titles = [r.find(f"{SVG}title").text for r in bars]  # type: ignore[union-attr]
    # one bar per provider and mention; claude's unknown domain share draws none
    assert titles[:3] == [
        "acme.example, <i>gpt</i>: 50.0% of 4 responses mention URL",
        "acme.example, claude: 100.0% of 2 responses mention URL",
        "acme.example, <i>gpt</i>: 25.0% of 4 responses mention domain",
    ]
    assert len(bars) == 5
    widths = [float(r.get("width", "")) for r in bars]
    assert widths[0] == round(0.5 * PLOT, 1) and widths[1] == round(PLOT, 1)
    # each provider keeps its colour in every block, and the legend names it
    fills = [r.get("fill") for r in bars]
    assert fills[0] == fills[2] == fills[3] and fills[1] == fills[4] != fills[0]


def test_mention_trend_is_a_dot_per_run_joined_per_domain() -> None:
    from datetime import datetime

    from dashboard.svg_charts import mention_trend_svg

    trend = pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r2"],
            "run_name": ["week 1", "week 2", "week 2"],
            "started_at": [datetime(2026, 11, 1), datetime(2026, 11, 8), datetime(2026, 11, 8)],
            "domain": ["acme.example", "acme.example", "beta.example"],
            "responses": [10, 8, 4],
            "mention": ["url", "url", "url"],
            "percent": [20.0, 50.0, 100.0],
        }
    )
    root = ET.fromstring(mention_trend_svg(trend))
    dots = list(root.iter(f"{SVG}circle"))
    assert [d.find(f"{SVG}title").text for d in dots] == [  # type: ignore[union-attr]
        "week 1 (2026-11-01), acme.example: 20.0% of 10 responses mention URL",
        "week 2 (2026-11-08), acme.example: 50.0% of 8 responses mention URL",
        "week 2 (2026-11-08), beta.example: 100.0% of 4 responses mention URL",
    ]
    # acme's two runs are joined; beta's one run is a dot alone
    (line,) = root.iter(f"{SVG}polyline")
    assert line.get("points", "").count(",") == 2
    # the later run at the axis' right end, 100% at the plot's top
    first, second, third = ((float(d.get("cx", "")), float(d.get("cy", ""))) for d in dots)
    assert first[0] == LABEL_WIDTH and second[0] == third[0] == LABEL_WIDTH + PLOT
    assert third[1] < second[1] < first[1]
    assert "2026-11-01" in ET.tostring(root, encoding="unicode")


def test_attribution_draws_svg_not_vega(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "attribution")
    assert not at.get("vega_lite_chart") and not at.dataframe
    labels = [re.search(r'aria-label="([^"]+)"', m.value) for m in at.markdown]
    assert [m.group(1) for m in labels if m] == [
        "mention rates per domain and AI provider",
        "mention rates over runs per domain",
    ]
