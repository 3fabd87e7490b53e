"""Trends' chart as inline SVG, drawn on the server (``dashboard.svg_charts`` says why):
a metric's score over runs, one line per domain, over the run's tier bands, with the runs
whose judge changed marked and the steps beyond noise ringed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from dashboard.components.badges import TIER_COLORS, TIER_ORDER
from dashboard.components.safe import safe_markup
from dashboard.svg_charts import (
    AXIS_COLOR,
    INK,
    LABEL_WIDTH,
    PLOT,
    Scale,
    axis,
    colors_for,
    epoch,
    heading,
    legend,
    polyline,
    svg_document,
    time_scale,
    time_ticks,
)
from engine.models import TierThresholds

HEIGHT = 260.0
"""The plot's height."""

JUDGE_RULE = "#6a3d9a"
"""A run whose judge changed: a dashed rule in this colour."""

RING_COLORS = {"down": "#d73027", "up": "#1a9850"}
"""A step beyond noise: a ring, red when the score fell, green when it rose."""


def fitted_range(scores: pl.Series, *, fit: bool) -> tuple[float, float]:
    """The y axis: 0-100, or with ``fit`` the scores' span and a quarter of it (at least 4
    points) either side, within 0-100, so weekly moves of a few points stay visible."""
    values = scores.drop_nulls()
    if not fit or not len(values):
        return 0.0, 100.0
    low, high = float(values.min()), float(values.max())  # type: ignore[arg-type]
    spread = max(high - low, 4.0)
    return max(0.0, low - spread * 0.25), min(100.0, high + spread * 0.25)


def _bands(thresholds: TierThresholds, low: float, high: float) -> list[tuple[str, float, float]]:
    """Each tier's band, cut to ``low..high`` (bands outside it left out)."""
    edges = {
        "excellent": (thresholds.excellent, 100.0),
        "good": (thresholds.good, thresholds.excellent),
        "fair": (thresholds.fair, thresholds.good),
        "poor": (0.0, thresholds.fair),
    }
    out = []
    for tier in TIER_ORDER:
        bottom, top = max(edges[tier][0], low), min(edges[tier][1], high)
        if top > bottom:
            out.append((tier, bottom, top))
    return out


def _hover(row: Mapping[str, Any], domain: str) -> str:
    step = f"; change from previous run: {row['step_label']}" if row.get("step_label") else ""
    return safe_markup(
        f"{row['run_name']} ({row['started_at']:%Y-%m-%d %H:%M}), {row['status']}, "
        f"{row['samples']} samples, {domain}: {row['score']:.1f}{step}"
    )


def trend_svg(
    frame: pl.DataFrame,
    metric: str,
    thresholds: TierThresholds | None = None,
    title: str | None = None,
    *,
    fit: bool = True,
    events: pl.DataFrame | None = None,
) -> str:
    """Score over runs, one line per domain, over tier bands.

    ``frame``: run_id, run_name, started_at, status, domain, samples, metric, score
    (``queries.trends``), and optionally step, step_beyond, step_label
    (``noise_queries.trend_steps``): each point's hover names the run, its date, status and
    sample count and its change from the run before; a run that did not complete is a
    hollow point, a step beyond noise is ringed. ``events`` (started_at, run_name,
    old_judge, new_judge: ``judge_changes``) draws a dashed rule at each run whose judge
    changed, so a step there is not read as the system's alone."""
    data = frame.filter(pl.col("metric") == metric).sort("started_at")
    low, high = fitted_range(data["score"], fit=fit)
    scores = Scale(low, high)
    times = [epoch(t) for t in data["started_at"] if t is not None] or [0.0]
    if events is not None:
        times += [epoch(t) for t in events["started_at"] if t is not None]
    across = time_scale(times)
    top = 22.0

    def y(value: float) -> float:
        share = (min(high, max(low, value)) - low) / ((high - low) or 1.0)
        return top + HEIGHT * (1 - share)

    parts = [heading(0.0, f"{title or metric} (mean, 0-100)")]
    for tier, bottom, ceiling in _bands(thresholds or TierThresholds(), low, high):
        parts.append(
            f'<rect x="{LABEL_WIDTH}" y="{y(ceiling):.1f}" width="{PLOT}" '
            f'height="{y(bottom) - y(ceiling):.1f}" fill="{TIER_COLORS[tier]}" '
            f'fill-opacity="0.12"><title>{tier} band: {bottom:g}-{ceiling:g}</title></rect>'
        )
    for value, text in scores.ticks(least=0.5):
        parts.append(
            f'<line x1="{LABEL_WIDTH}" x2="{LABEL_WIDTH + PLOT}" y1="{y(value):.1f}" '
            f'y2="{y(value):.1f}" stroke="{AXIS_COLOR}" stroke-opacity="0.35"/>'
            f'<text x="{LABEL_WIDTH - 6}" y="{y(value) + 4:.1f}" text-anchor="end" '
            f'fill="{INK}">{text}</text>'
        )
    for event in [] if events is None else events.iter_rows(named=True):
        if event["started_at"] is None:
            continue
        x = across.x(epoch(event["started_at"]))
        hover = safe_markup(
            f"judge changed at {event['run_name']}: {event['old_judge']} → {event['new_judge']}"
        )
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + HEIGHT}" '
            f'stroke="{JUDGE_RULE}" stroke-width="2" stroke-dasharray="6 4">'
            f"<title>{hover}</title></line>"
        )
    domains = colors_for(data["domain"].unique(maintain_order=True).sort())
    rings: list[str] = []
    for (domain,), rows in data.partition_by("domain", as_dict=True, maintain_order=True).items():
        color = domains[str(domain)]
        points = [
            (across.x(epoch(r["started_at"])), y(float(r["score"])), r)
            for r in rows.iter_rows(named=True)
            if r["started_at"] is not None and r["score"] is not None
        ]
        parts.append(polyline([(px, py) for px, py, _ in points], color, 2))
        for px, py, r in points:
            fill = color if r["status"] == "completed" else "#ffffff"
            parts.append(
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{fill}" stroke="{color}" '
                f'stroke-width="1.5"><title>{_hover(r, str(domain))}</title></circle>'
            )
            if r.get("step_beyond"):
                ring = RING_COLORS["down" if (r.get("step") or 0) < 0 else "up"]
                rings.append(
                    f'<circle cx="{px:.1f}" cy="{py:.1f}" r="9" fill="none" stroke="{ring}" '
                    f'stroke-width="2.5"><title>{_hover(r, str(domain))}</title></circle>'
                )
    parts += rings  # over the lines, so a ring is never hidden by another domain's line
    parts += axis(
        top + HEIGHT + 2, across, time_ticks(min(times), max(times), "%b %d"), inside=True
    )
    key, bottom = legend(top + HEIGHT + 32, domains)
    return svg_document(bottom, f"{title or metric} over runs per domain", parts + key)
