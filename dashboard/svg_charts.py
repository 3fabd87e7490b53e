"""The charts of the pages people open most (Overview, Compare, Attribution) as inline
SVG, drawn on the server.

A Vega-Lite chart costs the browser its chart library (loaded and compiled on the first
page that draws one: about 1.3 s of a first visit on a 2-core machine) and then its own
layout before anything is drawn. These charts are simple marks along one axis (and, for
Attribution's trend, dots joined over time), so they are plain SVG: no script, sized by a
viewBox to the column's width, every label from data escaped, the exact values on hover
(``<title>``). The HTML report draws its bars the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from dashboard.components.badges import TIER_COLORS, TIER_ORDER
from dashboard.components.safe import safe_markup

WIDTH = 640
"""The drawing's width in its own units; the browser scales it to the column."""

LABEL_WIDTH = 170
"""Room for the domain names at the left."""

ROW_HEIGHT = 22
"""One domain's row."""

LABEL_CHARS = 26
"""Longer domain names are cut (the whole name is on hover)."""

PLOT = WIDTH - LABEL_WIDTH - 16
"""The plot's width, after the labels and a margin for the last tick's text."""

CHANGE_COLORS = {"improved": "#1a9850", "unchanged": "#bdbdbd", "regressed": "#d73027"}
"""Compare's sample statuses, in the order their bars stack."""

AXIS_COLOR = "#8c959f"
"""Axes, ticks and rules."""

INK = "#31333f"
"""Labels."""

_FONT = "font-family:'Source Sans Pro',system-ui,sans-serif;font-size:12px"


@dataclass(frozen=True)
class Scale:
    """Values ``low..high`` along the plot; values outside are clamped to its ends."""

    low: float = 0.0
    high: float = 100.0

    def x(self, value: float) -> float:
        span = (self.high - self.low) or 1.0
        share = (min(self.high, max(self.low, value)) - self.low) / span
        return LABEL_WIDTH + share * PLOT

    def ticks(self, unit: str = "", *, least: float = 0.0) -> list[tuple[float, str]]:
        """About five round ticks from ``low`` to ``high``, at least ``least`` apart."""
        step = max(least, _round_step((self.high - self.low) / 4))
        first = math.ceil(self.low / step) * step
        count = int((self.high - first) / step + 1e-9) + 1
        return [(first + i * step, f"{first + i * step:g}{unit}") for i in range(count)]


def _round_step(raw: float) -> float:
    """1, 2, 2.5 or 5 times a power of ten, at least ``raw``."""
    if raw <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return float(next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-12))


_e = safe_markup
"""Data as SVG text."""


def _label(domain: object) -> str:
    text = str(domain)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


CHART_CLASS = "eh-chart"
"""The class of every chart's box."""


def svg_document(height: float, label: str, body: Iterable[str]) -> str:
    """A chart of ``height`` (``WIDTH`` wide, scaled to its column) from its parts, named
    ``label`` for screen readers, ready for ``st.markdown(..., unsafe_allow_html=True)``."""
    # In a <div>, Markdown takes the whole line as one HTML block; a bare <svg> would be
    # inline HTML in a paragraph, and Markdown would read the text between its tags (a
    # domain named **x** drawn bold, outside its <text>).
    return (
        f'<div class="{CHART_CLASS}"><svg xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" width="100%" style="max-width:{WIDTH}px;{_FONT}" '
        f'role="img" aria-label="{_e(label)}">' + "".join(body) + "</svg></div>"
    )


def axis(
    y: float, scale: Scale, ticks: Iterable[tuple[float, str]], *, inside: bool = False
) -> list[str]:
    """A horizontal axis at ``y`` with labelled ticks; ``inside``: the first and last
    labels end at the axis' ends (dates are wider than the margin past the last tick)."""
    parts = [
        f'<line x1="{LABEL_WIDTH}" x2="{LABEL_WIDTH + PLOT}" y1="{y}" y2="{y}" '
        f'stroke="{AXIS_COLOR}" stroke-width="1"/>'
    ]
    marks = list(ticks)
    for i, (value, text) in enumerate(marks):
        x = scale.x(value)
        anchor = "middle"
        if inside and len(marks) > 1:
            anchor = "start" if i == 0 else "end" if i == len(marks) - 1 else "middle"
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y}" y2="{y + 4}" stroke="{AXIS_COLOR}"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{y + 16}" text-anchor="{anchor}" fill="{INK}">{text}</text>'
        )
    return parts


def _row_label(y: float, domain: object) -> str:
    # The whole name on hover only where it is cut: a title per row was a tenth of a long
    # chart's elements, each one more for the browser to build.
    shown = _label(domain)
    hover = "" if shown == str(domain) else f"<title>{_e(domain)}</title>"
    return f'<text x="0" y="{y + 15}" fill="{INK}">{hover}{_e(shown)}</text>'


def heading(y: float, text: str) -> str:
    """A bold line of text at ``y`` (a block's title; escaped)."""
    return f'<text x="0" y="{y + 14}" fill="{INK}" font-weight="600">{_e(text)}</text>'


def _box(y: float, scale: Scale, name: object, five: Sequence[float], unit: str) -> str:
    """Lowest to highest as a line, the middle half as a box, the median as a tick."""
    low, q1, median, q3, high = five
    mid = y + ROW_HEIGHT / 2
    hover = (
        f"<title>{_e(name)}: lowest {low:.1f}{unit}, middle half {q1:.1f}-{q3:.1f}{unit}, "
        f"median {median:.1f}{unit}, highest {high:.1f}{unit}</title>"
    )
    return (
        f'<g>{hover}<line x1="{scale.x(low):.1f}" x2="{scale.x(high):.1f}" y1="{mid}" '
        f'y2="{mid}" stroke="{AXIS_COLOR}" stroke-width="1.5"/>'
        f'<rect x="{scale.x(q1):.1f}" y="{mid - 6}" '
        f'width="{max(scale.x(q3) - scale.x(q1), 1.0):.1f}" height="12" fill="#9ec5fe"/>'
        f'<line x1="{scale.x(median):.1f}" x2="{scale.x(median):.1f}" y1="{mid - 7}" '
        f'y2="{mid + 7}" stroke="#1f6feb" stroke-width="2.5"/></g>'
    )


FIVE = ("low", "q1", "median", "q3", "high")
"""The five numbers of a box, by their column names in ``queries.metric_distribution``."""


def distribution_svg(spread: pl.DataFrame, label: Callable[[str], str] = str) -> str:
    """Per metric (a block each, headed by ``label(metric)``) and domain (a row each): the
    box of its scores on 0-100. ``spread``: domain, metric, low, q1, median, q3, high
    (``queries.metric_distribution``)."""
    scale = Scale()
    parts: list[str] = []
    y = 0.0
    blocks = spread.partition_by("metric", as_dict=True, maintain_order=True)
    for (metric,), block in blocks.items():
        parts.append(heading(y, label(str(metric))))
        y += 22
        for row in block.iter_rows(named=True):
            parts.append(_row_label(y, row["domain"]))
            five = [row[k] for k in FIVE]
            if all(v is not None for v in five):
                parts.append(_box(y, scale, row["domain"], [float(v) for v in five], ""))
            y += ROW_HEIGHT
        parts += axis(y + 2, scale, scale.ticks())
        y += 30
    return svg_document(y, "score distribution per domain", parts)


def change_box_svg(counts: pl.DataFrame, columns: Sequence[str], title: str) -> str:
    """One row per domain: the box of the per-sample changes (``columns``: lowest, first
    quartile, median, third quartile, highest), on an axis through zero with a rule at 0."""
    rows = [r for r in counts.iter_rows(named=True) if all(r[c] is not None for c in columns)]
    values = [float(r[c]) for r in rows for c in columns] or [0.0]
    reach = max(1.0, max(abs(v) for v in values))
    step = _round_step(reach / 2)
    scale = Scale(-math.ceil(reach / step) * step, math.ceil(reach / step) * step)
    parts = [heading(0.0, title)]
    y = 22.0
    top = y
    for row in rows:
        parts.append(_row_label(y, row["domain"]))
        parts.append(_box(y, scale, row["domain"], [float(row[c]) for c in columns], " pts"))
        y += ROW_HEIGHT
    zero = scale.x(0.0)
    parts.append(
        f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="{top}" y2="{y}" stroke="{AXIS_COLOR}" '
        'stroke-dasharray="3 3"/>'
    )
    parts += axis(y + 2, scale, [(v, f"{v:+g}" if v else "0") for v, _ in scale.ticks()])
    return svg_document(y + 30, title, parts)


def _stacked_row(
    y: float,
    scale: Scale,
    name: object,
    counts: Mapping[str, int],
    colors: Mapping[str, str],
    what: str,
) -> list[str]:
    """One bar per category in ``colors``' order, end to end from the axis' start."""
    total = sum(counts.values())
    parts = [_row_label(y, name)]
    start = 0.0
    for category, color in colors.items():
        n = counts.get(category, 0)
        if not n:
            continue
        left, right = scale.x(start), scale.x(start + n)
        share = f" ({n / total:.0%})" if total else ""
        parts.append(
            f'<rect x="{left:.1f}" y="{y + 4}" width="{right - left:.1f}" '
            f'height="{ROW_HEIGHT - 8}" fill="{color}"><title>{_e(name)}: {n} of {total} '
            f"{what} {category}{share}</title></rect>"
        )
        start += n
    return parts


def legend(y: float, colors: Mapping[str, str]) -> tuple[list[str], float]:
    """Swatches in rows from the plot's left edge, from ``y``: the parts, and the y below
    them."""
    parts = []
    x = float(LABEL_WIDTH)
    for category, color in colors.items():
        width = 90 if len(str(category)) <= 10 else 170
        if x + width > WIDTH and x > LABEL_WIDTH:
            x, y = float(LABEL_WIDTH), y + 18
        parts.append(
            f'<rect x="{x}" y="{y}" width="12" height="12" fill="{color}"/>'
            f'<text x="{x + 16}" y="{y + 11}" fill="{INK}">{_e(_label(category))}</text>'
        )
        x += width
    return parts, y + 18


def tier_mix_svg(mix: pl.DataFrame, label: Callable[[str], str] = str) -> str:
    """Per metric (a block each, headed by ``label(metric)``) and domain (a row each): the
    share of samples in each tier as one bar of 100%, excellent first, with a legend.
    ``mix``: domain, metric, tier, samples (``queries.tier_distribution``)."""
    colors = {t: TIER_COLORS[t] for t in TIER_ORDER}
    parts: list[str] = []
    y = 0.0
    for (metric,), block in mix.partition_by("metric", as_dict=True, maintain_order=True).items():
        parts.append(heading(y, label(str(metric))))
        y += 22
        for (domain,), rows in block.partition_by(
            "domain", as_dict=True, maintain_order=True
        ).items():
            counts = {str(t): int(n) for t, n in rows.select("tier", "samples").iter_rows()}
            # each domain's bar is its own 100%
            scale = Scale(0.0, float(sum(counts.values())) or 1.0)
            parts += _stacked_row(y, scale, domain, counts, colors, "samples")
            y += ROW_HEIGHT
        parts += axis(y + 2, Scale(), Scale().ticks("%"))
        y += 30
    key, bottom = legend(y, colors)
    return svg_document(bottom, "tier distribution per domain", parts + key)


def compare_counts_svg(counts: pl.DataFrame) -> str:
    """Per domain: its paired samples improved, unchanged and regressed, as one bar of
    counts (``queries.compare_counts``), longest domain to scale, with a legend."""
    totals = [sum(int(r[c] or 0) for c in CHANGE_COLORS) for r in counts.iter_rows(named=True)] or [
        1
    ]
    step = max(1.0, _round_step(max(totals) / 4))  # whole samples
    scale = Scale(0.0, math.ceil(max(totals) / step) * step)
    parts: list[str] = []
    y = 0.0
    for row in counts.iter_rows(named=True):
        by_status = {c: int(row[c] or 0) for c in CHANGE_COLORS}
        parts += _stacked_row(y, scale, row["domain"], by_status, CHANGE_COLORS, "samples")
        y += ROW_HEIGHT
    parts += axis(y + 2, scale, scale.ticks(least=1.0))
    y += 30
    key, bottom = legend(y, CHANGE_COLORS)
    return svg_document(bottom, "samples improved, unchanged and regressed per domain", parts + key)


PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
"""Colours of categories from data (AI providers, domains), in order; repeated past ten."""

MENTIONS = {"url": "URL", "domain": "domain", "brand": "brand"}
"""Attribution's mention types, by their name in ``queries.attribution_trend``."""


def colors_for(names: Iterable[object]) -> dict[str, str]:
    """``PALETTE``'s colours for ``names``, in order."""
    return {str(n): PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def mention_rates_svg(rates: pl.DataFrame) -> str:
    """Per mention type (a block each) and domain (a row each): one bar per AI provider,
    the share of its scored responses with such a mention (``queries.attribution_rates``).
    """
    providers = colors_for(rates["ai_provider"].unique(maintain_order=True).sort())
    scale = Scale()
    bar = 7
    parts: list[str] = []
    y = 0.0
    for mention, title in MENTIONS.items():
        parts.append(heading(y, f"mentions {title}"))
        y += 22
        for (domain,), rows in rates.partition_by(
            "domain", as_dict=True, maintain_order=True
        ).items():
            parts.append(_row_label(y + (len(rows) * bar - ROW_HEIGHT) / 2 + 2, domain))
            for i, row in enumerate(rows.iter_rows(named=True)):
                share = row[f"{mention}_percent"]
                if share is None:
                    continue
                top = y + 2 + i * bar
                parts.append(
                    f'<rect x="{LABEL_WIDTH}" y="{top:.1f}" '
                    f'width="{scale.x(float(share)) - LABEL_WIDTH:.1f}" height="{bar - 1}" '
                    f'fill="{providers[str(row["ai_provider"])]}"><title>{_e(domain)}, '
                    f"{_e(row['ai_provider'])}: {float(share):.1f}% of {row['responses']} "
                    f"responses mention {title}</title></rect>"
                )
            y += max(ROW_HEIGHT, len(rows) * bar + 4)
        parts += axis(y + 2, scale, scale.ticks("%"))
        y += 30
    key, bottom = legend(y, providers)
    return svg_document(bottom, "mention rates per domain and AI provider", parts + key)


def polyline(points: Sequence[tuple[float, float]], color: str, width: float) -> str:
    """A line through ``points`` (none for fewer than two)."""
    if len(points) < 2:
        return ""
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="{width:g}"/>'


def epoch(moment: datetime) -> float:
    """POSIX seconds of a warehouse timestamp (naive ones are UTC, as the warehouse keeps
    them), whatever the server's own time zone."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def time_scale(times: Sequence[float]) -> Scale:
    """The axis of ``times`` (POSIX seconds), first to last; a lone moment at its end."""
    low, high = min(times, default=0.0), max(times, default=0.0)
    return Scale(low, high) if high > low else Scale(low - 1.0, low)


def time_ticks(low: float, high: float, fmt: str = "%Y-%m-%d") -> list[tuple[float, str]]:
    """About five dates from ``low`` to ``high`` (POSIX seconds), written with ``fmt``."""
    count = 1 if high <= low else 5
    step = (high - low) / max(count - 1, 1)
    return [
        (low + i * step, datetime.fromtimestamp(low + i * step, UTC).strftime(fmt))
        for i in range(count)
    ]


def mention_trend_svg(trend: pl.DataFrame) -> str:
    """Per mention type (a block each): each domain's share of responses with such a
    mention over its runs, a line through a dot per run (``queries.attribution_trend``; the
    run, its date and count on hover)."""
    domains = colors_for(trend["domain"].unique(maintain_order=True).sort())
    times = [epoch(t) for t in trend["started_at"] if t is not None] or [0.0]
    across = time_scale(times)
    height = 120.0
    parts: list[str] = []
    y = 0.0
    for mention, title in MENTIONS.items():
        block = trend.filter(pl.col("mention") == mention).sort("started_at")
        parts.append(heading(y, f"mentions {title}"))
        y += 22
        for share in (0, 50, 100):
            level = y + height * (1 - share / 100)
            parts.append(
                f'<line x1="{LABEL_WIDTH}" x2="{LABEL_WIDTH + PLOT}" y1="{level:.1f}" '
                f'y2="{level:.1f}" stroke="{AXIS_COLOR}" stroke-dasharray="2 3"/>'
                f'<text x="{LABEL_WIDTH - 6}" y="{level + 4:.1f}" text-anchor="end" '
                f'fill="{INK}">{share}%</text>'
            )
        for (domain,), rows in block.partition_by(
            "domain", as_dict=True, maintain_order=True
        ).items():
            color = domains[str(domain)]
            points = [
                (across.x(epoch(r["started_at"])), y + height * (1 - r["percent"] / 100), r)
                for r in rows.iter_rows(named=True)
                if r["started_at"] is not None and r["percent"] is not None
            ]
            parts.append(polyline([(px, py) for px, py, _ in points], color, 1.5))
            parts += [
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{color}"><title>'
                f"{_e(r['run_name'])} ({r['started_at']:%Y-%m-%d}), {_e(domain)}: "
                f"{r['percent']:.1f}% of {r['responses']} responses mention {title}"
                "</title></circle>"
                for px, py, r in points
            ]
        y += height
        parts += axis(y + 2, across, time_ticks(min(times), max(times)), inside=True)
        y += 30
    key, bottom = legend(y, domains)
    return svg_document(bottom, "mention rates over runs per domain", parts + key)
