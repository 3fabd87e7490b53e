"""The Overview's charts as inline SVG, drawn on the server.

A Vega-Lite chart costs the browser its chart library (loaded and compiled on the first
page that draws one: about 1.3 s of a first visit on a 2-core machine) before anything is
drawn. The Overview is the page everyone opens first, and its two charts are simple marks
on a 0-100 axis, so they are plain SVG: no script, sized by a viewBox to the column's
width, every label from data escaped, the exact values on hover (``<title>``). The HTML
report draws its bars the same way.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable

import polars as pl

from dashboard.components.badges import TIER_COLORS, TIER_ORDER

WIDTH = 640
"""The drawing's width in its own units; the browser scales it to the column."""

LABEL_WIDTH = 170
"""Room for the domain names at the left."""

ROW_HEIGHT = 22
"""One domain's row."""

LABEL_CHARS = 26
"""Longer domain names are cut (the whole name is on hover)."""

_PLOT = WIDTH - LABEL_WIDTH - 16
_AXIS = "#8c959f"
_INK = "#31333f"
_FONT = "font-family:'Source Sans Pro',system-ui,sans-serif;font-size:12px"


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _label(domain: object) -> str:
    text = str(domain)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _x(value: float) -> float:
    """A 0-100 value's position."""
    return LABEL_WIDTH + max(0.0, min(100.0, value)) / 100 * _PLOT


def _svg(height: float, label: str, body: Iterable[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'width="100%" style="max-width:{WIDTH}px;{_FONT}" role="img" '
        f'aria-label="{_e(label)}">' + "".join(body) + "</svg>"
    )


def _axis(y: float, ticks: Iterable[tuple[float, str]]) -> list[str]:
    """A horizontal axis at ``y`` with labelled ticks at 0-100 positions."""
    parts = [
        f'<line x1="{LABEL_WIDTH}" x2="{LABEL_WIDTH + _PLOT}" y1="{y}" y2="{y}" '
        f'stroke="{_AXIS}" stroke-width="1"/>'
    ]
    for value, text in ticks:
        x = _x(value)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y}" y2="{y + 4}" stroke="{_AXIS}"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{y + 16}" text-anchor="middle" fill="{_INK}">{text}</text>'
        )
    return parts


def _domain_label(y: float, domain: object) -> str:
    return (
        f'<text x="0" y="{y + 15}" fill="{_INK}"><title>{_e(domain)}</title>'
        f"{_e(_label(domain))}</text>"
    )


def distribution_svg(spread: pl.DataFrame, label: Callable[[str], str] = str) -> str:
    """Per metric (a block each) and domain (a row each): lowest to highest score as a line,
    the middle half as a box, the median as a tick, on 0-100. ``spread``: domain, metric,
    low, q1, median, q3, high (``queries.metric_distribution``); ``label`` names a metric."""
    parts: list[str] = []
    y = 0.0
    for (metric,), block in spread.partition_by(
        "metric", as_dict=True, maintain_order=True
    ).items():
        parts.append(
            f'<text x="0" y="{y + 14}" fill="{_INK}" font-weight="600">'
            f"{_e(label(str(metric)))}</text>"
        )
        y += 22
        for row in block.iter_rows(named=True):
            parts.append(_domain_label(y, row["domain"]))
            mid = y + ROW_HEIGHT / 2
            values = [row[k] for k in ("low", "q1", "median", "q3", "high")]
            if all(v is not None for v in values):
                low, q1, median, q3, high = (float(v) for v in values)
                hover = (
                    f"<title>{_e(row['domain'])}: lowest {low:.1f}, middle half {q1:.1f}-"
                    f"{q3:.1f}, median {median:.1f}, highest {high:.1f}</title>"
                )
                parts.append(
                    f'<g>{hover}<line x1="{_x(low):.1f}" x2="{_x(high):.1f}" y1="{mid}" '
                    f'y2="{mid}" stroke="{_AXIS}" stroke-width="1.5"/>'
                    f'<rect x="{_x(q1):.1f}" y="{mid - 6}" '
                    f'width="{max(_x(q3) - _x(q1), 1.0):.1f}" height="12" fill="#9ec5fe"/>'
                    f'<line x1="{_x(median):.1f}" x2="{_x(median):.1f}" y1="{mid - 7}" '
                    f'y2="{mid + 7}" stroke="#1f6feb" stroke-width="2.5"/></g>'
                )
            y += ROW_HEIGHT
        parts += _axis(y + 2, [(v, f"{v:g}") for v in (0, 25, 50, 75, 100)])
        y += 30
    return _svg(y, "score distribution per domain", parts)


def tier_mix_svg(mix: pl.DataFrame, label: Callable[[str], str] = str) -> str:
    """Per metric (a block each) and domain (a row each): the share of samples in each tier
    as one bar of 100%, excellent first, with a legend. ``mix``: domain, metric, tier,
    samples (``queries.tier_distribution``); ``label`` names a metric."""
    parts: list[str] = []
    y = 0.0
    for (metric,), block in mix.partition_by("metric", as_dict=True, maintain_order=True).items():
        parts.append(
            f'<text x="0" y="{y + 14}" fill="{_INK}" font-weight="600">'
            f"{_e(label(str(metric)))}</text>"
        )
        y += 22
        for (domain,), rows in block.partition_by(
            "domain", as_dict=True, maintain_order=True
        ).items():
            counts = {str(t): int(n) for t, n in rows.select("tier", "samples").iter_rows()}
            total = sum(counts.values())
            parts.append(_domain_label(y, domain))
            x = float(LABEL_WIDTH)
            for tier in TIER_ORDER:
                n = counts.get(tier, 0)
                if not n or not total:
                    continue
                width = n / total * _PLOT
                parts.append(
                    f'<rect x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="{ROW_HEIGHT - 8}" '
                    f'fill="{TIER_COLORS[tier]}"><title>{_e(domain)}: {n} of {total} samples '
                    f"{tier} ({n / total:.0%})</title></rect>"
                )
                x += width
            y += ROW_HEIGHT
        parts += _axis(y + 2, [(v, f"{v:g}%") for v in (0, 25, 50, 75, 100)])
        y += 30
    legend_x = float(LABEL_WIDTH)
    for tier in TIER_ORDER:
        parts.append(
            f'<rect x="{legend_x}" y="{y}" width="12" height="12" fill="{TIER_COLORS[tier]}"/>'
            f'<text x="{legend_x + 16}" y="{y + 11}" fill="{_INK}">{tier}</text>'
        )
        legend_x += 90
    return _svg(y + 18, "tier distribution per domain", parts)
